package judge

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Levels is how a run chooses its phases' levels: the first level, the
// cap, and the climb between them. Every level is a total: concurrent
// requests over all connections (requests test), concurrent connections,
// or requests/s.
type Levels struct {
	Start int // the first level
	Max   int // the cap; 0 = none
	// Climb is how the level rises while no phase broke and what follows
	// the first break (climb.go): Linear (also a nil Climb) or Search.
	Climb Climb
}

// climb is the plan's climb; a nil one is the linear ramp's.
func (l Levels) climb() Climb {
	if l.Climb == nil {
		return Linear{}
	}
	return l.Climb
}

// Role is what a phase does in the run's choice of levels.
type Role uint8

// The roles.
const (
	RoleRamp   Role = iota // a linear ramp's step
	RoleGrow               // the search's growth: ×Growth per phase
	RoleDown               // the search after a first rejection: halving until a level holds
	RoleBisect             // between the highest accepted and the lowest rejected level
	RoleRepeat             // a level run again to confirm its verdict (Plan.Repeat runs at most)
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
// and its runs (confirm.go).
type Bracket struct {
	Held, Broke           int // levels; -1: none
	HeldPhase, BrokePhase int // indexes into the judged phases; -1: none
	HeldRuns, HeldOf      int // the held level's accepted runs, of its runs
	BrokeRun, BrokeOf     int // the broken level's rejected runs, of its runs
	// HeldSure and BrokeSure: the end was confirmed (a majority of the
	// runs a level may have), or needed no confirmation.
	HeldSure, BrokeSure bool
	// Conflicts are levels rejected below a level that held, after their
	// re-runs.
	Conflicts []Conflict
	// Fit is the break's interval (at Confidence) when the run ended with
	// a level broken, and Binding the SLA term that decided it.
	Fit     *BreakFit
	Binding Term
}

// Conflict is a level rejected (Low) below one that held (High), each
// after its re-runs.
type Conflict struct {
	Low  int `json:"low"`
	High int `json:"high"`
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
//
// No single phase moves the bracket where it may be noise: a level whose
// run was a stall, too close to call or judged on a busy box, the first
// rejection while nothing held, a level in conflict with another and both
// ends of the final pair are run again, up to Plan.Repeat runs, and the
// majority decides (confirm.go).
func Decide(p Plan, judged []*Judged, spent time.Duration) Next {
	s := newLevelState(p)
	for _, j := range judged {
		if end := s.observe(j); end != nil {
			return *end
		}
	}
	mv := s.next()
	if !mv.End && p.Budget > 0 && spent+p.PhaseCost > p.Budget {
		mv = s.budgetEnd(mv)
	}
	if mv.End {
		s.withFit(&mv)
	}
	return mv
}

// withFit gives an ending run's bracket its interval; a break above a
// level that held whose interval spans more than MaxSpan is inconclusive.
func (s *levelState) withFit(mv *Next) {
	f, term, ok := s.fit(mv.Bracket)
	if !ok {
		return
	}
	mv.Bracket.Fit, mv.Bracket.Binding = f, term
	if mv.Verdict == Broken && mv.Bracket.Held > 0 && f.High > MaxSpan*max(f.Low, 1) {
		mv.Verdict = Inconclusive
		mv.Reason = fmt.Sprintf("the break lies between %d and %d %s, more than a factor of %d apart: the runs were too noisy to bracket it (%s)",
			f.Low, f.High, s.p.Mode.Unit(), MaxSpan, s.pairText(mv.Bracket))
	}
}

// levelState is the search's (or ramp's) state, replayed from the judged
// phases: every level's runs.
type levelState struct {
	p      Plan
	n      int // phases observed
	levels map[int]*levelRuns
	last   int // the last phase's level; -1: none
	// firstBroke is the first level rejected (-1: none), and
	// firstBrokeAlone whether no level had held before it.
	firstBroke      int
	firstBrokeAlone bool
	// clientCap is the lowest level the client could not drive (a
	// client-bound phase of the search above a level that held; -1:
	// none), and clientWhy its phase's reason: the search bisects below
	// it instead of ending there.
	clientCap int
	clientWhy string
	judged    []*Judged
}

func newLevelState(p Plan) *levelState {
	return &levelState{p: p, levels: map[int]*levelRuns{}, last: -1, firstBroke: -1, clientCap: -1}
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

// resolution is the bracket at which the bisection stops, for a highest
// accepted level held.
func (s *levelState) resolution(held int) int { return s.p.Levels.climb().resolution(held) }

// observe takes the next judged phase; it returns the run's end when the
// phase ends it (an interrupt, or an inconclusive phase).
func (s *levelState) observe(j *Judged) *Next {
	idx := s.n
	s.n++
	s.judged = append(s.judged, j)
	level := j.Target
	s.last = level
	accepted := !j.Stop
	rejected := j.Stop && j.Verdict == Broken
	if j.Stop && j.Verdict == Interrupted {
		return s.endAt(Interrupted, "interrupted")
	}
	if !accepted && !rejected { // inconclusive
		// The client could not drive this level but a lower one held
		// (and any rejection is above it): the search bisects between
		// them for the highest level the client can judge. Otherwise a
		// break already bracketed stands once confirmed
		// (stoppedAfterBreak), or the phase's verdict is the run's.
		b := s.bracket()
		if j.ClientBound && s.p.Levels.climb().belowClient() && b.Held >= 0 && level > b.Held && (b.Broke < 0 || level < b.Broke) {
			if s.clientCap < 0 || level < s.clientCap {
				s.clientCap, s.clientWhy = level, j.Reason
			}
			return nil
		}
		if b.Broke >= 0 {
			return s.stoppedAfterBreak(b, level, j.Reason)
		}
		return s.endAt(j.Verdict, j.Reason)
	}
	r := s.levels[level]
	if r == nil {
		r = &levelRuns{level: level}
		s.levels[level] = r
	}
	r.add(idx, j)
	if rejected && s.firstBroke < 0 {
		s.firstBroke, s.firstBrokeAlone = level, s.bracket().Held < 0
	}
	return nil
}

// stoppedAfterBreak ends a run whose phase at level could not be judged
// (why) after a level was rejected, as the budget's end does
// (budgetEnd), by endUnconfirmed. A rejection that was never confirmed
// is not a break: one noisy phase does not decide the run because the
// next one could not run.
func (s *levelState) stoppedAfterBreak(b Bracket, level int, why string) *Next {
	word := s.searchWord()
	mv := s.endUnconfirmed(b, fmt.Sprintf("the %s stopped at %d", word, level), why,
		s.brokeReason(b)+fmt.Sprintf("; %s stopped at %d: %s", word, level, why))
	s.withFit(&mv)
	return &mv
}

// endUnconfirmed ends a run at bracket b, a level rejected, when the
// search ends (ending: "the budget of 5m ended the search", "the search
// stopped at 40", for why, "" when nothing more need be said) before it
// was done: broken at b when both its ends are confirmed (the reason
// confirmed); else broken at the bracket that needs no more runs
// (settledBracket: a settled or corroborated rejection, and below it a
// level held in every run or settled) when there is one, wider, and its
// interval says so; else inconclusive with the unconfirmed pair.
func (s *levelState) endUnconfirmed(b Bracket, ending, why, confirmed string) Next {
	if b.BrokeSure && (b.Held < 0 || b.HeldSure) {
		return Next{End: true, Verdict: Broken, Bracket: b, Reason: confirmed}
	}
	if sb := s.settledBracket(); sb.Broke >= 0 && sb.Held >= 0 {
		in := ""
		if why != "" {
			in = " (" + why + ")"
		}
		return Next{End: true, Verdict: Broken, Bracket: sb, Reason: fmt.Sprintf("%s; %s before it confirmed the pair %d/%d%s: the break lies between %d, which held in %d of %d runs, and %d, rejected in %d of %d",
			s.brokeReason(sb), ending, max(b.Held, 0), b.Broke, in, sb.Held, sb.HeldRuns, sb.HeldOf, sb.Broke, sb.BrokeRun, sb.BrokeOf)}
	}
	if why != "" {
		why += "; "
	}
	return Next{End: true, Verdict: Inconclusive, Bracket: b, Reason: fmt.Sprintf("%s before it confirmed its bracket (%s): %s%s",
		ending, s.pairText(b), why, s.brokeReason(b))}
}

func (s *levelState) endAt(v Verdict, reason string) *Next {
	mv := Next{End: true, Verdict: v, Reason: reason, Bracket: s.bracket()}
	s.withFit(&mv)
	return &mv
}

// next is the next phase (or the end) from the state: a level that must
// be run again and was not the last phase's, else the search's (or the
// ramp's) next move, else a level that must be run again even though it
// was the last one, else the end.
func (s *levelState) next() Next {
	b := s.bracket()
	mv := s.move(b)
	again := s.pending(b, mv)
	for _, l := range again {
		if l != s.last {
			return Next{Level: l, Role: RoleRepeat, Bracket: b}
		}
	}
	if !mv.End {
		return mv
	}
	if len(again) > 0 {
		return Next{Level: again[0], Role: RoleRepeat, Bracket: b}
	}
	return s.finish(mv)
}

// move is the search's (or the ramp's) next phase from the bracket, or
// its end, as if every level's verdict so far were final: the climb's
// once a level broke (bisection, or halving below a first level that
// broke), else its next level up.
func (s *levelState) move(b Bracket) Next {
	c := s.p.Levels.climb()
	if b.Broke >= 0 {
		return c.afterBreak(s, b)
	}
	return c.up(s, b)
}

// end is the run's end at bracket b.
func (b Bracket) end(v Verdict, reason string) Next {
	return Next{End: true, Verdict: v, Reason: reason, Bracket: b}
}

// bisect is the next phase between the bracket's ends: the bisection
// below the break (or below the lowest level the client could not drive,
// when that lies inside the bracket), or the end once the bracket is within
// the climb's resolution.
func (s *levelState) bisect(b Bracket) Next {
	lo := max(b.Held, 0)
	if b.Broke-lo <= s.resolution(b.Held) {
		return b.end(Broken, s.brokeReason(b))
	}
	hi := b.Broke
	if c := s.clientCap; c > lo && c < hi { // the client's limit lies below the break
		if c-lo <= s.resolution(b.Held) {
			return b.end(Broken, s.brokeReason(b)+fmt.Sprintf("; %s stopped at %d: %s", s.searchWord(), c, s.clientWhy))
		}
		hi = c
	}
	return Next{Level: lo + (hi-lo)/2, Role: RoleBisect, Bracket: b}
}

func (s *levelState) doneReason(b Bracket) string {
	return fmt.Sprintf("max level %s completed and accepted", s.p.levelText(b.Held))
}

// brokeReason is the reason of the run that rejected the bracket's
// broken level.
func (s *levelState) brokeReason(b Bracket) string {
	if b.BrokePhase < 0 || b.BrokePhase >= len(s.judged) {
		return ""
	}
	return s.judged[b.BrokePhase].Reason
}

func (s *levelState) searchWord() string { return s.p.Levels.climb().word() }

// budgetEnd ends a run whose next phase (mv) could overrun the budget:
// at the bracket found if a level was rejected (endUnconfirmed),
// inconclusive and not yet broken otherwise.
func (s *levelState) budgetEnd(mv Next) Next {
	b := mv.Bracket
	budget := ShortDuration(s.p.Budget)
	if b.Broke >= 0 {
		ending := fmt.Sprintf("the budget of %s ended the %s", budget, s.searchWord())
		return s.endUnconfirmed(b, ending, "", fmt.Sprintf("%s; %s at a bracket of %d–%d (resolution %d not reached)",
			s.brokeReason(b), ending, max(b.Held, 0), b.Broke, s.resolution(b.Held)))
	}
	reason := fmt.Sprintf("not yet broken at %d %s — the budget of %s ended the run", mv.Level, s.p.Mode.Unit(), budget)
	if b.Held >= 0 {
		reason = fmt.Sprintf("held %d; ", b.Held) + reason
	}
	return Next{End: true, Verdict: Inconclusive, Bracket: b, Reason: reason}
}

// ShortDuration is d as a flag spells it: "5m", "1m30s", "2.5s" (not
// time.Duration's "5m0s"). The report writes durations the same way.
func ShortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
