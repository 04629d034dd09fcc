package sched

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Levels is how a run chooses its phases' levels: a linear ramp (Start,
// Start + Pace, …, optionally bisected after the break with Refine) or an
// adaptive search (Search: Start, ×Growth per phase until the first
// rejection, then bisection until the bracket is within the resolution).
// Every level is a total: concurrent requests over all connections
// (requests test), concurrent connections, or requests/s.
type Levels struct {
	Search bool
	Start  int // the first level
	Pace   int // linear: added per phase
	Max    int // the cap; 0 = none
	// Refine bisects a linear ramp's bracket in single units after its
	// first rejection (the search always bisects).
	Refine bool
	// Growth is the search's factor per phase (> 1).
	Growth float64
	// Resolution ends the bisection once the bracket (lowest rejected −
	// highest accepted) is at most this total; when 0, ResolutionPct of
	// the highest accepted level (at least 1) does.
	Resolution    int
	ResolutionPct float64
}

// Role is what a phase does in the run's choice of levels.
type Role uint8

// The roles.
const (
	RoleRamp   Role = iota // a linear ramp's step
	RoleGrow               // the search's growth: ×Growth per phase
	RoleDown               // the search after a first rejection: halving until a level holds
	RoleBisect             // between the highest accepted and the lowest rejected level
	RoleRepeat             // a repetition of the bisection probe before it (Plan.Repeat)
)

var roleNames = [...]string{"ramp", "grow", "down", "bisect", "repeat"}

// String is the role's name in reports.
func (r Role) String() string {
	if int(r) < len(roleNames) {
		return roleNames[r]
	}
	return "role(" + strconv.Itoa(int(r)) + ")"
}

// Probe reports whether the role is a bisection probe or its repetition.
func (r Role) Probe() bool { return r == RoleBisect || r == RoleRepeat }

// Bracket is where a run's choice of levels stands: the highest accepted
// level and the lowest rejected one, each with the phase that decided it
// and, for a repeated probe, its runs.
type Bracket struct {
	Held, Broke           int // levels; -1: none
	HeldPhase, BrokePhase int // indexes into the judged phases; -1: none
	HeldRuns, HeldOf      int // the held probe's accepted runs, of its runs
	BrokeRun, BrokeOf     int // the broken probe's failing run (1-based), of its runs
}

// Next is the next move: a phase at Level in Role, or the end of the run.
type Next struct {
	End     bool
	Level   int
	Role    Role
	Verdict Verdict // with End
	Reason  string  // with End
	Bracket Bracket
}

// Decide chooses the next phase from the judged phases so far: a pure
// function of the plan, what each phase was judged, and the time the
// phases have taken (spent), so that one load box, many, and a replay of
// their reports make the same choices. A budget that the next phase could
// overrun ends the run instead.
func Decide(p Plan, judged []*Judged, spent time.Duration) Next {
	s := newLevelState(p)
	for _, j := range judged {
		mv := s.propose()
		if mv.End {
			break // cannot happen for a history Decide produced
		}
		s.observe(mv, j)
		if s.end != nil {
			return *s.end
		}
	}
	mv := s.propose()
	if mv.End {
		return mv
	}
	if p.Budget > 0 && spent+p.PhaseCost > p.Budget {
		return s.budgetEnd(mv)
	}
	return mv
}

// levelState is the search's (or ramp's) state, replayed from the judged
// phases.
type levelState struct {
	p     Plan
	n     int // phases observed
	b     Bracket
	next  int  // linear: the next step's index; search: the next growth level
	down  bool // the search is halving
	bisec bool // bisecting
	reps  int  // accepted runs of the current probe
	end   *Next
	// why the bisection stopped early (an inconclusive probe)
	more string
	// the rejected phase's reason: the run's reason when it ends broken
	brokeReason string
	judged      []*Judged // the phases observed (StreamCap)
}

func newLevelState(p Plan) *levelState {
	s := &levelState{p: p, b: Bracket{Held: -1, Broke: -1, HeldPhase: -1, BrokePhase: -1}}
	if p.Levels.Search {
		s.next = p.Levels.Start
	}
	return s
}

// bound is the highest level the engine supports in the plan's mode.
func (p Plan) bound() int {
	b, _ := p.Mode.spec().bound(p.Conns)
	return b
}

// boundText names the engine's bound.
func (p Plan) boundText() string {
	_, s := p.Mode.spec().bound(p.Conns)
	return s
}

// resolution is the bracket at which the bisection stops.
func (s *levelState) resolution() int {
	l := s.p.Levels
	if !l.Search {
		return 1
	}
	if l.Resolution > 0 {
		return l.Resolution
	}
	pct := l.ResolutionPct
	if pct <= 0 {
		pct = 1
	}
	return max(1, int(math.Floor(float64(max(s.b.Held, 0))*pct/100)))
}

// propose is the next phase (or the end) from the state.
func (s *levelState) propose() Next {
	p, l := s.p, s.p.Levels
	end := func(v Verdict, reason string) Next {
		return Next{End: true, Verdict: v, Reason: reason, Bracket: s.b}
	}
	if s.bisec {
		if s.b.Broke-max(s.b.Held, 0) <= s.resolution() {
			return end(Broken, s.brokeReason+s.more)
		}
		role := RoleBisect
		if s.reps > 0 {
			role = RoleRepeat
		}
		return Next{Level: s.mid(), Role: role, Bracket: s.b}
	}
	if s.down {
		if s.b.Broke <= 1 {
			return end(Broken, s.brokeReason)
		}
		return Next{Level: s.b.Broke / 2, Role: RoleDown, Bracket: s.b}
	}
	if !l.Search {
		level := l.Start + s.next*l.Pace
		if l.Max > 0 && level >= l.Max {
			level = l.Max
		}
		if s.b.Held >= level && s.b.Held >= 0 { // the max accepted
			return end(Done, s.doneReason())
		}
		if level > p.bound() {
			return end(Inconclusive, fmt.Sprintf("the next level (%d %s) is beyond what brk supports (%s); give --max", level, p.Mode.Unit(), p.boundText()))
		}
		return Next{Level: level, Role: RoleRamp, Bracket: s.b}
	}
	level := s.next
	if s.b.Held >= 0 && s.b.Held >= level { // growth stopped at the cap or the bound: it held
		if m, why := s.maxLevel(); m > 0 && s.b.Held >= m {
			return end(Done, why)
		}
		return end(Inconclusive, fmt.Sprintf("held %d %s, brk's bound (%s): no break below it", s.b.Held, p.Mode.Unit(), p.boundText()))
	}
	return Next{Level: level, Role: RoleGrow, Bracket: s.b}
}

func (s *levelState) doneReason() string {
	return fmt.Sprintf("max level %s completed and accepted", s.p.levelText(s.b.Held))
}

// mid is the bisection's next probe.
func (s *levelState) mid() int {
	lo := max(s.b.Held, 0)
	return lo + (s.b.Broke-lo)/2
}

// observe takes the judged phase j that ran mv.
func (s *levelState) observe(mv Next, j *Judged) {
	idx := s.n
	s.n++
	s.judged = append(s.judged, j)
	p, l := s.p, s.p.Levels
	stop := func(v Verdict, reason string) {
		s.end = &Next{End: true, Verdict: v, Reason: reason, Bracket: s.b}
	}
	accepted := !j.Stop
	rejected := j.Stop && j.Verdict == Broken
	switch {
	case j.Stop && j.Verdict == Interrupted:
		stop(Interrupted, "interrupted")
		return
	case mv.Role.Probe() || mv.Role == RoleDown:
		if !accepted && !rejected { // inconclusive: the bracket so far stands
			stop(Broken, s.brokeReason+fmt.Sprintf("; %s stopped at %d: %s", s.searchWord(), mv.Level, j.Reason))
			return
		}
	case !accepted && !rejected:
		stop(j.Verdict, j.Reason)
		return
	}
	switch mv.Role {
	case RoleRamp:
		if accepted {
			s.held(mv.Level, idx, 1, 1)
			s.next++
			return
		}
		s.broke(mv.Level, idx, j.Reason, 1, 1)
		if l.Refine && s.b.Held >= 0 && mv.Level-s.b.Held > 1 {
			s.bisec = true
			return
		}
		stop(Broken, j.Reason)
	case RoleGrow:
		if accepted {
			s.held(mv.Level, idx, 1, 1)
			s.next = s.grow(mv.Level)
			return
		}
		s.broke(mv.Level, idx, j.Reason, 1, 1)
		if s.b.Held >= 0 {
			s.bisec = true
		} else {
			s.down = true
		}
	case RoleDown:
		if accepted {
			s.held(mv.Level, idx, 1, 1)
			s.down, s.bisec = false, true
			return
		}
		s.broke(mv.Level, idx, j.Reason, 1, 1)
	case RoleBisect, RoleRepeat:
		runs := max(p.Repeat, 1)
		if rejected {
			s.broke(mv.Level, idx, j.Reason, s.reps+1, runs)
			s.reps = 0
			return
		}
		s.reps++
		if s.reps >= runs {
			s.held(mv.Level, idx, s.reps, runs)
			s.reps = 0
		}
	}
}

func (s *levelState) searchWord() string {
	if s.p.Levels.Search {
		return "search"
	}
	return "refinement"
}

func (s *levelState) held(level, idx, runs, of int) {
	s.b.Held, s.b.HeldPhase, s.b.HeldRuns, s.b.HeldOf = level, idx, runs, of
}

func (s *levelState) broke(level, idx int, reason string, run, of int) {
	s.b.Broke, s.b.BrokePhase, s.b.BrokeRun, s.b.BrokeOf = level, idx, run, of
	s.brokeReason = reason
}

// grow is the search's next level after level held: ×Growth (at least
// one more), within the cap and the engine's bound.
func (s *levelState) grow(level int) int {
	l := s.p.Levels
	next := int(math.Ceil(float64(level) * l.Growth))
	if next <= level {
		next = level + 1
	}
	if m, _ := s.maxLevel(); m > 0 {
		next = min(next, m)
	}
	return min(next, s.p.bound())
}

// budgetEnd ends a run whose next phase (mv) could overrun the budget:
// broken at the bracket found if a level was rejected, else inconclusive.
func (s *levelState) budgetEnd(mv Next) Next {
	b := s.b
	budget := fmtDuration(s.p.Budget)
	if b.Broke >= 0 {
		return Next{End: true, Verdict: Broken, Bracket: b, Reason: fmt.Sprintf("%s; the budget of %s ended the %s at a bracket of %d–%d (resolution %d not reached)",
			s.brokeReason, budget, s.searchWord(), max(b.Held, 0), b.Broke, s.resolution())}
	}
	reason := fmt.Sprintf("not yet broken at %d %s — the budget of %s ended the run", mv.Level, s.p.Mode.Unit(), budget)
	if b.Held >= 0 {
		reason = fmt.Sprintf("held %d; ", b.Held) + reason
	}
	return Next{End: true, Verdict: Inconclusive, Bracket: b, Reason: reason}
}

// fmtDuration is d as the flags spell it ("5m0s" → "5m").
func fmtDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
