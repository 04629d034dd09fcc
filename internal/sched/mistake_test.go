package sched

import (
	"strings"
	"testing"

	"github.com/brk-bench/brk/internal/judge"
	"github.com/brk-bench/brk/internal/metrics"
)

// TestLiveLook: the live counters since the phase's start read as the
// measurement would: a run-wide status of one code, a mixed one, the
// bytes heard and the requests attempted since the base.
func TestLiveLook(t *testing.T) {
	base := Snapshot{Established: 4, Written: 10, Heard: 2, Succeeded: 1}
	for _, c := range []struct {
		name string
		now  Snapshot
		want string
	}{
		{"404s", Snapshot{Established: 4, Written: 60, Heard: 6, Succeeded: 1, Status: 404}, "every response was 404 Not Found"},
		{"a success since the base", Snapshot{Established: 4, Written: 60, Heard: 6, Succeeded: 2, Status: 404}, ""},
		{"mixed codes", Snapshot{Established: 4, Written: 60, Heard: 6, Succeeded: 1, Status: metrics.StatusMixed}, ""},
		{"nothing heard since the base", Snapshot{Established: 4, Written: 60, Heard: 2, Succeeded: 1}, "not a byte came back"},
		{"nothing written since the base, one failed", func() Snapshot {
			s := Snapshot{Established: 4, Written: 10, Heard: 2, Succeeded: 1}
			s.Failed[metrics.Transport] = 1
			return s
		}(), "not a byte came back"},
		{"nothing attempted since the base", Snapshot{Established: 4, Written: 10, Heard: 2, Succeeded: 1}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := liveLook(base, c.now).Mistake(judge.LibraryNames())
			if c.want == "" && got != "" || !strings.HasPrefix(got, c.want) {
				t.Fatalf("mistake %q, want %q", got, c.want)
			}
		})
	}
}
