package machine

import (
	"runtime/metrics"
	"time"
)

const schedLatencies = "/sched/latencies:seconds"

// SchedWaits is a reading of this process's Go scheduler latency
// (runtime/metrics /sched/latencies:seconds): how long its goroutines
// waited, runnable, for a P. The runtime samples the waits it counts.
//
// brk's workers are goroutines locked to their threads. When the
// process's other goroutines (a program's own work beside the library, a
// test's in-process servers) hold every P, a worker back from its poller
// waits for one too: it reads responses late and admits late. Neither
// the box's other load (other processes) nor the workers' busy share
// (their threads' CPU and run-queue wait) shows that wait; this does, for
// the whole process.
type SchedWaits struct{ h *metrics.Float64Histogram }

// ReadSchedWaits reads the waits so far (it allocates: once per phase).
func ReadSchedWaits() SchedWaits {
	s := []metrics.Sample{{Name: schedLatencies}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindFloat64Histogram {
		return SchedWaits{}
	}
	return SchedWaits{s[0].Value.Float64Histogram()}
}

// OK reports whether the reading is available.
func (b SchedWaits) OK() bool { return b.h != nil }

// P99Since is the p99 of the waits sampled between a and b, and how many
// were sampled (0: none, or a reading unavailable).
func (b SchedWaits) P99Since(a SchedWaits) (time.Duration, uint64) {
	return waitQuantile(a.h, b.h, 0.99)
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
