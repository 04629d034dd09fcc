package judge

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// outcome is one simulated run of a level: accepted, and its evidence.
type outcome struct {
	ok bool
	ev Evidence
}

var (
	held   = outcome{ok: true}
	rej    = outcome{}
	stall  = outcome{ev: Evidence{Stall: &Stall{Failures: 24, Of: 24}}}
	closeR = outcome{ev: Evidence{Close: true}}
	busyOK = outcome{ok: true, ev: Evidence{Busy: true}}
	busyR  = outcome{ev: Evidence{Busy: true}}
	weakR  = outcome{ev: Evidence{Busy: true, Close: true}}
)

// simulate runs Decide against a server whose run r (1-based) of a level
// gives at(level, r).
func simulate(p Plan, at func(level, run int) outcome) ([]int, []Role, Next) {
	var judged []*Judged
	var levels []int
	var roles []Role
	runs := map[int]int{}
	for len(judged) < 200 {
		mv := Decide(p, judged, 0)
		if mv.End {
			return levels, roles, mv
		}
		runs[mv.Level]++
		o := at(mv.Level, runs[mv.Level])
		j := &Judged{Judgement: Judgement{Accepted: true, Judged: true}, Index: len(judged), Target: mv.Level, Role: mv.Role, Evidence: o.ev}
		if !o.ok {
			j.Judgement = broken(fmt.Sprintf("rejected at %d", mv.Level))
		}
		judged = append(judged, j)
		levels, roles = append(levels, mv.Level), append(roles, mv.Role)
	}
	panic("the search did not end")
}

// capacityWith is a server of the given capacity whose run r of level l
// is noise[l][r-1] when set.
func capacityWith(capacity int, noise map[int][]outcome) func(int, int) outcome {
	return func(l, r int) outcome {
		if n := noise[l]; r <= len(n) {
			return n[r-1]
		}
		if l <= capacity {
			return held
		}
		return rej
	}
}

var confirmPlan = Plan{Mode: Requests, Conns: 8, Levels: Levels{Start: 8, Climb: Search{Growth: 2, Resolution: 1}}, Phase: time.Second, Accept: p9999, Repeat: 3}

// The confirmation rules, one row per branch. The model break is 32/33 in
// every row but the last ones; each row's noise would have decided a
// false break with one run per level.
func TestConfirmRules(t *testing.T) {
	linear := Plan{Mode: Requests, Conns: 8, Levels: Levels{Start: 8, Climb: Linear{Pace: 8}}, Phase: time.Second, Accept: p9999, Repeat: 3}
	for _, c := range []struct {
		name    string
		plan    Plan
		at      func(int, int) outcome
		levels  []int
		verdict Verdict
		held    int
		broke   int
		reason  string
	}{
		{"quiet: only the final pair runs again", confirmPlan, capacityWith(32, nil),
			[]int{8, 16, 32, 64, 48, 40, 36, 34, 33, 32, 33}, Broken, 32, 33, "rejected at 33"},
		{"the first rejection before any level held runs again after the level below", confirmPlan, capacityWith(32, map[int][]outcome{8: {rej}}),
			[]int{8, 4, 8, 16, 8, 32, 64, 48, 40, 36, 34, 33, 32, 33}, Broken, 32, 33, ""},
		{"a stall abstains: the level held in its other runs", confirmPlan, capacityWith(32, map[int][]outcome{16: {stall}}),
			[]int{8, 16, 12, 16, 32, 16, 64, 48, 40, 36, 34, 33, 32, 33}, Broken, 32, 33, ""},
		{"a stall in every run is a break", confirmPlan, capacityWith(32, map[int][]outcome{16: {stall, stall, stall}}),
			nil, Broken, 15, 16, ""},
		{"too close to call: run again, the majority holds", confirmPlan, capacityWith(32, map[int][]outcome{33: {closeR, held, held}, 34: {closeR, held, held}}),
			nil, Broken, 34, 35, ""},
		{"a busy box's rejection runs again before the bracket moves", confirmPlan, capacityWith(32, map[int][]outcome{16: {busyR}}),
			[]int{8, 16, 12, 16, 32, 16, 64, 48, 40, 36, 34, 33, 32, 33}, Broken, 32, 33, ""},
		{"a busy box's hold stands: only the final pair runs again", confirmPlan, capacityWith(32, map[int][]outcome{16: {busyOK}, 32: {busyOK}}),
			[]int{8, 16, 32, 64, 48, 40, 36, 34, 33, 32, 33}, Broken, 32, 33, ""},
		// 8 fails once and 4 every time: the search turns down, 8 holds
		// when run again, 4 stays rejected below it.
		{"a conflict that persists ends inconclusive", confirmPlan, capacityWith(32, map[int][]outcome{8: {rej}, 4: {rej, rej, rej}}),
			nil, Inconclusive, 32, 33, "the levels conflict: 4 concurrent requests was rejected in 2 of 2 runs below 8, which held in 2 of 3"},
		{"a conflict resolved by re-runs is none", confirmPlan, capacityWith(32, map[int][]outcome{24: {rej}}),
			nil, Broken, 32, 33, ""},
		{"busy in most phases, the runs agreeing: the verdict stands", confirmPlan, func(l, r int) outcome {
			if l <= 32 {
				return busyOK
			}
			return busyR
		}, nil, Broken, 32, 33, "rejected at 33"},
		// The break's every rejection on a busy box by one response: its
		// runs agree, and still brk cannot tell the box's load from the
		// server's (a CI run broke at 16 on p99 100.4 ms against
		// --max-p99 100ms, where a quiet box reads 80 ms).
		{"weak rejections in every run of the break: inconclusive", confirmPlan, func(l, r int) outcome {
			if l <= 32 {
				return busyOK
			}
			return weakR
		}, nil, Inconclusive, 32, 33, "each rejection of 33 concurrent requests (3 of 3 runs) was judged on a busy box"},
		{"two weak rejections do not settle a level: its third run does", confirmPlan, capacityWith(32, map[int][]outcome{33: {weakR, weakR}}),
			[]int{8, 16, 32, 64, 48, 40, 36, 34, 33, 32, 33, 33}, Broken, 32, 33, "rejected at 33"},
		{"weak rejections in 2 of 3 runs of the break, a hold in the third: inconclusive", confirmPlan, func(l, r int) outcome {
			switch {
			case l == 33 && r < 3:
				return weakR
			case l <= 33:
				return busyOK
			}
			return busyR
		}, nil, Inconclusive, 32, 33, "each rejection of 33 concurrent requests (2 of 3 runs) was judged on a busy box"},
		{"busy in most phases, the runs of a level disagreeing: inconclusive", confirmPlan, func(l, r int) outcome {
			switch {
			case l == 16 && r == 1:
				return busyR
			case l <= 32:
				return busyOK
			}
			return busyR
		}, nil, Inconclusive, 32, 33, "and the runs of 16 concurrent requests disagreed"},
		{"the linear ramp confirms its final pair", linear, capacityWith(32, nil),
			[]int{8, 16, 24, 32, 40, 32, 40}, Broken, 32, 40, ""},
		{"Repeat 1: one noisy phase decides a false break, as before", func() Plan { p := confirmPlan; p.Repeat = 1; return p }(), capacityWith(32, map[int][]outcome{8: {rej}}),
			[]int{8, 4, 6, 7}, Broken, 7, 8, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			levels, roles, end := simulate(c.plan, c.at)
			if c.levels != nil && !equalInts(levels, c.levels) {
				t.Fatalf("levels %v (%s), want %v", levels, rolesText(roles), c.levels)
			}
			b := end.Bracket
			if end.Verdict != c.verdict || b.Held != c.held || b.Broke != c.broke || !strings.Contains(end.Reason, c.reason) {
				t.Fatalf("end %v %d/%d %q after %v, want %v %d/%d %q", end.Verdict, b.Held, b.Broke, end.Reason, levels, c.verdict, c.held, c.broke, c.reason)
			}
			if c.plan.Repeat > 1 && end.Verdict == Broken && (!b.BrokeSure || b.Held >= 0 && !b.HeldSure) {
				t.Fatalf("an unconfirmed final pair: %+v", b)
			}
			// Never two runs of a level in a row while another level
			// needs one: here only the last confirmation may follow its
			// own level.
			for i := 1; i < len(levels)-1; i++ {
				if levels[i] == levels[i-1] {
					t.Fatalf("level %d twice in a row at phase %d: %v", levels[i], i, levels)
				}
			}
		})
	}
}

// A level's verdict from its runs: the majority of most; a stall
// abstains unless every run stalled; unsettled while runs remain.
func TestLevelVerdict(t *testing.T) {
	for _, c := range []struct {
		runs          []outcome
		most          int
		held, settled bool
	}{
		{[]outcome{held}, 1, true, true},
		{[]outcome{rej}, 1, false, true},
		{[]outcome{stall}, 1, false, true},
		{[]outcome{held}, 3, true, false},
		{[]outcome{rej}, 3, false, false},
		{[]outcome{held, held}, 3, true, true},
		{[]outcome{rej, rej}, 3, false, true},
		{[]outcome{held, rej}, 3, false, false}, // the latest, unsettled
		{[]outcome{rej, held}, 3, true, false},
		{[]outcome{held, rej, held}, 3, true, true},
		{[]outcome{rej, held, rej}, 3, false, true},
		{[]outcome{stall, stall}, 3, false, false},
		{[]outcome{stall, stall, stall}, 3, false, true},
		{[]outcome{stall, held, stall}, 3, true, true},
		{[]outcome{rej, stall}, 3, false, true},
		{[]outcome{held, rej, stall}, 3, false, true}, // a tie: not held
		{[]outcome{held, rej}, 2, false, true},
		{[]outcome{weakR}, 1, false, true},
		{[]outcome{weakR, weakR}, 3, false, false}, // weak: the last run decides
		{[]outcome{weakR, rej}, 3, false, true},
		{[]outcome{weakR, weakR, weakR}, 3, false, true},
		{[]outcome{weakR, weakR, held}, 3, false, true},
		{[]outcome{weakR, stall}, 3, false, false},
		{[]outcome{closeR, closeR}, 3, false, true}, // too close on a quiet box: settled
		{[]outcome{busyR, busyR}, 3, false, true},   // a busy box's clear rejections: settled
	} {
		r := &levelRuns{level: 8}
		for i, o := range c.runs {
			j := &Judged{Judgement: Judgement{Accepted: true}, Evidence: o.ev}
			if !o.ok {
				j.Judgement = broken("x")
			}
			r.add(i, j)
		}
		if held, settled := r.verdict(c.most); held != c.held || settled != c.settled {
			t.Errorf("%d runs of most %d (%+v): held %v settled %v, want %v %v", len(c.runs), c.most, *r, held, settled, c.held, c.settled)
		}
	}
}

// A budget that ends the search before its pair is confirmed ends
// inconclusive with the pair; a confirmed pair stays a break.
func TestBudgetBeforeConfirmation(t *testing.T) {
	p := confirmPlan
	p.Budget, p.PhaseCost = time.Minute, 11*time.Second
	j := func(level int, jd Judgement) *Judged { return &Judged{Judgement: jd, Target: level} }
	ok := Judgement{Accepted: true, Judged: true}
	hist := []*Judged{j(8, ok), j(16, ok), j(32, broken("b"))}
	mv := Decide(p, hist, 55*time.Second)
	if !mv.End || mv.Verdict != Inconclusive || !strings.Contains(mv.Reason, "before it confirmed its bracket (held 16, broke at 32)") {
		t.Fatalf("unconfirmed: %+v", mv)
	}
	hist = append(hist, j(16, ok), j(32, broken("b")))
	mv = Decide(p, hist, 55*time.Second)
	if !mv.End || mv.Verdict != Broken || !mv.Bracket.HeldSure || !mv.Bracket.BrokeSure {
		t.Fatalf("confirmed: %+v", mv)
	}
	// The pair 24/28 is not confirmed (28 split its runs), but 30 was
	// rejected in 2 of 2 and 24 held in its only run: the break lies
	// between them.
	hist = []*Judged{j(8, ok), j(16, ok), j(32, broken("b")), j(24, ok), j(28, ok), j(30, broken("b30")), j(30, broken("b30")), j(28, broken("b"))}
	mv = Decide(p, hist, 55*time.Second)
	if !mv.End || mv.Verdict != Broken || mv.Bracket.Held != 24 || mv.Bracket.Broke != 30 ||
		!strings.HasPrefix(mv.Reason, "b30; the budget of 1m ended the search before it confirmed the pair 24/28: the break lies between 24, which held in 1 of 1 runs, and 30, rejected in 2 of 2") {
		t.Fatalf("settled bracket: %+v", mv)
	}
	// Corroborated: 30 and 32 rejected their only runs and nothing at or
	// above 30 held: two rejections, the majority of three.
	hist = []*Judged{j(8, ok), j(16, ok), j(32, broken("b")), j(24, ok), j(28, ok), j(30, broken("b30")), j(28, broken("b"))}
	if mv = Decide(p, hist, 55*time.Second); !mv.End || mv.Verdict != Broken || mv.Bracket.Held != 24 || mv.Bracket.Broke != 30 {
		t.Fatalf("corroborated: %+v", mv)
	}
	// The same two rejections on a busy box corroborate nothing: each is
	// a level confirmation would run again.
	busy := func(level int) *Judged {
		jd := j(level, broken("b"))
		jd.Evidence.Busy = true
		return jd
	}
	hist = []*Judged{j(8, ok), j(16, ok), busy(32), j(24, ok), j(28, ok), busy(30), j(28, broken("b"))}
	if mv = Decide(p, hist, 55*time.Second); !mv.End || mv.Verdict != Inconclusive {
		t.Fatalf("busy rejections corroborated: %+v", mv)
	}
	// 32 rejected once and 24 split: nothing settled or corroborated.
	hist = []*Judged{j(8, ok), j(16, ok), j(32, broken("b")), j(24, broken("b")), j(24, ok)}
	if mv = Decide(p, hist, 55*time.Second); !mv.End || mv.Verdict != Inconclusive {
		t.Fatalf("nothing settled: %+v", mv)
	}
}

// TestStoppedAfterBreak: a phase that cannot be judged (a client that
// fell behind, a shard that stopped) after a rejection ends the run as the
// budget's end does: broken at the bracket when both its ends are
// confirmed; else broken at the bracket that needs no more runs, wider,
// saying the pair was not confirmed; else inconclusive with the
// unconfirmed pair. Before, the bracket stood unconfirmed: a sharded run
// on a busy box ended Broken on one rejection that was to run again,
// while the shard that had stopped ended inconclusive.
func TestStoppedAfterBreak(t *testing.T) {
	p := searchPlan
	p.Repeat = 3
	j := func(level int, jd Judgement) *Judged { return &Judged{Judgement: jd, Target: level} }
	ok := Judgement{Accepted: true, Judged: true}
	unf := inconclusive("target unfulfilled: x")
	for _, c := range []struct {
		name        string
		phases      []*Judged
		verdict     Verdict
		held, broke int
		reason      string
	}{
		{"both ends confirmed", []*Judged{j(8, ok), j(8, ok), j(16, broken("b16")), j(16, broken("b16")), j(12, unf)},
			Broken, 8, 16, "b16; search stopped at 12: target unfulfilled: x"},
		{"a corroborated rejection", []*Judged{j(8, ok), j(8, ok), j(32, broken("b32")), j(32, broken("b32")), j(12, ok), j(16, broken("b16")), j(14, unf)},
			Broken, 12, 16, "b16; the search stopped at 14 before it confirmed the pair 12/16 (target unfulfilled: x): the break lies between 12, which held in 1 of 1 runs, and 16, rejected in 1 of 1"},
		{"a wider settled bracket", []*Judged{j(8, ok), j(8, ok), j(32, broken("b32")), j(32, broken("b32")), j(16, ok), j(24, broken("b24")), j(24, ok), j(20, unf)},
			Broken, 16, 32, "b32; the search stopped at 20 before it confirmed the pair 24/32 (target unfulfilled: x): the break lies between 16, which held in 1 of 1 runs, and 32, rejected in 2 of 2"},
		{"one rejection to run again", []*Judged{j(8, ok), j(16, broken("b16")), j(16, unf)},
			Inconclusive, 8, 16, "the search stopped at 16 before it confirmed its bracket (held 8, broke at 16): target unfulfilled: x; b16"},
	} {
		mv := Decide(p, c.phases, 0)
		if !mv.End || mv.Verdict != c.verdict || mv.Bracket.Held != c.held || mv.Bracket.Broke != c.broke || mv.Reason != c.reason {
			t.Errorf("%s: %v %d/%d %q; want %v %d/%d %q", c.name, mv.Verdict, mv.Bracket.Held, mv.Bracket.Broke, mv.Reason,
				c.verdict, c.held, c.broke, c.reason)
		}
	}
}
