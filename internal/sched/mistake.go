package sched

import (
	"github.com/brk-bench/brk/internal/judge"
	"github.com/brk-bench/brk/internal/metrics"
)

// liveLook is the mistake rule's view of the live counters since base,
// read at now: the run's first phase so far (the live status is the run's,
// and nothing before the first phase gets a response).
func liveLook(base, now Snapshot) judge.FirstLook {
	f := judge.FirstLook{
		Established: now.Established, Heard: now.Heard - base.Heard,
		Succeeded: now.Succeeded - base.Succeeded,
		Attempted: now.Written - base.Written,
		Answered:  now.Status != 0,
	}
	for i := range now.Failed {
		f.Attempted += now.Failed[i] - base.Failed[i]
	}
	if now.Status != metrics.StatusMixed {
		f.Status = int(now.Status)
	}
	return f
}
