package sched

import (
	"context"
	"math"
	"time"
)

// The cool-down: before a level is run again and before each bisection
// probe, the Ramp waits until the server answers one request as fast as
// it did when a level held (within twice the lowest p50 of an accepted
// phase), for at most max(timeout, 1 s), so that work a server still does
// for the phase before (requests whose client timed out) is not charged to
// the next. Its requests are counted apart from every phase.

// CoolDowner is a Phaser that can cool down (the engine; a sharded run's
// phases run on fixed slots whose drain allowance is their pause).
type CoolDowner interface {
	CoolDown(ctx context.Context, within, most time.Duration) CoolDown
}

// CoolDown is one wait before a phase.
type CoolDown struct {
	Before   int           `json:"before_phase"` // the phase it preceded
	Within   time.Duration `json:"within_ns"`    // the answer it waited for
	Waited   time.Duration `json:"waited_ns"`
	Requests uint64        `json:"requests"`
	Setups   uint64        `json:"setups"`   // connections it set up (replacing ones a timeout retired)
	Answered bool          `json:"answered"` // a request was answered within Within
}

// coolDownProbe is the length of one cool-down probe's admission window.
func coolDownProbe(within time.Duration) time.Duration {
	return max(2*within, 20*time.Millisecond)
}

// CoolDown runs short phases at the lowest load (one request, one
// connection, or a rate that admits about two requests a probe) until a
// response comes within within, or most has passed.
func (e *Engine) CoolDown(ctx context.Context, within, most time.Duration) CoolDown {
	cd := CoolDown{Within: within}
	start := time.Now()
	d := coolDownProbe(within)
	level := 1
	if e.cfg.Mode.Clocked() {
		level = int(math.Ceil(2 / d.Seconds()))
	}
	for ctx.Err() == nil && time.Since(start) < most {
		m, err := e.RunPhase(ctx, PhaseSpec{Level: level, Duration: d})
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

// coolDownWithin is twice the lowest p50 of the accepted phases so far
// (0: none accepted yet, no cool-down).
func coolDownWithin(phases []*Judged) time.Duration {
	var low time.Duration
	for _, j := range phases {
		if !j.Accepted || j.Run == nil || j.Run.Stats == nil || j.Run.Stats.Latency == nil || j.Run.Stats.Latency.TotalCount() == 0 {
			continue
		}
		p50 := time.Duration(j.Run.Stats.Latency.ValueAtQuantile(50)) * time.Microsecond
		if low == 0 || p50 < low {
			low = p50
		}
	}
	return 2 * low
}
