package metrics

// A phase's latency scatter: a uniform sample of its complete responses,
// each with when it arrived and how long it took, for a latency-over-time
// plot (vegeta plot's picture). Each worker keeps a reservoir of at most
// MaxScatter responses (Vitter's algorithm R, from a xorshift generator
// in the recorder: no allocation after the first phase); a phase's merge
// keeps at most MaxScatter of all its workers' samples, each worker's
// share in proportion to the responses it saw.

// MaxScatter is the most sampled responses a phase keeps.
const MaxScatter = 2000

// ScatterPoint is one sampled response: AtUs after its phase's start
// (the timeline's start), taking LatUs.
type ScatterPoint struct {
	AtUs, LatUs uint32
}

// Scatter is a sample of a phase's complete responses: Points drawn
// uniformly from the Seen responses.
type Scatter struct {
	Points []ScatterPoint
	Seen   uint64
}

// reservoir is one worker's sample of the current phase.
type reservoir struct {
	points  []ScatterPoint // capacity MaxScatter, allocated once
	seen    uint64
	startNs int64
	rng     uint64
	on      bool // a phase started (start), until the recorder's Reset
}

// start begins a phase at startNs, keeping the buffer.
func (s *reservoir) start(startNs int64) {
	if s.points == nil {
		s.points = make([]ScatterPoint, 0, MaxScatter)
	}
	if s.rng == 0 {
		s.rng = 0x9e3779b97f4a7c15
	}
	s.points, s.seen, s.startNs, s.on = s.points[:0], 0, startNs, true
}

// add offers a response that completed at nowNs after latencyNs: the
// first MaxScatter are kept, the n-th after them replaces a kept one with
// probability MaxScatter/n.
func (s *reservoir) add(nowNs, latencyNs int64) {
	if !s.on {
		return // no phase started
	}
	s.seen++
	p := ScatterPoint{AtUs: clampUs(nowNs - s.startNs), LatUs: clampUs(latencyNs)}
	if len(s.points) < MaxScatter {
		s.points = append(s.points, p)
		return
	}
	// xorshift64: a uniform index in [0, seen).
	x := s.rng
	x ^= x << 13
	x ^= x >> 7
	x ^= x << 17
	s.rng = x
	if j := x % s.seen; j < MaxScatter {
		s.points[j] = p
	}
}

// clampUs is ns in µs, within a uint32 (71 minutes).
func clampUs(ns int64) uint32 {
	return uint32(min(max(ns/1000, 0), 1<<32-1))
}

// add merges q's sample into s: the merged sample keeps at most
// MaxScatter points, each side's share in proportion to its Seen, taken
// evenly through its points (each side's points are already a uniform
// sample of its responses).
func (s *Scatter) add(points []ScatterPoint, seen uint64) {
	total := s.Seen + seen
	if total == 0 {
		return
	}
	keep := min(MaxScatter, len(s.Points)+len(points))
	fromNew := min(len(points), int(uint64(keep)*seen/total))
	fromOld := min(len(s.Points), keep-fromNew)
	fromNew = min(len(points), keep-fromOld) // the old side short: the new fills in
	merged := make([]ScatterPoint, 0, fromOld+fromNew)
	merged = appendEvenly(merged, s.Points, fromOld)
	merged = appendEvenly(merged, points, fromNew)
	s.Points, s.Seen = merged, total
}

// appendEvenly appends n of ps, evenly spaced through it.
func appendEvenly(dst, ps []ScatterPoint, n int) []ScatterPoint {
	for i := range n {
		dst = append(dst, ps[i*len(ps)/n])
	}
	return dst
}
