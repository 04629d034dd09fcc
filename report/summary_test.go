package report_test

import (
	"strings"
	"testing"

	"github.com/brk-bench/brk"
	"github.com/brk-bench/brk/report"
)

// A Done run whose phases were client-bound says so; plurals are right.
func TestSummaryNotesClientBoundPhases(t *testing.T) {
	level := 16
	r := &brk.Result{Test: brk.ModeRequests, Verdict: brk.VerdictDone, LastAccepted: &level,
		Phases: []*brk.PhaseStats{{Index: 0, ClientBound: true}, {Index: 1}}}
	var b strings.Builder
	report.WriteSummary(&b, r)
	if !strings.Contains(b.String(), "note: 1 phase was client_bound") {
		t.Fatalf("summary:\n%s", b.String())
	}
	r.Phases[1].ClientBound = true
	b.Reset()
	report.WriteSummary(&b, r)
	if !strings.Contains(b.String(), "note: 2 phases were client_bound") {
		t.Fatalf("summary:\n%s", b.String())
	}
}

func searchOf(levels []int, accepted []bool, held, broke int, fp *brk.FinalPair) *brk.Result {
	r := &brk.Result{Test: brk.ModeRequests, Verdict: brk.VerdictBroken, Accept: "99.99", LastAccepted: &held, FirstRejected: &broke, FinalPair: fp,
		Plan: brk.Plan{Search: &brk.Search{Growth: 2, ResolutionPct: 1}}}
	for i, l := range levels {
		p := &brk.PhaseStats{Index: i, Level: l, Accepted: accepted[i], DurationS: 1.1, RequestsPerSec: float64(10 * l),
			Counts: brk.Counts{Attempted: 100, Succeeded: 100}, SuccessPct: 100}
		if !accepted[i] {
			p.Counts.Succeeded, p.SuccessPct = 90, 90
		}
		r.Phases = append(r.Phases, p)
	}
	return r
}

// The search's summary sentence names the final pair from its phases (not
// the first rejected phase in run order), the resolution and the cost; a
// search stopped before its resolution says so; a repeated probe gives
// its runs.
func TestHeldSearch(t *testing.T) {
	i := func(v int) *int { return &v }
	levels := []int{8, 16, 32, 64, 48, 40, 36, 34, 33}
	acc := []bool{true, true, true, false, false, false, false, false, false}
	r := searchOf(levels, acc, 32, 33, &brk.FinalPair{HeldPhase: i(2), BrokePhase: i(8), HeldRuns: 1, HeldOf: 1, BrokeRun: 1, BrokeOf: 1})
	r.Phases[3].SuccessPct = 40 // the growth's overshoot: not the break
	want := "Held 32 concurrent requests (≈320 req/s, p99 0.000 ms); broke at 33 (success 90 % < 99.99 %); resolution 1; 9 phases in 10s"
	if got := report.Held(r); got != want {
		t.Errorf("Held\n got %q\nwant %q", got, want)
	}
	// Stopped by an inconclusive probe at 34: the bracket 32–36.
	r = searchOf(levels[:7], acc[:7], 32, 36, &brk.FinalPair{HeldPhase: i(2), BrokePhase: i(6)})
	if got := report.Held(r); !strings.Contains(got, "broke at 36 (success 90 % < 99.99 %); stopped at a bracket of 4 (resolution 1 not reached: see the reason); 7 phases in 8s") {
		t.Errorf("stopped search: %q", got)
	}
	// Confirmed ends: held in 3 of 3 runs, broke in 2 of 3.
	r = searchOf([]int{8, 4, 6, 5, 5, 5, 6}, []bool{false, true, true, true, true, true, false}, 6, 7,
		&brk.FinalPair{HeldPhase: i(2), BrokePhase: i(6), HeldRuns: 3, HeldOf: 3, BrokeRun: 2, BrokeOf: 3})
	if got := report.Held(r); !strings.Contains(got, "Held 6 concurrent requests (≈60 req/s, p99 0.000 ms; in 3 of 3 runs); broke at 7 (success 90 % < 99.99 %; in 2 of 3 runs)") {
		t.Errorf("repeated: %q", got)
	}
	// Interrupted after a rejection: the bracket so far stands.
	r = searchOf(levels[:5], acc[:5], 32, 48, &brk.FinalPair{HeldPhase: i(2), BrokePhase: i(4)})
	r.Verdict = brk.VerdictInterrupted
	if got, want := report.Held(r), "Held 32 concurrent requests (≈320 req/s, p99 0.000 ms); broke at 48 (success 90 % < 99.99 %); then interrupted (the bracket so far)"; got != want {
		t.Errorf("interrupted\n got %q\nwant %q", got, want)
	}
	r.FirstRejected, r.FinalPair.BrokePhase = nil, nil
	if got, want := report.Held(r), "Held 32 concurrent requests (≈320 req/s, p99 0.000 ms); then interrupted"; got != want {
		t.Errorf("interrupted before a rejection\n got %q\nwant %q", got, want)
	}
}
