package e2ekit

import (
	"time"

	"github.com/brk-bench/brk/internal/machine"
)

// Contended is the p99 scheduler wait (SchedWait) from which a test's
// process counts as contended: its goroutines waited that long for a P.
// Measured: 0.1 ms for a rate run alone in the e2e process, 0.9 ms for a
// search with the package's others beside it; 25, 50 and 117 ms with 2, 4
// and 8 goroutines spinning beside it (GOMAXPROCS 2), where the run fell
// behind its schedule from 4 on with its workers 2–7 % busy.
const Contended = 5 * time.Millisecond

// SchedWait starts a reading of this process's Go scheduler latency
// (machine.SchedWaits). The func it returns gives the p99 of the waits
// sampled since, and how many were sampled.
func SchedWait() func() (p99 time.Duration, n uint64) {
	start := machine.ReadSchedWaits()
	return func() (time.Duration, uint64) { return machine.ReadSchedWaits().P99Since(start) }
}
