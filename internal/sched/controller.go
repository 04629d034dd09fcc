package sched

import (
	"context"
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
	Mode  Mode
	Conns int // connections of the requests test (of the whole run, over every shard)
	// Levels chooses each phase's level (a total).
	Levels    Levels
	Phase     time.Duration
	Timeout   time.Duration // the request budget
	Accept    Accept
	Addr      string // the dialed address, named in setup failures
	RateDepth int    // rate test: outstanding requests per connection at most
	// MaxP99 and MaxP999, when set, reject a phase whose latency
	// percentile exceeds them.
	MaxP99, MaxP999 time.Duration
	// Repeat runs each bisection probe this many times (a probe is
	// accepted only if every repetition is).
	Repeat int
	// Budget, when set, bounds the time of the run's phases: no phase
	// starts that could end past it. PhaseCost is the most a phase may
	// take (admission and drain); with Slotted, phases run on absolute
	// slots of PhaseCost (a sharded run), and the time spent is the
	// number of phases × PhaseCost rather than a clock's reading.
	Budget    time.Duration
	PhaseCost time.Duration
	Slotted   bool
	// Unjudged runs every phase of a plan whose levels do not depend on
	// verdicts (a linear ramp to its max) without judging it: a shard
	// without a coordinator, whose phases a merge judges later. Only an
	// interrupt stops it early.
	Unjudged bool
	// Names name the settings the reasons suggest changing (zero: the
	// library's field names, LibraryNames).
	Names Names
}

// Phaser runs one phase at a level and returns what it measured: the
// engine, or anything that stands in for it (several load boxes).
type Phaser interface {
	RunPhase(ctx context.Context, spec PhaseSpec) (*Measurement, error)
}

// Judged is one finished phase with its judgement.
type Judged struct {
	Judgement
	Index  int
	Depth  int  // the most requests a connection held (requests test), the rate test's depth, or 1
	Target int  // the level
	Owners int  // the connections that carry it (of the whole run)
	Role   Role // what the phase did in the choice of levels
	Probe  bool // a bisection probe or its repetition
	Run    *Measurement
	// Evidence is what the phase says beside its verdict (evidence.go).
	Evidence Evidence
}

// Hooks are called on the caller's goroutine between phases, never per
// request.
type Hooks interface {
	// PhaseStarted: the bracket so far, and at most how much of the
	// budget is left (0: no budget).
	PhaseStarted(index, depth, level int, role Role, b Bracket, left time.Duration)
	PhaseFinished(j *Judged)
}

// Outcome is the end of a run.
type Outcome struct {
	Verdict       Verdict
	Reason        string
	LastAccepted  int // level, -1 when none
	FirstRejected int // level, -1 when none
	// Bracket is the final pair with the phases that decided it.
	Bracket Bracket
	Phases  []*Judged
	// CoolDowns are the waits before re-runs and bisection probes
	// (cooldown.go).
	CoolDowns []CoolDown
}

// Run steps the ramp until the plan's choice of levels ends the run (a
// break bracketed, the max reached, the budget spent), the run turns
// inconclusive, or ctx ends, and returns its outcome.
func (r *Ramp) Run(ctx context.Context) *Outcome {
	for !r.Done() {
		r.Step(ctx)
	}
	return r.Outcome()
}

// Ramp is a run's phases one step at a time, so that two ramps can take
// turns (an A/B run). Each step asks Decide for the next level.
type Ramp struct {
	ph    Phaser
	plan  Plan
	hooks Hooks
	out   *Outcome
	done  bool // the outcome is final
	t0    time.Time
}

// NewRamp prepares a run of plan on ph.
func NewRamp(ph Phaser, plan Plan, hooks Hooks) *Ramp {
	if plan.Repeat < 1 {
		plan.Repeat = 1
	}
	b := Bracket{Held: -1, Broke: -1, HeldPhase: -1, BrokePhase: -1}
	return &Ramp{ph: ph, plan: plan, hooks: hooks, out: &Outcome{Verdict: Done, LastAccepted: -1, FirstRejected: -1, Bracket: b}}
}

// Done reports whether the run has ended.
func (r *Ramp) Done() bool { return r.done }

// Outcome is the run's end (final once Done).
func (r *Ramp) Outcome() *Outcome { return r.out }

// spent is the time the run's phases have taken, as the budget counts it.
func (r *Ramp) spent() time.Duration {
	if r.plan.Slotted {
		return time.Duration(len(r.out.Phases)) * r.plan.PhaseCost
	}
	if r.t0.IsZero() {
		return 0
	}
	return time.Since(r.t0)
}

// Step runs the next phase, or ends the run.
func (r *Ramp) Step(ctx context.Context) {
	if r.done {
		return
	}
	if len(r.out.Phases) > 0 && ctx.Err() != nil {
		// Interrupted between phases (during the last drain): no new
		// phase starts, so no traffic is sent after the signal.
		r.end(Interrupted, "interrupted")
		return
	}
	if r.t0.IsZero() {
		r.t0 = time.Now()
	}
	mv, end := r.decide()
	if end {
		return
	}
	if mv.Role == RoleRepeat || mv.Role == RoleBisect {
		r.coolDown(ctx)
	}
	if !r.phase(ctx, mv.Level, mv.Role) {
		return
	}
	r.decide() // a run that ends with this phase ends now
}

// decide applies the next move's bracket and ends the run if it ends.
func (r *Ramp) decide() (Next, bool) {
	mv := Decide(r.plan, r.out.Phases, r.spent())
	r.out.Bracket = mv.Bracket
	r.out.LastAccepted, r.out.FirstRejected = mv.Bracket.Held, mv.Bracket.Broke
	if mv.End {
		r.end(mv.Verdict, mv.Reason)
	}
	return mv, mv.End
}

// phase runs and judges one phase at level. It is false when the run
// ended because the phase could not run.
func (r *Ramp) phase(ctx context.Context, level int, role Role) bool {
	plan := r.plan
	n := len(r.out.Phases)
	per := plan.depth(level)
	left := time.Duration(0)
	if plan.Budget > 0 {
		left = max(plan.Budget-r.spent(), 0)
	}
	r.hooks.PhaseStarted(n, per, level, role, r.out.Bracket, left)
	m, err := r.ph.RunPhase(ctx, PhaseSpec{Level: level, Duration: plan.Phase, FailFast: n == 0})
	if err != nil {
		r.end(Inconclusive, err.Error())
		return false
	}
	jg := Judge(m, plan, n, level)
	if plan.Unjudged && (!jg.Stop || jg.Verdict != Interrupted) {
		jg = Judgement{Verdict: Done, NotJudged: true, Reason: NotJudged} // not stopped: the plan goes on
	}
	j := &Judged{Judgement: jg, Index: n, Depth: per, Target: level,
		Owners: plan.Mode.owners(level, plan.Conns), Role: role, Probe: role.Probe(), Run: m,
		Evidence: Examine(m, plan, jg)}
	r.out.Phases = append(r.out.Phases, j)
	r.hooks.PhaseFinished(j)
	return true
}

// coolDown waits, before the next phase, until the server answers as it
// did when a level held (cooldown.go); a Phaser that cannot cool down
// does not wait.
func (r *Ramp) coolDown(ctx context.Context) {
	cd, ok := r.ph.(CoolDowner)
	within := coolDownWithin(r.out.Phases)
	if !ok || within <= 0 {
		return
	}
	c := cd.CoolDown(ctx, within, max(r.plan.Timeout, time.Second))
	c.Before = len(r.out.Phases)
	r.out.CoolDowns = append(r.out.CoolDowns, c)
}

// NotJudged is an Unjudged plan's phase reason.
const NotJudged = "not judged: the verdict is the merge's"

func (r *Ramp) end(v Verdict, reason string) {
	r.out.Verdict, r.out.Reason, r.done = v, reason, true
}
