package judge

import (
	"fmt"
	"slices"
)

// Confirmation: a level's verdict is the majority of its runs, at most
// Plan.Repeat of them. A level is run again while its verdict is not yet
// settled and any of these holds (pending): one of its runs was noisy (a
// stall, too close to call, judged on a busy box); it was the first level
// rejected before any held (the search would turn downward on it); it is in
// conflict (rejected below a level that held, or that level); or it is an
// end of the final pair. A stall abstains: a level whose only rejections
// are stalls breaks only when every one of its runs stalled. A weak
// rejection (on a busy box, too close to call: the box's load could have
// made it) does not settle a level before its last run, and a break whose
// every rejection was weak ends inconclusive.

// levelRuns is one level's runs.
type levelRuns struct {
	level           int
	acc, rej, stall int  // accepted runs, rejected runs, rejected runs that were stalls
	weak            int  // of rej: judged on a busy box and too close to call
	noisy           bool // a run's evidence asks for another
	lastAcc         int  // the latest accepted run's phase index
	lastRej         int  // the latest rejected run's phase index
	latestAccepted  bool
}

func (r *levelRuns) add(idx int, j *Judged) {
	accepted := !j.Stop
	switch {
	case accepted:
		r.acc++
		r.lastAcc = idx
	case j.Evidence.Stall != nil:
		r.stall++
		r.lastRej = idx
	default:
		r.rej++
		r.lastRej = idx
		if j.Evidence.Weak() {
			r.weak++
		}
	}
	r.latestAccepted = accepted
	r.noisy = r.noisy || j.Evidence.Noisy(accepted)
}

func (r *levelRuns) runs() int { return r.acc + r.rej + r.stall }

// verdict is whether the level held so far, and whether that is settled:
// a majority of most runs agrees, or it has had them all. Before its last
// run a rejection is settled only with a rejection that was not weak.
func (r *levelRuns) verdict(most int) (held, settled bool) {
	n, need := r.runs(), most/2+1
	switch {
	case n >= most:
		if r.stall == n {
			return false, true // a stall in every run: the server's behaviour
		}
		return r.acc > r.rej, true
	case r.acc >= need:
		return true, true
	case r.rej > r.weak && r.rej+r.stall >= need:
		return false, true
	case r.acc == 0 && r.rej == 0:
		return false, false // stalls only, so far
	case r.acc == r.rej:
		return r.latestAccepted, false
	}
	return r.acc > r.rej, false
}

// mostRuns is the most runs a level may have: Plan.Repeat (1 for a plan
// whose phases are not judged as they run, and for a single level).
func (s *levelState) mostRuns() int {
	if l := s.p.Levels; s.p.Unjudged || l.Max > 0 && l.Start >= l.Max {
		return 1 // unjudged, or one level (a fixed load)
	}
	return max(s.p.Repeat, 1)
}

// bracket is the highest level that holds so far and the lowest rejected
// above it, with the conflicts below it that are settled.
func (s *levelState) bracket() Bracket {
	b := Bracket{Held: -1, Broke: -1, HeldPhase: -1, BrokePhase: -1}
	most := s.mostRuns()
	for _, r := range s.levels {
		if held, settled := r.verdict(most); held && r.level > b.Held {
			b.Held, b.HeldPhase, b.HeldRuns, b.HeldOf, b.HeldSure = r.level, r.lastAcc, r.acc, r.runs(), settled
		}
	}
	for _, r := range s.levels {
		held, settled := r.verdict(most)
		if held || r.level <= b.Held || b.Broke >= 0 && r.level > b.Broke {
			continue
		}
		b.Broke, b.BrokePhase, b.BrokeRun, b.BrokeOf, b.BrokeSure = r.level, r.lastRej, r.rej+r.stall, r.runs(), settled
	}
	for _, low := range s.conflicts(b) {
		if _, ls := s.levels[low].verdict(most); !ls {
			continue
		}
		high := s.heldAbove(low)
		if _, hs := s.levels[high].verdict(most); hs {
			b.Conflicts = append(b.Conflicts, Conflict{Low: low, High: high})
		}
	}
	return b
}

// settledBracket is the bracket that needs no more runs: the lowest
// rejected level whose rejection is settled or corroborated (no level at
// or above it accepted any run, and at least Plan.Repeat/2 + 1 runs at or
// above it were rejected outright at levels with no noisy run), and below
// it the highest level whose hold is settled or that held in every run
// (Held -1: none). Broke is -1 when no rejection is settled or
// corroborated.
func (s *levelState) settledBracket() Bracket {
	b := Bracket{Held: -1, Broke: -1, HeldPhase: -1, BrokePhase: -1}
	most := s.mostRuns()
	for _, r := range s.levels {
		held, settled := r.verdict(most)
		if held || b.Broke >= 0 && r.level >= b.Broke || !settled && !s.corroborated(r.level, most/2+1) {
			continue
		}
		b.Broke, b.BrokePhase, b.BrokeRun, b.BrokeOf, b.BrokeSure = r.level, r.lastRej, r.rej+r.stall, r.runs(), true
	}
	if b.Broke < 0 {
		return b
	}
	for _, r := range s.levels {
		held, settled := r.verdict(most)
		if held && (settled || r.rej+r.stall == 0) && r.level < b.Broke && r.level > b.Held {
			b.Held, b.HeldPhase, b.HeldRuns, b.HeldOf, b.HeldSure = r.level, r.lastAcc, r.acc, r.runs(), true
		}
	}
	return b
}

// corroborated reports whether no level at or above level accepted a run
// and at least need runs at or above it were rejected outright, at levels
// none of whose runs was noisy (a stall, too close to call, a busy box:
// what confirmation is for).
func (s *levelState) corroborated(level, need int) bool {
	rejected := 0
	for _, r := range s.levels {
		if r.level < level {
			continue
		}
		if r.acc > 0 {
			return false
		}
		if !r.noisy {
			rejected += r.rej
		}
	}
	return rejected >= need
}

// conflicts are the levels rejected so far below the highest that held,
// in ascending order.
func (s *levelState) conflicts(b Bracket) []int {
	var out []int
	for _, r := range s.levels {
		if held, _ := r.verdict(s.mostRuns()); !held && r.level < b.Held {
			out = append(out, r.level)
		}
	}
	slices.Sort(out)
	return out
}

// heldAbove is the lowest level that holds above low (-1: none).
func (s *levelState) heldAbove(low int) int {
	best := -1
	for _, r := range s.levels {
		if held, _ := r.verdict(s.mostRuns()); held && r.level > low && (best < 0 || r.level < best) {
			best = r.level
		}
	}
	return best
}

// pending are the levels to run again, the bracket's ends first: each
// unsettled level that is noisy, the first rejection before any level
// held, in conflict, or (when the search has ended in a break, or at the
// cap after a level broke) an end of the final pair.
func (s *levelState) pending(b Bracket, ended Next) []int {
	most := s.mostRuns()
	if most < 2 {
		return nil
	}
	want := map[int]bool{}
	for _, r := range s.levels {
		if r.noisy {
			want[r.level] = true
		}
	}
	if s.firstBroke >= 0 && s.firstBrokeAlone {
		want[s.firstBroke] = true
	}
	for _, low := range s.conflicts(b) {
		want[low] = true
		if h := s.heldAbove(low); h >= 0 {
			want[h] = true
		}
	}
	// The final pair's ends; the --max level a run ends Done at only
	// when a level broke in it (--max inside the break's interval): a run
	// that held every level up to --max has no break to confirm.
	if ended.End && (ended.Verdict == Broken || ended.Verdict == Done && s.firstBroke >= 0) {
		if b.Held >= 0 {
			want[b.Held] = true
		}
		if b.Broke >= 0 {
			want[b.Broke] = true
		}
	}
	var out []int
	for l := range want {
		r := s.levels[l]
		if r == nil || r.runs() >= most {
			continue
		}
		if _, settled := r.verdict(most); !settled {
			out = append(out, l)
		}
	}
	slices.SortFunc(out, func(x, y int) int { return s.priority(x, b) - s.priority(y, b) })
	return out
}

// priority orders levels to run again: the broken end, the held end, then
// the others from the lowest.
func (s *levelState) priority(l int, b Bracket) int {
	switch l {
	case b.Broke:
		return -2
	case b.Held:
		return -1
	}
	return l
}

// finish is the run's end once nothing is left to run again: a conflict
// that persisted, a break whose every rejection was weak, or a box busy
// in most phases whose runs of one level disagreed, leaves the break
// inconclusive. A box busy throughout whose runs all agreed keeps its
// verdict when they were not all too close to call: the load did not move
// it, and each phase names it.
func (s *levelState) finish(mv Next) Next {
	if mv.Verdict != Broken && mv.Verdict != Done {
		return mv
	}
	b := mv.Bracket
	if len(b.Conflicts) > 0 {
		c := b.Conflicts[0]
		lo, hi := s.levels[c.Low], s.levels[c.High]
		mv.Verdict = Inconclusive
		mv.Reason = fmt.Sprintf("the levels conflict: %d %s was rejected in %d of %d runs below %d, which held in %d of %d — the server's capacity varied more than one bracket can say (%s)",
			c.Low, s.p.Mode.Unit(), lo.rej+lo.stall, lo.runs(), c.High, hi.acc, hi.runs(), s.pairText(b))
		return mv
	}
	if r := s.levels[b.Broke]; mv.Verdict == Broken && s.mostRuns() > 1 && r != nil && r.rej > 0 && r.rej == r.weak {
		mv.Verdict = Inconclusive
		mv.Reason = fmt.Sprintf("each rejection of %d %s (%d of %d runs) was judged on a busy box (other processes, or the hypervisor's steal, used more than a quarter of a core for more than half of it) and was within one response of the SLA: the box's load alone could have made it (%s)",
			b.Broke, s.p.Mode.Unit(), r.rej, r.runs(), s.pairText(b))
		return mv
	}
	if busy, n := s.busyPhases(); s.mostRuns() > 1 && busy*2 > n {
		if split := s.split(); split >= 0 {
			mv.Verdict = Inconclusive
			mv.Reason = fmt.Sprintf("the box was busy in %d of %d phases (other processes, or the hypervisor's steal, used more than a quarter of a core for more than half of each) and the runs of %d %s disagreed: the load cannot be told from the server's (%s)",
				busy, n, split, s.p.Mode.Unit(), s.pairText(b))
		}
	}
	return mv
}

// split is the lowest level whose runs disagreed (-1: none): one accepted
// and one rejected (a stall included).
func (s *levelState) split() int {
	low := -1
	for _, r := range s.levels {
		if r.acc > 0 && r.rej+r.stall > 0 && (low < 0 || r.level < low) {
			low = r.level
		}
	}
	return low
}

// busyPhases counts the judged phases run on a busy box, of all.
func (s *levelState) busyPhases() (busy, n int) {
	for _, j := range s.judged {
		if j.Evidence.Busy {
			busy++
		}
	}
	return busy, len(s.judged)
}

// pairText names the bracket so far: "held 32, broke at 33".
func (s *levelState) pairText(b Bracket) string {
	switch {
	case b.Held >= 0 && b.Broke >= 0:
		return fmt.Sprintf("held %d, broke at %d", b.Held, b.Broke)
	case b.Broke >= 0:
		return fmt.Sprintf("no level held; broke at %d", b.Broke)
	case b.Held >= 0:
		return fmt.Sprintf("held %d", b.Held)
	}
	return "no level judged"
}
