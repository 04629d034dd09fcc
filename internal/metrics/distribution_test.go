package metrics

import "testing"

// A distribution has DistributionTicks percentiles per half distance from
// p0 to p99.999 (at least 100), ascending; each value is the histogram's
// own reading at that percentile and each count the values through it.
func TestDistribution(t *testing.T) {
	ps := DistributionPercentiles()
	if len(ps) < 100 || ps[0] != 0 || ps[len(ps)-1] != DistributionTop {
		t.Fatalf("%d percentiles from %v to %v, want at least 100 from 0 to %v", len(ps), ps[0], ps[len(ps)-1], DistributionTop)
	}
	for i, want := range map[int]float64{1: 5, 10: 50, 11: 52.5, 20: 75, 21: 76.25} {
		if ps[i] != want {
			t.Errorf("percentile %d: %v, want %v", i, ps[i], want)
		}
	}
	for i := 1; i < len(ps); i++ {
		if !(ps[i] > ps[i-1]) {
			t.Fatalf("percentiles not ascending at %d: %v, %v", i, ps[i-1], ps[i])
		}
	}
	if d := Distribution(NewHistogram()); d != nil {
		t.Errorf("empty histogram: %d points", len(d))
	}
	h := NewHistogram()
	for v := int64(1); v <= 10000; v++ {
		h.RecordValue(v * 10) // 10 µs .. 100 ms
	}
	d := Distribution(h)
	if len(d) != len(ps) {
		t.Fatalf("%d points, want %d", len(d), len(ps))
	}
	for i, p := range d {
		if p.Percentile != ps[i] || p.ValueUs != h.ValueAtPercentile(ps[i]) {
			t.Errorf("point %d: %+v, want percentile %v value %d", i, p, ps[i], h.ValueAtPercentile(ps[i]))
		}
		if i > 0 && (p.ValueUs < d[i-1].ValueUs || p.Count < d[i-1].Count) {
			t.Errorf("point %d goes down: %+v after %+v", i, p, d[i-1])
		}
		// The count through the value's bucket is within one bucket of the
		// percentile's rank (3 significant digits: 0.1 % of the value).
		want := p.Percentile / 100 * 10000
		if got := float64(p.Count); got < want-1 || got > want+float64(p.ValueUs)/10*0.002+1 {
			t.Errorf("point %d: count %d at p%v, want about %.0f", i, p.Count, p.Percentile, want)
		}
	}
	if last := d[len(d)-1]; last.Count > 10000 {
		t.Errorf("last count %d above the total", last.Count)
	}
}
