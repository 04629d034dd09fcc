package e2ekit

import (
	"runtime/metrics"
	"time"
)

// Contended is the p99 scheduler wait (SchedWait) from which a test's
// process counts as contended: its goroutines waited that long for a P.
// Measured: 0.1 ms for a rate run alone in the e2e process; 25, 50 and
// 117 ms with 2, 4 and 8 goroutines spinning beside it (GOMAXPROCS 2),
// where the run fell behind its schedule from 4 on with its workers 2–7 %
// busy.
const Contended = 5 * time.Millisecond

const schedLatencies = "/sched/latencies:seconds"

// SchedWait starts a reading of this process's Go scheduler latency
// (runtime/metrics /sched/latencies:seconds: how long goroutines waited,
// runnable, for a P). The func it returns gives the p99 of the waits
// sampled since, and how many were sampled.
//
// brk's workers are goroutines locked to their threads. When the test
// process's other goroutines (its in-process servers, the tests beside
// it) hold every P, a worker back from its poller waits for one too.
// Neither the box's other load (other processes) nor the workers' busy
// share (their threads' CPU and run-queue wait) shows that wait; this
// does, for the whole process.
func SchedWait() func() (p99 time.Duration, n uint64) {
	start := readSchedLatencies()
	return func() (time.Duration, uint64) {
		return waitQuantile(start, readSchedLatencies(), 0.99)
	}
}

func readSchedLatencies() *metrics.Float64Histogram {
	s := []metrics.Sample{{Name: schedLatencies}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindFloat64Histogram {
		return nil
	}
	return s[0].Value.Float64Histogram()
}

// waitQuantile is the q quantile of the waits counted between two readings
// of the same histogram: the upper bound of the bucket that holds it (a
// bound of +Inf reads as the bucket's lower bound). Zero with no waits
// between them or readings that do not match.
func waitQuantile(a, b *metrics.Float64Histogram, q float64) (time.Duration, uint64) {
	if a == nil || b == nil || len(a.Counts) != len(b.Counts) || len(b.Buckets) != len(b.Counts)+1 {
		return 0, 0
	}
	var n uint64
	for i := range b.Counts {
		n += b.Counts[i] - a.Counts[i]
	}
	if n == 0 {
		return 0, 0
	}
	rank := uint64(q*float64(n) + 0.999999) // the ⌈q·n⌉-th wait
	rank = min(max(rank, 1), n)
	var c uint64
	for i := range b.Counts {
		c += b.Counts[i] - a.Counts[i]
		if c >= rank {
			hi := b.Buckets[i+1]
			if hi > 1e9 { // +Inf
				hi = b.Buckets[i]
			}
			return time.Duration(hi * float64(time.Second)), n
		}
	}
	return 0, n
}
