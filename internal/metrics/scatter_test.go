package metrics

import (
	"math"
	"testing"
)

// The reservoir keeps the first MaxScatter responses, then a uniform
// sample of all of them: over 100,000 responses whose latency is their
// order, the kept ones' mean order lies near the middle (a uniform
// sample of 2,000: standard error ≈ 100,000/√12/√2,000 ≈ 645) and they
// reach both ends; each point keeps its arrival after the phase's start.
func TestScatterReservoirUniform(t *testing.T) {
	r := NewRecorder(&Live{})
	const n = 100_000
	r.StartTimeline(5e9, 10e9, 1e9)
	for i := range n {
		r.Sampled(5e9+int64(i)*1000, int64(i)*1000) // arrives i µs after the start, taking i µs
	}
	var p Phase
	p.Merge(r)
	s := p.Scatter
	if s.Seen != n || len(s.Points) != MaxScatter {
		t.Fatalf("seen %d, kept %d; want %d, %d", s.Seen, len(s.Points), n, MaxScatter)
	}
	sum, lo, hi := 0.0, uint32(math.MaxUint32), uint32(0)
	for _, pt := range s.Points {
		if pt.AtUs != pt.LatUs {
			t.Fatalf("point %+v: arrival and latency were recorded together", pt)
		}
		sum += float64(pt.LatUs)
		lo, hi = min(lo, pt.LatUs), max(hi, pt.LatUs)
	}
	if mean := sum / MaxScatter; math.Abs(mean-n/2) > 4*645 {
		t.Errorf("mean order %.0f, want %d ± %d", mean, n/2, 4*645)
	}
	if lo > n/20 || hi < n-n/20 {
		t.Errorf("kept orders %d…%d, want both ends of 0…%d", lo, hi, n)
	}
}

// Fewer responses than MaxScatter are all kept; none is kept before a
// phase starts, nor after the recorder's Reset until the next start.
func TestScatterBeforeAndAfterAPhase(t *testing.T) {
	r := NewRecorder(&Live{})
	r.Sampled(1e6, 1e6) // no phase yet
	r.StartTimeline(0, 1e9, 1e9)
	for i := range 10 {
		r.Sampled(int64(i)*1e6, 2e6)
	}
	var p Phase
	p.Merge(r)
	if p.Scatter.Seen != 10 || len(p.Scatter.Points) != 10 || p.Scatter.Points[3] != (ScatterPoint{AtUs: 3000, LatUs: 2000}) {
		t.Fatalf("scatter %+v, want the 10 responses of the phase", p.Scatter)
	}
	r.Reset()
	r.Sampled(1e6, 1e6)
	var q Phase
	q.Merge(r)
	if q.Scatter.Seen != 0 || len(q.Scatter.Points) != 0 {
		t.Fatalf("after Reset: %+v, want nothing until the next phase starts", q.Scatter)
	}
}

// A phase's merge keeps MaxScatter points, each worker's share in
// proportion to the responses it saw; a worker with few responses gives
// all of them and the other fills in.
func TestScatterMergeShares(t *testing.T) {
	worker := func(n int, lat int64) *Recorder {
		r := NewRecorder(&Live{})
		r.StartTimeline(0, 1e9, 1e9)
		for i := range n {
			r.Sampled(int64(i), lat)
		}
		return r
	}
	count := func(s Scatter, lat uint32) (n int) {
		for _, p := range s.Points {
			if p.LatUs == lat {
				n++
			}
		}
		return n
	}
	p := NewPhase()
	p.Merge(worker(30_000, 1e6))
	p.Merge(worker(10_000, 2e6))
	if len(p.Scatter.Points) != MaxScatter || p.Scatter.Seen != 40_000 || count(p.Scatter, 1000) != 1500 || count(p.Scatter, 2000) != 500 {
		t.Fatalf("kept %d (%d and %d) of %d, want 2000: 1500 and 500", len(p.Scatter.Points), count(p.Scatter, 1000), count(p.Scatter, 2000), p.Scatter.Seen)
	}
	// A merge of load boxes (Add) keeps the one box's sample that has
	// one: a shard's report carries none.
	boxes := NewPhase()
	boxes.Add(NewPhase())
	boxes.Add(p)
	if len(boxes.Scatter.Points) != MaxScatter || boxes.Scatter.Seen != 40_000 {
		t.Fatalf("Add kept %d of %d, want the box's 2000 of 40000", len(boxes.Scatter.Points), boxes.Scatter.Seen)
	}
	var q Phase
	q.Merge(worker(100, 1e6))
	q.Merge(worker(100_000, 2e6))
	if len(q.Scatter.Points) != MaxScatter || count(q.Scatter, 1000) != 1 && count(q.Scatter, 1000) != 2 {
		t.Fatalf("kept %d (%d of the small worker's), want 2000 with its share of 1 or 2", len(q.Scatter.Points), count(q.Scatter, 1000))
	}
}

// Sampling a response allocates nothing once the phase has started.
func TestScatterNoAllocs(t *testing.T) {
	r := NewRecorder(&Live{})
	r.StartTimeline(0, 1e9, 1e9)
	i := int64(0)
	if a := testing.AllocsPerRun(10_000, func() { i++; r.Sampled(i, i) }); a != 0 {
		t.Fatalf("%v allocations per sampled response, want 0", a)
	}
}

func BenchmarkScatterSampled(b *testing.B) {
	r := NewRecorder(&Live{})
	r.StartTimeline(0, 1e9, 1e9)
	b.ReportAllocs()
	for i := range b.N {
		r.Sampled(int64(i), int64(i))
	}
}
