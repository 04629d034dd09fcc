package brk

import "testing"

func phase(i, level int, ok, p99 float64, accepted bool) *PhaseStats {
	return &PhaseStats{Index: i, Level: level, RequestsPerSec: ok, LatencyMs: Latency{P99: p99}, Accepted: accepted}
}

// The peak, one row per branch.
func TestPeaks(t *testing.T) {
	for _, c := range []struct {
		name           string
		phases         []*PhaseStats
		peak, accepted int // phase index; -1: none
	}{
		{"no phase", nil, -1, -1},
		{"no responses", []*PhaseStats{phase(0, 8, 0, 0, false)}, -1, -1},
		{"an accepted phase is the peak: no second", []*PhaseStats{phase(0, 8, 100, 1, true), phase(1, 16, 190, 2, true), phase(2, 32, 150, 90, false)}, 1, -1},
		{"a rejected phase is the peak: the accepted one beside it", []*PhaseStats{phase(0, 8, 100, 1, true), phase(1, 16, 190, 2, true), phase(2, 32, 250, 90, false)}, 2, 1},
		{"none accepted", []*PhaseStats{phase(0, 8, 100, 90, false), phase(1, 4, 60, 80, false)}, 0, -1},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, a := peaks(c.phases)
			if idx(p) != c.peak || idx(a) != c.accepted {
				t.Fatalf("peak %v, accepted %v; want phases %d and %d", p, a, c.peak, c.accepted)
			}
		})
	}
}

// bound is phase's, marked client_bound: the client could not drive it.
func bound(i, level int, ok, p99 float64) *PhaseStats {
	p := phase(i, level, ok, p99, false)
	p.ClientBound = true
	return p
}

func idx(p *Peak) int {
	if p == nil {
		return -1
	}
	return p.Phase
}

// The knee, one row per branch.
func TestKnee(t *testing.T) {
	for _, c := range []struct {
		name   string
		phases []*PhaseStats
		level  int // 0: none
		next   int
	}{
		{"saturated at 16: ×2 to 32 adds 2 %, p99 doubles", []*PhaseStats{
			phase(0, 8, 100, 10, true), phase(1, 16, 190, 11, true), phase(2, 32, 194, 22, true), phase(3, 64, 195, 45, false)}, 16, 32},
		{"throughput still rising: no knee", []*PhaseStats{
			phase(0, 8, 100, 10, true), phase(1, 16, 190, 11, true), phase(2, 32, 370, 12, true)}, 0, 0},
		{"flat throughput but the p99 steady (a client limit, not a queue): no knee", []*PhaseStats{
			phase(0, 8, 100, 10, true), phase(1, 16, 101, 12, true)}, 0, 0},
		{"the step past it must be about ×2 (at most ×3)", []*PhaseStats{
			phase(0, 8, 100, 10, true), phase(1, 32, 101, 40, true)}, 0, 0},
		{"bisection levels between: the lowest at 2× or more is the step", []*PhaseStats{
			phase(0, 8, 100, 10, true), phase(1, 16, 190, 11, true), phase(2, 32, 194, 22, false), phase(3, 24, 192, 16, true), phase(4, 20, 191, 13, true)}, 16, 32},
		{"a level run twice counts with its mean", []*PhaseStats{
			phase(0, 8, 80, 10, true), phase(1, 16, 100, 20, true), phase(2, 8, 120, 10, true)}, 8, 16},
		{"interrupted and silent phases are left out", []*PhaseStats{
			phase(0, 8, 100, 10, true), {Index: 1, Level: 16, RequestsPerSec: 101, LatencyMs: Latency{P99: 30}, Interrupted: true}, phase(2, 16, 0, 0, false)}, 0, 0},
		// A knee is a claim about the server: a step with a client-bound end is no evidence for it.
		{"a clean knee below a client-bound level is still found", []*PhaseStats{
			phase(0, 8, 100, 10, true), phase(1, 16, 190, 11, true), phase(2, 32, 194, 22, true), bound(3, 64, 150, 90)}, 16, 32},
		{"the step's upper phase client-bound (the client's limit, not the server's): no knee", []*PhaseStats{
			phase(0, 8, 100, 10, true), phase(1, 16, 190, 11, true), bound(2, 32, 194, 22)}, 0, 0},
		{"its lower phase client-bound: no knee", []*PhaseStats{
			phase(0, 4, 60, 5, true), bound(1, 8, 100, 10), phase(2, 16, 101, 20, true)}, 0, 0},
		{"a client-bound run beside a clean one at its level: the clean run is the level's", []*PhaseStats{
			phase(0, 8, 100, 10, true), phase(1, 16, 190, 11, true), bound(2, 16, 10, 40), phase(3, 32, 194, 22, true)}, 16, 32},
		{"a level left with no run: the step goes to the next level at 2× to 3× that kept one", []*PhaseStats{
			phase(0, 8, 100, 10, true), bound(1, 16, 101, 30), phase(2, 20, 102, 25, true)}, 8, 20},
		{"… and none when that level is 3× or more", []*PhaseStats{
			phase(0, 8, 100, 10, true), bound(1, 16, 101, 30), phase(2, 32, 102, 40, true)}, 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			k := knee(c.phases)
			switch {
			case c.level == 0 && k != nil:
				t.Fatalf("knee %+v, want none", *k)
			case c.level != 0 && (k == nil || k.Level != c.level || k.Next != c.next):
				t.Fatalf("knee %+v, want %d → %d", k, c.level, c.next)
			}
		})
	}
}
