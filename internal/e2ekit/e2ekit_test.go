package e2ekit

import (
	"testing"

	"github.com/brk-bench/brk"
)

// WeakBoundary: the lowest level rejected more often than held decides
// (one held less often does not count), and one strong rejection there is
// a verdict.
func TestWeakBoundary(t *testing.T) {
	weak := &brk.Evidence{Busy: true, Close: true}
	strong := &brk.Evidence{}
	ph := func(level int, accepted bool, e *brk.Evidence) *brk.PhaseStats {
		return &brk.PhaseStats{Level: level, Accepted: accepted, Evidence: e}
	}
	for _, c := range []struct {
		name   string
		phases []*brk.PhaseStats
		want   bool
	}{
		// A suite run's shape: 6 rejected weakly once, held twice; 14 held
		// once, rejected weakly twice; 18 rejected strongly.
		{"weak at the boundary", []*brk.PhaseStats{ph(2, true, nil), ph(6, false, weak), ph(6, true, nil), ph(10, true, nil),
			ph(6, true, nil), ph(14, true, nil), ph(18, false, strong), ph(14, false, weak), ph(10, true, nil), ph(14, false, weak)}, true},
		{"one strong rejection at the boundary", []*brk.PhaseStats{ph(10, true, nil), ph(14, false, weak), ph(14, false, strong)}, false},
		{"busy but not close", []*brk.PhaseStats{ph(10, true, nil), ph(14, false, &brk.Evidence{Busy: true})}, false},
		{"nothing rejected", []*brk.PhaseStats{ph(10, true, nil)}, false},
	} {
		if got := WeakBoundary(&brk.Result{Phases: c.phases}); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// AgainOnBusy: a run unlike a quiet box's is made again only where brk
// judged phases on a busy box, and skipped on the last attempt; on a
// quiet box the test goes on to fail.
func TestAgainOnBusy(t *testing.T) {
	for _, c := range []struct {
		name           string
		attempt, busy  int
		again, skipped bool
	}{
		{"quiet box: the caller fails", 1, 0, false, false},
		{"quiet box, the last attempt: the caller fails", BusyAttempts, 0, false, false},
		{"busy box: again", 1, 2, true, false},
		{"busy box, the last attempt: skipped", BusyAttempts, 2, false, true},
	} {
		var again bool
		var sub *testing.T
		t.Run(c.name, func(t *testing.T) {
			sub = t
			again = AgainOnBusy(t, c.attempt, c.busy, "exit 3")
		})
		if again != c.again || sub.Skipped() != c.skipped {
			t.Errorf("%s: again %v, skipped %v; want %v, %v", c.name, again, sub.Skipped(), c.again, c.skipped)
		}
	}
}

// MostlyBusy: true only where every run judged more than half its phases
// on a busy box.
func TestMostlyBusy(t *testing.T) {
	busy := &brk.PhaseStats{Evidence: &brk.Evidence{Busy: true}}
	quiet := &brk.PhaseStats{}
	run := func(phases ...*brk.PhaseStats) *brk.Result { return &brk.Result{Phases: phases} }
	for _, c := range []struct {
		name string
		runs []*brk.Result
		want bool
	}{
		{"both busy in most phases", []*brk.Result{run(busy, busy, quiet), run(busy)}, true},
		{"one busy in half its phases", []*brk.Result{run(busy, busy, quiet), run(busy, quiet)}, false},
		{"one quiet", []*brk.Result{run(busy), run(quiet)}, false},
		{"no run", nil, false},
	} {
		if got := MostlyBusy(c.runs...); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
