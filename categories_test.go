package brk

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/brk-bench/brk/internal/metrics"
)

// countsJSONFailures lists Counts' JSON field names after attempted and
// succeeded: the failure fields, in declaration order.
func countsJSONFailures(t *testing.T) []string {
	t.Helper()
	typ := reflect.TypeOf(Counts{})
	var names []string
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		names = append(names, name)
	}
	if len(names) < 2 || names[0] != "attempted" || names[1] != "succeeded" {
		t.Fatalf("Counts JSON fields %v: want attempted, succeeded, then the failures", names)
	}
	return names[2:]
}

// TestFailureCategories: the list is metrics' categories in order, it is
// exactly Counts' failure fields in JSON order, and Failure reads each
// category's own field.
func TestFailureCategories(t *testing.T) {
	got := FailureCategories()
	if len(got) != int(metrics.NumCategories) {
		t.Fatalf("%d categories, want %d: %v", len(got), metrics.NumCategories, got)
	}
	for i, c := range metrics.Categories() {
		if got[i] != c.String() {
			t.Errorf("category %d is %q, metrics names it %q", i, got[i], c)
		}
	}
	if fields := countsJSONFailures(t); !slices.Equal(fields, got) {
		t.Errorf("Counts' failure fields in JSON are %v, the categories %v", fields, got)
	}
	typ := reflect.TypeOf(Counts{})
	for i, name := range got {
		var c Counts
		reflect.ValueOf(&c).Elem().Field(2 + i).SetUint(uint64(100 + i))
		for j, other := range got {
			want := uint64(0)
			if j == i {
				want = uint64(100 + i)
			}
			if v := c.Failure(other); v != want {
				t.Errorf("with %s = %d, Failure(%q) = %d, want %d", typ.Field(2+i).Name, 100+i, other, v, want)
			}
		}
		var s Counts
		s.setFailures(func(cat metrics.Category) uint64 { return uint64(cat) + 1 })
		if v := s.Failure(name); v != uint64(i)+1 {
			t.Errorf("setFailures: Failure(%q) = %d, want %d", name, v, i+1)
		}
	}
	if v := (Counts{Attempted: 5, Succeeded: 5}).Failure("attempted"); v != 0 {
		t.Errorf("Failure(\"attempted\") = %d, want 0: not a failure category", v)
	}
}
