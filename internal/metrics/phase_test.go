package metrics

import (
	"reflect"
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// setAll gives every settable field of v a non-zero value.
func setAll(t *testing.T, v reflect.Value) {
	t.Helper()
	switch v.Kind() {
	case reflect.Uint64, reflect.Uint16:
		v.SetUint(1)
	case reflect.Int64, reflect.Int:
		v.SetInt(1)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.String:
		v.SetString("x")
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Struct && v.Len() > 0 {
			for i := range v.Len() { // a recorder's targets (EnableTargets)
				setAll(t, v.Index(i))
			}
			return
		}
		v.Set(reflect.Append(reflect.MakeSlice(v.Type(), 0, 1), reflect.ValueOf("x")))
	case reflect.Array:
		for i := range v.Len() {
			setAll(t, v.Index(i))
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				setAll(t, v.Field(i))
			}
		}
	case reflect.Pointer:
		h, ok := v.Interface().(*hdrhistogram.Histogram)
		if !ok {
			t.Fatalf("no value for %s", v.Type())
		}
		h.RecordValue(5)
	default:
		t.Fatalf("no value for %s", v.Type())
	}
}

// TestMergeCarriesEveryField: every field a worker records reaches the
// merged phase, and a phase added to an empty one is itself again.
func TestMergeCarriesEveryField(t *testing.T) {
	r := NewRecorder(&Live{})
	r.EnableRate()
	r.EnableTargets(1)
	setAll(t, reflect.ValueOf(r).Elem())
	p := NewPhase()
	p.Merge(r)
	pv := reflect.ValueOf(p).Elem()
	for i := range pv.NumField() {
		f, name := pv.Field(i), pv.Type().Field(i).Name
		if name == "Timeline" || name == "Scatter" || name == "TLSProbes" { // only from a recorder's StartTimeline (TestScatter*); the engine's, after the merge
			continue
		}
		if h, ok := f.Interface().(*hdrhistogram.Histogram); ok {
			if h == nil || h.TotalCount() != 1 {
				t.Errorf("Phase.%s: histogram not merged", name)
			}
			continue
		}
		if f.IsZero() {
			t.Errorf("Phase.%s is zero after Merge of a recorder with every field set", name)
		}
	}
	var sum Counts
	sum.Succeeded, sum.Failed = 1, r.Failed
	if sum.Attempted = 1 + sum.FailedTotal(); p.Counts != sum {
		t.Errorf("counts %+v, want %+v", p.Counts, sum)
	}
	p.TLSProbes = 1 // Add carries it
	q := NewPhase()
	q.Add(p)
	a, errA := p.MarshalJSON()
	b, errB := q.MarshalJSON()
	if errA != nil || errB != nil || string(a) != string(b) {
		t.Errorf("Add into an empty phase changed it:\n%s\n%s (%v %v)", a, b, errA, errB)
	}
}
