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
	// MaxP99 and MaxP999, when set, reject a phase whose latency
	// percentile exceeds them.
	MaxP99, MaxP999 time.Duration
	// Refine bisects between the last accepted and the first rejected
	// depth until they are adjacent, running each probe Repeat times (a
	// probe is accepted only if every repetition is).
	Refine bool
	Repeat int
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
	Depth  int  // per connection
	Target int  // the level
	Probe  bool // a refinement probe (Plan.Refine)
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

// Drive runs phases on ph until one is rejected (and, with Refine, the
// break is bracketed by adjacent levels), the max is reached, the run
// turns inconclusive, or ctx ends.
func Drive(ctx context.Context, ph Phaser, plan Plan, hooks Hooks) *Outcome {
	r := NewRamp(ph, plan, hooks)
	for !r.Done() {
		r.Step(ctx)
	}
	return r.Outcome()
}

// Ramp is a run's phases one step at a time, so that two ramps can take
// turns (an A/B run) and a ramp can refine its break.
type Ramp struct {
	ph    Phaser
	plan  Plan
	hooks Hooks
	out   *Outcome
	n     int  // next phase index
	done  bool // the outcome is final

	// Refinement: lo is the highest accepted depth (0: none), hi the
	// lowest rejected one; a probe at mid runs Repeat times.
	refining bool
	lo, hi   int
	loTarget int // target of lo, -1 when none
	hiReason string
	reps     int
}

// NewRamp prepares a run of plan on ph.
func NewRamp(ph Phaser, plan Plan, hooks Hooks) *Ramp {
	if plan.Repeat < 1 {
		plan.Repeat = 1
	}
	return &Ramp{ph: ph, plan: plan, hooks: hooks, out: &Outcome{LastAccepted: -1, FirstRejected: -1}, loTarget: -1}
}

// Done reports whether the run has ended.
func (r *Ramp) Done() bool { return r.done }

// Outcome is the run's end (final once Done).
func (r *Ramp) Outcome() *Outcome { return r.out }

// Step runs the next phase, or ends the run.
func (r *Ramp) Step(ctx context.Context) {
	if r.done {
		return
	}
	if r.n > 0 && ctx.Err() != nil {
		// Interrupted between phases (during the last drain): no new
		// phase starts, so no traffic is sent after the signal.
		r.end(Interrupted, "interrupted")
		return
	}
	if r.refining {
		r.probe(ctx)
		return
	}
	plan := r.plan
	depth, last := plan.Level(r.n)
	if plan.Mode == Rate && depth > MaxRate {
		r.end(Inconclusive, fmt.Sprintf("the next level (%d requests/s) is beyond what brk supports (%d requests/s); give --max", depth, MaxRate))
		return
	}
	if plan.Mode != Rate && depth > MaxLevel || plan.Mode == Requests && depth*plan.Conns > MaxOutstanding {
		r.end(Inconclusive, fmt.Sprintf("the next level (%d) is beyond what brk supports (%d per connection or connections, %d outstanding requests); give --max", depth, MaxLevel, MaxOutstanding))
		return
	}
	j, ok := r.phase(ctx, depth, false)
	if !ok {
		return
	}
	if j.Stop {
		if j.Verdict == Broken && plan.Refine && depth-r.lo > 1 {
			r.refining, r.hi, r.hiReason = true, depth, j.Reason
			r.out.FirstRejected = j.Target
			return
		}
		r.stopAt(j)
		return
	}
	r.lo, r.loTarget = depth, j.Target
	r.out.LastAccepted = j.Target
	if last {
		reason := fmt.Sprintf("max level %d per connection completed and accepted", depth)
		if plan.Mode != Requests {
			reason = fmt.Sprintf("max level %d %s completed and accepted", depth, plan.Mode.Unit())
		}
		r.end(Done, reason)
	}
}

// phase runs and judges one phase at depth. ok is false when the run
// ended because the phase could not run.
func (r *Ramp) phase(ctx context.Context, depth int, probe bool) (*Judged, bool) {
	plan := r.plan
	target := plan.Mode.Target(depth, plan.Conns)
	r.hooks.PhaseStarted(r.n, depth, target)
	m, err := r.ph.RunPhase(ctx, PhaseSpec{Depth: depth, Duration: plan.Phase, FailFast: r.n == 0})
	if err != nil {
		r.end(Inconclusive, err.Error())
		return nil, false
	}
	per := plan.Mode.perConn(depth)
	if plan.Mode == Rate {
		per = plan.RateDepth
	}
	j := &Judged{Judgement: Judge(m, plan, r.n, depth), Index: r.n, Depth: per, Target: target, Probe: probe, Run: m}
	r.n++
	r.out.Phases = append(r.out.Phases, j)
	r.hooks.PhaseFinished(j)
	return j, true
}

// probe runs one repetition of the probe between lo and hi, and narrows
// the bracket once the probe is decided. A probe that is neither accepted
// nor rejected ends the refinement with the bracket found so far.
func (r *Ramp) probe(ctx context.Context) {
	if r.hi-r.lo <= 1 {
		r.endRefined()
		return
	}
	mid := r.lo + (r.hi-r.lo)/2
	j, ok := r.phase(ctx, mid, true)
	if !ok {
		return
	}
	switch {
	case j.Verdict == Broken:
		r.hi, r.hiReason, r.reps = mid, j.Reason, 0
		r.out.FirstRejected = j.Target
	case j.Stop:
		if j.Verdict == Interrupted {
			r.stopAt(j)
			return
		}
		r.endRefinedBecause(fmt.Sprintf("; refinement stopped at %d: %s", j.Target, j.Reason))
		return
	default:
		r.reps++
		if r.reps < r.plan.Repeat {
			return // the same probe again
		}
		r.lo, r.loTarget, r.reps = mid, j.Target, 0
		r.out.LastAccepted = j.Target
	}
	if r.hi-r.lo <= 1 {
		r.endRefined()
	}
}

func (r *Ramp) endRefined() { r.endRefinedBecause("") }

// endRefined ends a refined run Broken at the bracket found.
func (r *Ramp) endRefinedBecause(more string) {
	r.out.LastAccepted = r.loTarget
	r.out.FirstRejected = r.plan.Mode.Target(r.hi, r.plan.Conns)
	r.end(Broken, r.hiReason+more)
}

// stopAt ends the run at a phase that stopped it.
func (r *Ramp) stopAt(j *Judged) {
	reason := j.Reason
	if j.Verdict == Interrupted {
		reason = "interrupted"
	}
	if j.Verdict == Broken {
		r.out.FirstRejected = j.Target
	}
	r.end(j.Verdict, reason)
}

func (r *Ramp) end(v Verdict, reason string) {
	r.out.Verdict, r.out.Reason, r.done = v, reason, true
}
