package brk

import (
	"testing"

	"github.com/brk-bench/brk/internal/judge"
	"github.com/brk-bench/brk/internal/metrics"
)

// TestBindingTextCountsFollowers: the break's binding term names its most
// common failure, the abandoned followers of a response's timeout or of a
// connect that timed out counted as that timeout's, and other abandoned
// requests as abandoned.
func TestBindingTextCountsFollowers(t *testing.T) {
	for _, c := range []struct {
		name                        string
		timeout, connect, abandoned uint64
		followers, connectFollowers uint64
		want                        string
	}{
		{"timeouts", 5, 0, 0, 0, 0, "success ratio (timeout)"},
		{"a timeout's followers are the timeout's", 2, 3, 4, 4, 0, "success ratio (timeout)"},
		{"a connect timeout's followers are its own", 3, 2, 4, 0, 4, "success ratio (connect_timeout)"},
		{"abandoned, not attributed", 2, 2, 4, 0, 0, "success ratio (abandoned)"},
		{"followers counted no more than the abandoned", 3, 2, 1, 0, 9, "success ratio (timeout)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := metrics.NewPhase()
			s.Counts.Failed[metrics.Timeout] = c.timeout
			s.Counts.Failed[metrics.ConnectTimeout] = c.connect
			s.Counts.Failed[metrics.Abandoned] = c.abandoned
			s.TimeoutFollowers, s.ConnectTimeoutFollowers = c.followers, c.connectFollowers
			broke := &judge.Judged{Run: &judge.Measurement{Stats: s}}
			if got := bindingText(judge.TermSuccess, broke); got != c.want {
				t.Fatalf("binding %q, want %q", got, c.want)
			}
		})
	}
	if got := bindingText(judge.TermSuccess, &judge.Judged{}); got != "success ratio" {
		t.Fatalf("no measurement: binding %q, want the term alone", got)
	}
}
