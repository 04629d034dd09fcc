package sched

import (
	"context"
	"math"
	"time"

	"github.com/brk-bench/brk/internal/judge"
)

// The cool-down: before a level is run again and before each bisection
// probe, the judge.Ramp waits until the server answers one request as fast as
// it did when a level held (within twice the lowest p50 of an accepted
// phase), for at most max(timeout, 1 s), so that work a server still does
// for the phase before (requests whose client timed out) is not charged to
// the next. Its requests are counted apart from every phase.

// coolDownProbe is the length of one cool-down probe's admission window.
func coolDownProbe(within time.Duration) time.Duration {
	return max(2*within, 20*time.Millisecond)
}

// CoolDown runs short phases at the lowest load (one request, one
// connection, or a rate that admits about two requests a probe) until a
// response comes within within, or most has passed.
func (e *Engine) CoolDown(ctx context.Context, within, most time.Duration) judge.CoolDown {
	cd := judge.CoolDown{Within: within}
	start := time.Now()
	d := coolDownProbe(within)
	level := 1
	if e.cfg.load().Mode().Clocked() {
		level = int(math.Ceil(2 / d.Seconds()))
	}
	for ctx.Err() == nil && time.Since(start) < most {
		m, err := e.RunPhase(ctx, judge.PhaseSpec{Level: level, Duration: d})
		if err != nil {
			break
		}
		cd.Requests += m.Stats.Counts.Attempted
		cd.Setups += m.Stats.Setups.Attempted
		if h := m.Stats.Latency; h.TotalCount() > 0 && time.Duration(h.Min())*time.Microsecond <= within {
			cd.Answered = true
			break
		}
	}
	cd.Waited = time.Since(start)
	return cd
}
