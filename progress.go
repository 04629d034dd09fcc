package brk

import (
	"time"

	"github.com/brk-bench/brk/internal/metrics"
	"github.com/brk-bench/brk/internal/sched"
)

// Progress is a live reading of the running phase.
type Progress struct {
	Phase           int
	Level           int
	Elapsed         time.Duration // since the phase started
	Succeeded       uint64        // so far in this phase
	SuccessPerSec   float64       // over the last interval
	Failed          Counts        // so far in this phase, by category (Attempted and Succeeded unset)
	MeanOutstanding float64       // over the last interval
	// P99 is the 99th percentile latency of the responses so far in this
	// phase (0 before the first), from a coarse histogram: the upper edge
	// of its bucket, at most 12.5 % above the true value.
	P99 time.Duration
	// The rate test (zero in the others): arrivals taken up and requests
	// completely written so far in this phase.
	Scheduled, Written uint64
	// Latency counts the complete responses so far in this phase by the
	// coarse histogram's bucket (P99's): bucket i holds latencies up to
	// metrics.CoarseUpper(i) µs, above bucket i-1's.
	Latency [metrics.CoarseBuckets]uint64
}

// ProgressObserver was an Observer that also wanted the live readings.
//
// Deprecated: every Observer has Progress now; use Observer.
type ProgressObserver = Observer

// Progresser receives a live reading once a second while a phase runs.
//
// Deprecated: Observer and bench.MatrixObserver have Progress; it was
// what they could add.
type Progresser interface {
	Progress(p Progress)
}

// reporter samples the engine once a second for the Observer's Progress.
type reporter struct {
	eng  *sched.Engine
	obs  Observer
	stop chan struct{}
	done chan struct{}
}

func startReporter(eng *sched.Engine, obs Observer, phase, level int) *reporter {
	r := &reporter{eng: eng, obs: obs, stop: make(chan struct{}), done: make(chan struct{})}
	go r.run(phase, level)
	return r
}

func (r *reporter) run(phase, level int) {
	defer close(r.done)
	start := time.Now()
	base := r.eng.Snapshot()
	var lat0, lat [metrics.CoarseBuckets]uint64
	r.eng.LiveLatency(&lat0)
	prev, prevAt := base, start
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case now := <-t.C:
			s := r.eng.Snapshot()
			dt := now.Sub(prevAt)
			p := Progress{
				Phase: phase, Level: level, Elapsed: now.Sub(start),
				Succeeded: s.Succeeded - base.Succeeded,
				Scheduled: s.Scheduled - base.Scheduled, Written: s.Written - base.Written,
			}
			if dt > 0 {
				p.SuccessPerSec = float64(s.Succeeded-prev.Succeeded) / dt.Seconds()
				p.MeanOutstanding = float64(s.OutstandingNs-prev.OutstandingNs) / float64(dt)
			}
			p.Failed.setFailures(func(c metrics.Category) uint64 { return s.Failed[c] - base.Failed[c] })
			r.eng.LiveLatency(&lat)
			p.P99 = time.Duration(metrics.LiveP99Us(&lat, &lat0)) * time.Microsecond
			for i := range lat {
				p.Latency[i] = lat[i] - lat0[i]
			}
			r.obs.Progress(p)
			prev, prevAt = s, now
		}
	}
}

// halt stops the reporter and waits for it.
func (r *reporter) halt() {
	close(r.stop)
	<-r.done
}
