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
