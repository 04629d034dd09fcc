package judge

import (
	"fmt"
	"math"
)

// Climb is how a run's level rises while no phase broke, and what follows
// the first break. Decide asks the plan's climb; it never asks which one
// it is. Linear and Search are the two; a new way of choosing levels (a
// level held for an hour) is one more Climb.
type Climb interface {
	// up is the next phase while no level broke, or the run's end.
	up(s *levelState, b Bracket) Next
	// afterBreak is the next phase once a level broke (b.Broke ≥ 0), or
	// the run's end.
	afterBreak(s *levelState, b Bracket) Next
	// resolution is the bracket at which a bisection stops, for the
	// highest level that held.
	resolution(held int) int
	// belowClient reports whether a level the client could not drive,
	// above one that held, is bisected below instead of ending the run.
	belowClient() bool
	// word names the climb's bisection in a reason ("the budget ended
	// the search").
	word() string
}

// Linear is the linear ramp: Start, Start + Pace, … up to the cap. With
// Refine it bisects its bracket in single units after the first break;
// without, the first break ends the run.
type Linear struct {
	Pace   int // added per phase
	Refine bool
}

// Search is the adaptive search: Start, ×Growth per phase until the first
// break, then bisection until the bracket is within the resolution. A
// first level that breaks is halved until a level holds.
type Search struct {
	Growth float64 // the factor per phase (> 1)
	// Resolution ends the bisection once the bracket (lowest rejected −
	// highest accepted) is at most this total; when 0, ResolutionPct of
	// the highest accepted level (at least 1) does.
	Resolution    int
	ResolutionPct float64
}

func (c Linear) up(s *levelState, b Bracket) Next {
	p, l := s.p, s.p.Levels
	level := l.Start
	if b.Held >= 0 {
		level = l.Start + ((b.Held-l.Start)/max(c.Pace, 1)+1)*c.Pace
	}
	if l.Max > 0 && level >= l.Max {
		level = l.Max
	}
	if b.Held >= level && b.Held >= 0 { // the max accepted
		return b.end(Done, s.doneReason(b))
	}
	if level > p.bound() {
		return b.end(Inconclusive, fmt.Sprintf("the next level (%d %s) is beyond what brk supports (%s); give %s", level, p.Mode.Unit(), p.boundText(), p.Names.Filled().Max))
	}
	return Next{Level: level, Role: RoleRamp, Bracket: b}
}

func (c Linear) afterBreak(s *levelState, b Bracket) Next {
	if !c.Refine || b.Held < 0 {
		return b.end(Broken, s.brokeReason(b))
	}
	return s.bisect(b)
}

func (c Linear) resolution(int) int { return 1 }
func (c Linear) belowClient() bool  { return false }
func (c Linear) word() string       { return "refinement" }

func (c Search) up(s *levelState, b Bracket) Next {
	p := s.p
	if b.Held < 0 {
		return Next{Level: p.Levels.Start, Role: RoleGrow, Bracket: b}
	}
	if cl := s.clientCap; cl > b.Held {
		if cl-b.Held <= s.resolution(b.Held) {
			return b.end(Inconclusive, fmt.Sprintf("%s — the lowest level the client could not drive: %d %s (%d held)", s.clientWhy, cl, p.Mode.Unit(), b.Held))
		}
		return Next{Level: b.Held + (cl-b.Held)/2, Role: RoleBisect, Bracket: b}
	}
	level := c.grow(s, b.Held)
	if level <= b.Held { // growth stopped at the cap or the bound: it held
		if m, why := s.maxLevel(b); m > 0 && b.Held >= m {
			return b.end(Done, why)
		}
		return b.end(Inconclusive, fmt.Sprintf("held %d %s, brk's bound (%s): no break below it", b.Held, p.Mode.Unit(), p.boundText()))
	}
	return Next{Level: level, Role: RoleGrow, Bracket: b}
}

func (c Search) afterBreak(s *levelState, b Bracket) Next {
	if b.Held < 0 { // the first level broke: halve until a level holds
		if b.Broke <= 1 {
			return b.end(Broken, s.brokeReason(b))
		}
		return Next{Level: b.Broke / 2, Role: RoleDown, Bracket: b}
	}
	return s.bisect(b)
}

func (c Search) resolution(held int) int {
	if c.Resolution > 0 {
		return c.Resolution
	}
	pct := c.ResolutionPct
	if pct <= 0 {
		pct = 1
	}
	return max(1, int(math.Floor(float64(max(held, 0))*pct/100)))
}

func (c Search) belowClient() bool { return true }
func (c Search) word() string      { return "search" }

// grow is the search's next level after level held: ×Growth (at least
// one more), within the cap and the engine's bound.
func (c Search) grow(s *levelState, level int) int {
	next := int(math.Ceil(float64(level) * c.Growth))
	if next <= level {
		next = level + 1
	}
	if m, _ := s.maxLevel(s.bracket()); m > 0 {
		next = min(next, m)
	}
	return min(next, s.p.bound())
}
