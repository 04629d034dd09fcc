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
