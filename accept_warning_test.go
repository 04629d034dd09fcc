package brk_test

import (
	"testing"

	"github.com/brk-bench/brk"
)

// Accept is a percentage: 0.9 means 0.9 %. The library warns as the CLI
// does, and runs the plan (a warning, not a refusal).
func TestAcceptWarning(t *testing.T) {
	w := brk.AcceptWarning(brk.Plan{Accept: 0.9})
	if w == nil {
		t.Fatal("Accept 0.9: no warning")
	}
	if got, want := w.Error(), "Plan.Accept 0.9 means 0.9 % of requests must succeed, not 90 %; Plan.Accept is a percentage"; got != want {
		t.Errorf("warning %q, want %q", got, want)
	}
	if len(w.Fields) != 1 || w.Fields[0] != "Plan.Accept" {
		t.Errorf("fields %v, want [Plan.Accept]", w.Fields)
	}
	for _, a := range []float64{0, 1, 99.9, 100, brk.AcceptAny} {
		if w := brk.AcceptWarning(brk.Plan{Accept: a}); w != nil {
			t.Errorf("Accept %v: warning %q", a, w)
		}
	}
	if err := brk.Validate(brk.Target{URL: "http://127.0.0.1:1/"}, brk.Plan{Accept: 0.9}); err != nil {
		t.Errorf("Validate refused Accept 0.9: %v", err)
	}
}
