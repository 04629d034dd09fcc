package report

import (
	"testing"

	brk "github.com/brk-bench/brk"
)

// The peak line names the peak phase's verdict as the phase table does: a
// phase the client could not drive is inconclusive, not rejected.
func TestPeakLineVerdict(t *testing.T) {
	for _, c := range []struct {
		name  string
		phase brk.PhaseStats
		peak  brk.Peak
		want  string
	}{
		{"accepted", brk.PhaseStats{Index: 1, Accepted: true}, brk.Peak{Phase: 1, Level: 16, OKPerSec: 1500, P99Ms: 2, Accepted: true},
			"peak: 1,500 ok/s at 16 concurrent requests (phase 1, accepted, p99 2.00 ms)"},
		{"rejected", brk.PhaseStats{Index: 1}, brk.Peak{Phase: 1, Level: 16, OKPerSec: 1500, P99Ms: 2},
			"peak: 1,500 ok/s at 16 concurrent requests (phase 1, rejected, p99 2.00 ms)"},
		{"inconclusive", brk.PhaseStats{Index: 1, Inconclusive: true}, brk.Peak{Phase: 1, Level: 16, OKPerSec: 1500, P99Ms: 2},
			"peak: 1,500 ok/s at 16 concurrent requests (phase 1, inconclusive, p99 2.00 ms)"},
		{"not judged", brk.PhaseStats{Index: 1, NotJudged: true}, brk.Peak{Phase: 1, Level: 16, OKPerSec: 1500, P99Ms: 2},
			"peak: 1,500 ok/s at 16 concurrent requests (phase 1, not judged, p99 2.00 ms)"},
	} {
		r := &brk.Result{Test: brk.ModeRequests, Phases: []*brk.PhaseStats{{Index: 0, Accepted: true}, &c.phase}, Peak: &c.peak}
		if got := PeakLine(r); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestClientBoundWhy: a client_bound phase's line says what left the
// client no slack.
func TestClientBoundWhy(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	for _, c := range []struct {
		name string
		s    brk.PhaseStats
		want string
	}{
		{"workers busy", brk.PhaseStats{WorkerBusyPct: f(96), ProcessWaitP99Ms: f(40)}, "the worker threads were busy nearly all the time"},
		{"process starved", brk.PhaseStats{WorkerBusyPct: f(14), ProcessWaitP99Ms: f(83.9)}, "brk's process kept its goroutines, the workers among them, waiting 83.9 ms (p99) for a CPU"},
		{"behind its schedule", brk.PhaseStats{WorkerBusyPct: f(9), ProcessWaitP99Ms: f(0.3), Rate: &brk.RateStats{ShortfallPct: 1.5}}, "the client fell behind its arrival schedule"},
		{"nothing measured", brk.PhaseStats{}, "the client had no slack"},
	} {
		if got := clientBoundWhy(&c.s); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
