package sched

import (
	"context"
	"fmt"
	"time"

	"brk/metrics"
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

// Plan is the phase schedule of a requests test.
type Plan struct {
	Start, Pace int // outstanding requests per connection in phase 0, and added per phase
	Max         int // ceiling per connection; 0 = none
	Phase       time.Duration
	Accept      Accept
}

// Levels yields the depth of phase n (start + n·pace, with an explicit
// max tested even between pace steps) and whether it is the last.
func (p Plan) Level(n int) (depth int, last bool) {
	d := p.Start + n*p.Pace
	if p.Max > 0 && d >= p.Max {
		return p.Max, true
	}
	return d, false
}

// Verdict is how a run ended.
type Verdict int

// Verdicts, in SPEC §5 terms.
const (
	Done Verdict = iota
	Broken
	Inconclusive
	Interrupted
)

// Judged is one finished phase with its judgement.
type Judged struct {
	Index    int
	Depth    int // per connection
	Target   int // Conns × Depth
	Run      *PhaseRun
	Accepted bool
	Judged   bool // false for an interrupted phase
	// Inconclusive marks a phase that ended the run inconclusive: it is
	// neither accepted nor a server verdict.
	Inconclusive bool
	Reason       string // why it was rejected or inconclusive
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

// Drive runs phases on e until one is rejected, the max is reached, the
// run turns inconclusive, or ctx ends.
func Drive(ctx context.Context, e *Engine, plan Plan, hooks Hooks) *Outcome {
	out := &Outcome{LastAccepted: -1, FirstRejected: -1}
	for n := 0; ; n++ {
		if n > 0 && ctx.Err() != nil {
			// Interrupted between phases (during the last drain): no new
			// phase starts, so no traffic is sent after the signal.
			out.Verdict, out.Reason = Interrupted, "interrupted"
			return out
		}
		depth, last := plan.Level(n)
		if depth > MaxLevel || !e.cfg.Connections && depth*e.cfg.Conns > MaxOutstanding {
			out.Verdict = Inconclusive
			out.Reason = fmt.Sprintf("the next level (%d) is beyond what brk supports (%d per connection or connections, %d outstanding requests); give --max", depth, MaxLevel, MaxOutstanding)
			return out
		}
		target, conns := e.cfg.Conns*depth, e.cfg.Conns
		if e.cfg.Connections {
			target, conns = depth, depth
		}
		hooks.PhaseStarted(n, depth, target)
		run, err := e.RunPhase(ctx, PhaseSpec{Depth: depth, Duration: plan.Phase, FailFast: n == 0})
		if err != nil {
			out.Verdict, out.Reason = Inconclusive, err.Error()
			return out
		}
		j := &Judged{Index: n, Depth: depth, Target: target, Run: run}
		if e.cfg.Connections {
			j.Depth = 1
		}
		verdict, reason, stop := judge(j, plan, conns, e.cfg.Connections, e.cfg.Addr.String())
		j.Inconclusive = stop && verdict == Inconclusive
		out.Phases = append(out.Phases, j)
		hooks.PhaseFinished(j)
		if stop {
			out.Verdict, out.Reason = verdict, reason
			if verdict == Broken {
				out.FirstRejected = target
			}
			return out
		}
		out.LastAccepted = target
		if last {
			out.Verdict = Done
			out.Reason = fmt.Sprintf("max level %d per connection completed and accepted", depth)
			if e.cfg.Connections {
				out.Reason = fmt.Sprintf("max level %d concurrent connections completed and accepted", depth)
			}
			return out
		}
	}
}

// judge decides one phase. It returns stop=true with the run's verdict
// when the run ends at this phase.
func judge(j *Judged, plan Plan, conns int, connTest bool, addr string) (Verdict, string, bool) {
	r := j.Run
	s := r.Stats
	c := &s.Counts
	switch {
	case r.Interrupted:
		return Interrupted, "interrupted", true
	case r.ClientError != "":
		j.Judged = true
		j.Reason = r.ClientError
		return Inconclusive, r.ClientError, true
	case r.SetupFailed || j.Index == 0 && s.Setups.Established == 0 && s.Setups.Attempted > 0:
		j.Judged = true
		msg := s.SetupError
		if msg == "" {
			msg = "no connection could be established"
		}
		j.Reason = fmt.Sprintf("setup impossible: %s (dialing %s)", msg, addr)
		return Inconclusive, j.Reason, true
	}
	j.Judged = true
	if c.Failed[metrics.Protocol] > 0 || s.ProtocolUnattributed > 0 {
		j.Reason = fmt.Sprintf("invalid protocol data from the server: %d protocol faults (first: %s)",
			c.Failed[metrics.Protocol]+s.ProtocolUnattributed, s.ProtocolReason)
		return Broken, j.Reason, true
	}
	if connTest && !plan.Accept.Met(s.Setups.Established, s.Setups.Attempted) {
		pct := 0.0
		if s.Setups.Attempted > 0 {
			pct = 100 * float64(s.Setups.Established) / float64(s.Setups.Attempted)
		}
		j.Reason = fmt.Sprintf("setups: %.4g%% established (%d of %d; %d failed, %d timed out) is below --accept %s%% at %d concurrent connections",
			pct, s.Setups.Established, s.Setups.Attempted, s.Setups.Failed, s.Setups.TimedOut, plan.Accept, j.Target)
		return Broken, j.Reason, true
	}
	if !plan.Accept.Met(c.Succeeded, c.Attempted) {
		unit := "concurrent requests"
		prefix := ""
		if connTest {
			unit, prefix = "concurrent connections", "requests: "
		}
		pct := 0.0
		if c.Attempted > 0 {
			pct = 100 * float64(c.Succeeded) / float64(c.Attempted)
		}
		j.Reason = fmt.Sprintf("%ssuccess %.4g%% (%d of %d) is below --accept %s%% at %d %s",
			prefix, pct, c.Succeeded, c.Attempted, plan.Accept, j.Target, unit)
		return Broken, j.Reason, true
	}
	if s.ReachedOnce < uint64(conns) {
		j.Reason = fmt.Sprintf("target unfulfilled: %d of %d connections never held %d requests outstanding",
			uint64(conns)-s.ReachedOnce, conns, j.Depth)
		if connTest {
			j.Reason = fmt.Sprintf("target unfulfilled: %d of %d concurrent connections never carried a request", uint64(conns)-s.ReachedOnce, conns)
		}
		return Inconclusive, j.Reason, true
	}
	j.Accepted = true
	return Done, "", false
}
