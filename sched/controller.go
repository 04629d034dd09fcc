package sched

import (
	"context"
	"fmt"
	"time"
)

// MaxLevel bounds a level: requests per connection in the requests test
// (each outstanding request has a ring slot per connection), concurrent
// connections in the connections test. A run without --max that gets
// there ends inconclusive instead of allocating without bound.
const MaxLevel = 1 << 16

// MaxOutstanding bounds the requests test's total level (connections ×
// requests per connection): the rings hold one slot per outstanding
// request.
const MaxOutstanding = 1 << 22

// MaxRate bounds the rate test's level (requests/s).
const MaxRate = 10_000_000

// Plan is a run's phase schedule and what its phases are judged against.
type Plan struct {
	Mode        Mode
	Conns       int // connections of the requests test
	Start, Pace int // depth in phase 0, and added per phase
	Max         int // ceiling; 0 = none
	Phase       time.Duration
	Accept      Accept
	Addr        string // the dialed address, named in setup failures
	RateDepth   int    // rate test: outstanding requests per connection at most
}

// Level yields the depth of phase n (start + n·pace, with an explicit
// max tested even between pace steps) and whether it is the last.
func (p Plan) Level(n int) (depth int, last bool) {
	d := p.Start + n*p.Pace
	if p.Max > 0 && d >= p.Max {
		return p.Max, true
	}
	return d, false
}

// Phaser runs one phase at a depth and returns what it measured: the
// engine, or anything that stands in for it (several load boxes).
type Phaser interface {
	RunPhase(ctx context.Context, spec PhaseSpec) (*Measurement, error)
}

// Judged is one finished phase with its judgement.
type Judged struct {
	Judgement
	Index  int
	Depth  int // per connection
	Target int // the level
	Run    *Measurement
}

// Hooks are called on the caller's goroutine between phases, never per
// request.
type Hooks interface {
	PhaseStarted(index, depth, target int)
	PhaseFinished(j *Judged)
}

// Outcome is the end of a run.
type Outcome struct {
	Verdict       Verdict
	Reason        string
	LastAccepted  int // target, -1 when none
	FirstRejected int // target, -1 when none
	Phases        []*Judged
}

// Drive runs phases on ph until one is rejected, the max is reached, the
// run turns inconclusive, or ctx ends.
func Drive(ctx context.Context, ph Phaser, plan Plan, hooks Hooks) *Outcome {
	out := &Outcome{LastAccepted: -1, FirstRejected: -1}
	for n := 0; ; n++ {
		if n > 0 && ctx.Err() != nil {
			// Interrupted between phases (during the last drain): no new
			// phase starts, so no traffic is sent after the signal.
			out.Verdict, out.Reason = Interrupted, "interrupted"
			return out
		}
		depth, last := plan.Level(n)
		if plan.Mode == Rate && depth > MaxRate {
			out.Verdict = Inconclusive
			out.Reason = fmt.Sprintf("the next level (%d requests/s) is beyond what brk supports (%d requests/s); give --max", depth, MaxRate)
			return out
		}
		if plan.Mode != Rate && depth > MaxLevel || plan.Mode == Requests && depth*plan.Conns > MaxOutstanding {
			out.Verdict = Inconclusive
			out.Reason = fmt.Sprintf("the next level (%d) is beyond what brk supports (%d per connection or connections, %d outstanding requests); give --max", depth, MaxLevel, MaxOutstanding)
			return out
		}
		target := plan.Mode.Target(depth, plan.Conns)
		hooks.PhaseStarted(n, depth, target)
		m, err := ph.RunPhase(ctx, PhaseSpec{Depth: depth, Duration: plan.Phase, FailFast: n == 0})
		if err != nil {
			out.Verdict, out.Reason = Inconclusive, err.Error()
			return out
		}
		per := plan.Mode.perConn(depth)
		if plan.Mode == Rate {
			per = plan.RateDepth
		}
		j := &Judged{Judgement: Judge(m, plan, n, depth), Index: n, Depth: per, Target: target, Run: m}
		out.Phases = append(out.Phases, j)
		hooks.PhaseFinished(j)
		if j.Stop {
			out.Verdict, out.Reason = j.Verdict, j.Reason
			if j.Verdict == Interrupted {
				out.Reason = "interrupted"
			}
			if j.Verdict == Broken {
				out.FirstRejected = target
			}
			return out
		}
		out.LastAccepted = target
		if last {
			out.Verdict = Done
			out.Reason = fmt.Sprintf("max level %d per connection completed and accepted", depth)
			if plan.Mode != Requests {
				out.Reason = fmt.Sprintf("max level %d %s completed and accepted", depth, plan.Mode.Unit())
			}
			return out
		}
	}
}
