package judge

import (
	"context"
	"time"
)

// Phaser runs one phase at a level and returns what it measured: the
// engine, or anything that stands in for it (several load boxes).
type Phaser interface {
	RunPhase(ctx context.Context, spec PhaseSpec) (*Measurement, error)
}

// Observer is told of each phase's start and end, on the caller's
// goroutine between phases, never per request. The engine's run adds the
// workers' start to it (enginerun.Observer), and the brk package turns it
// into its public Observer.
type Observer interface {
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
	// (internal/sched/cooldown.go).
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
	ph   Phaser
	plan Plan
	obs  Observer
	out  *Outcome
	done bool // the outcome is final
	t0   time.Time
}

// NewRamp prepares a run of plan on ph.
func NewRamp(ph Phaser, plan Plan, obs Observer) *Ramp {
	if plan.Repeat < 1 {
		plan.Repeat = 1
	}
	b := Bracket{Held: -1, Broke: -1, HeldPhase: -1, BrokePhase: -1}
	return &Ramp{ph: ph, plan: plan, obs: obs, out: &Outcome{Verdict: Done, LastAccepted: -1, FirstRejected: -1, Bracket: b}}
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
	r.obs.PhaseStarted(n, per, level, role, r.out.Bracket, left)
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
		Evidence: Examine(m, plan, jg), ClientStarved: clientStarved(m, plan)}
	r.out.Phases = append(r.out.Phases, j)
	r.obs.PhaseFinished(j)
	return true
}

// coolDown waits, before the next phase, until the server answers as it
// did when a level held (internal/sched/cooldown.go); a Phaser that cannot cool down
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

// PhaseSpec is one phase to run.
type PhaseSpec struct {
	// Level is the phase's level: concurrent requests over every
	// connection of the run (the requests test), concurrent connections,
	// or requests/s.
	Level    int
	Duration time.Duration // admission window
	// FailFast ends the phase early when every connection owner failed
	// its setup and no setup of the run ever succeeded (phase 0: nothing
	// is listening), or when after MistakeAfter the phase so far is the
	// user's mistake (mistake.go: every response the same refusal,
	// or not a byte from the server); what is then outstanding is
	// abandoned, not drained.
	FailFast bool
}

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
