package judge

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

// capacityPhaser accepts every level up to capacity and rejects above it;
// flaky levels are rejected on every second run.
type capacityPhaser struct {
	capacity int
	flaky    map[int]bool
	runs     map[int]int
	levels   []int
}

func (c *capacityPhaser) RunPhase(_ context.Context, spec PhaseSpec) (*Measurement, error) {
	c.levels = append(c.levels, spec.Level)
	c.runs[spec.Level]++
	ok := spec.Level <= c.capacity && !(c.flaky[spec.Level] && c.runs[spec.Level]%2 == 0)
	if ok {
		return measured(1000, 0, 0, okSetups, 4), nil
	}
	return measured(900, 100, 0, okSetups, 4), nil
}

type nopObserver struct{ roles []Role }

func (h *nopObserver) PhaseStarted(int, int, int, Role, Bracket, time.Duration) {}
func (h *nopObserver) PhaseFinished(j *Judged)                                  { h.roles = append(h.roles, j.Role) }

var linear = Plan{Mode: Requests, Conns: 4, Levels: Levels{Start: 4, Climb: Linear{Pace: 32}}, Phase: time.Second, Accept: p9999}

// The linear ramp, refined, bisects the bracket in single units of the
// level (a total, not a depth per connection).
func TestRefineBisectsToAdjacentLevels(t *testing.T) {
	for _, c := range []struct {
		name       string
		capacity   int
		flaky      map[int]bool
		repeat     int
		wantLevels []int
		lo, hi     int
	}{
		{"bisect", 52, nil, 1, []int{4, 36, 68, 52, 60, 56, 54, 53}, 52, 53},
		{"repeat: both ends of the final pair run twice", 52, nil, 2, []int{4, 36, 68, 52, 60, 56, 54, 53, 52, 53}, 52, 53},
		// Of 2 runs, a split is a rejection; the new held end runs twice
		// too, in a row only because nothing else is left to run.
		{"repeat: a held end rejected on its second run is rejected", 52, map[int]bool{52: true}, 2, []int{4, 36, 68, 52, 60, 56, 54, 53, 52, 44, 48, 50, 51, 51}, 51, 52},
		{"break at the first phase: no probe below it", 0, nil, 1, []int{4}, -1, 4},
		{"adjacent already", 36, nil, 1, []int{4, 36, 68, 52, 44, 40, 38, 37}, 36, 37},
	} {
		t.Run(c.name, func(t *testing.T) {
			ph := &capacityPhaser{capacity: c.capacity, flaky: c.flaky, runs: map[int]int{}}
			hooks := &nopObserver{}
			plan := linear
			plan.Levels.Climb, plan.Repeat = Linear{Pace: 32, Refine: true}, c.repeat
			out := NewRamp(ph, plan, hooks).Run(context.Background())
			if !equalInts(ph.levels, c.wantLevels) {
				t.Fatalf("phases at levels %v, want %v", ph.levels, c.wantLevels)
			}
			if out.Verdict != Broken || out.LastAccepted != c.lo || out.FirstRejected != c.hi {
				t.Fatalf("outcome %v %d/%d (%s), want broken %d/%d", out.Verdict, out.LastAccepted, out.FirstRejected, out.Reason, c.lo, c.hi)
			}
			if !strings.Contains(out.Reason, "success 90%") {
				t.Fatalf("reason %q", out.Reason)
			}
			seen := map[int]bool{}
			for i, r := range hooks.roles {
				want := RoleRamp
				switch {
				case seen[ph.levels[i]]:
					want = RoleRepeat
				case i >= 3:
					want = RoleBisect
				}
				seen[ph.levels[i]] = true
				if r != want {
					t.Fatalf("phase %d (level %d) role %v, want %v", i, ph.levels[i], r, want)
				}
			}
		})
	}
}

func TestNoRefineStopsAtFirstRejection(t *testing.T) {
	ph := &capacityPhaser{capacity: 52, runs: map[int]int{}}
	out := NewRamp(ph, linear, &nopObserver{}).Run(context.Background())
	if !equalInts(ph.levels, []int{4, 36, 68}) || out.LastAccepted != 36 || out.FirstRejected != 68 || out.Bracket.BrokePhase != 2 || out.Bracket.HeldPhase != 1 {
		t.Fatalf("levels %v outcome %+v", ph.levels, out)
	}
}

// An explicit max is tested between pace steps, and its acceptance ends
// the run Done.
func TestLinearMax(t *testing.T) {
	plan := Plan{Mode: Rate, Conns: 1, Levels: Levels{Start: 2, Max: 10, Climb: Linear{Pace: 3}}, Phase: time.Second, Accept: p9999}
	ph := &capacityPhaser{capacity: 100, runs: map[int]int{}}
	out := NewRamp(ph, plan, &nopObserver{}).Run(context.Background())
	if !equalInts(ph.levels, []int{2, 5, 8, 10}) || out.Verdict != Done || out.LastAccepted != 10 {
		t.Fatalf("levels %v outcome %+v", ph.levels, out)
	}
}

// search simulates a search against a capacity: the levels it visits, in
// order, with their roles, and the end (simulate, without evidence).
func search(p Plan, accepts func(level, run int) bool) ([]int, []Role, Next) {
	return simulate(p, func(l, r int) outcome {
		if accepts(l, r) {
			return held
		}
		return rej
	})
}

func below(capacity int) func(int, int) bool { return func(l, _ int) bool { return l <= capacity } }

var searchPlan = Plan{Mode: Requests, Conns: 8, Levels: Levels{Start: 8, Climb: Search{Growth: 2, Resolution: 1}}, Phase: time.Second, Accept: p9999}

// The search's moves, one table row per branch: growth, bisection, the
// downward search, the cap, the engine's bound, repetitions, a percentage
// resolution and an inconclusive probe.
func TestDecideSearch(t *testing.T) {
	capped := searchPlan
	capped.Levels.Max = 40
	pct := searchPlan
	pct.Levels.Climb = Search{Growth: 2, ResolutionPct: 10}
	rep := searchPlan
	rep.Repeat = 3
	grow3 := searchPlan
	grow3.Levels.Climb = Search{Growth: 1.5, Resolution: 1}
	for _, c := range []struct {
		name    string
		plan    Plan
		accepts func(level, run int) bool
		levels  []int
		roles   string
		verdict Verdict
		held    int
		broke   int
		reason  string
	}{
		{"grow then bisect to adjacent", searchPlan, below(38), []int{8, 16, 32, 64, 48, 40, 36, 38, 39}, "grow grow grow grow bisect bisect bisect bisect bisect", Broken, 38, 39, "rejected at 39"},
		{"a break between doublings that are already adjacent", searchPlan, below(1 << 20), nil, "", Inconclusive, 8 * MaxLevel, -1, "brk's bound"},
		{"downward: holds 3", searchPlan, below(3), []int{8, 4, 2, 3}, "grow down down bisect", Broken, 3, 4, "rejected at 4"},
		{"downward: even 1 fails", searchPlan, below(0), []int{8, 4, 2, 1}, "grow down down down", Broken, -1, 1, "rejected at 1"},
		{"the cap completed and accepted", capped, below(100), []int{8, 16, 32, 40}, "grow grow grow grow", Done, 40, -1, "max level 40 concurrent requests (5 per connection) completed and accepted"},
		{"the cap rejected: bisect below it", capped, below(35), []int{8, 16, 32, 40, 36, 34, 35}, "grow grow grow grow bisect bisect bisect", Broken, 35, 36, "rejected at 36"},
		{"resolution 10 % of the held level", pct, below(38), []int{8, 16, 32, 64, 48, 40, 36, 38}, "grow grow grow grow bisect bisect bisect bisect", Broken, 38, 40, "rejected at 40"},
		{"growth 1.5", grow3, below(20), []int{8, 12, 18, 27, 22, 20, 21}, "grow grow grow grow bisect bisect bisect", Broken, 20, 21, ""},
		// Of up to 3 runs: the first rejection before any level held is
		// run again after the level below it, and both ends of the final
		// pair until 2 runs agree; never twice in a row.
		{"repeat: the first rejection and the final pair confirmed", rep, below(5), []int{8, 4, 8, 6, 5, 6, 5}, "grow down repeat bisect bisect repeat repeat", Broken, 5, 6, "rejected at 6"},
		// 12 holds, fails its second run (the held end of the first
		// pair), and its third run decides: it held in 2 of 3.
		{"repeat: a flaky end decided by its third run", rep, func(l, run int) bool { return l <= 12 && !(l == 12 && run == 2) }, []int{8, 16, 12, 14, 13, 12, 10, 11, 12, 13}, "grow grow bisect bisect bisect repeat bisect bisect repeat repeat", Broken, 12, 13, "rejected at 13"},
	} {
		t.Run(c.name, func(t *testing.T) {
			levels, roles, end := search(c.plan, c.accepts)
			if c.levels != nil && !equalInts(levels, c.levels) {
				t.Fatalf("levels %v, want %v", levels, c.levels)
			}
			if c.roles != "" && rolesText(roles) != c.roles {
				t.Fatalf("roles %q, want %q", rolesText(roles), c.roles)
			}
			if b := end.Bracket; c.plan.Repeat == 3 && (b.HeldRuns < 2 || b.BrokeRun < 2 || !b.HeldSure || !b.BrokeSure) {
				t.Fatalf("the final pair is not confirmed: %+v", b)
			}
			if end.Verdict != c.verdict || end.Bracket.Held != c.held || end.Bracket.Broke != c.broke || !strings.Contains(end.Reason, c.reason) {
				t.Fatalf("end %+v, want %v %d/%d %q", end, c.verdict, c.held, c.broke, c.reason)
			}
		})
	}
}

func rolesText(rs []Role) string {
	var b []string
	for _, r := range rs {
		b = append(b, r.String())
	}
	return strings.Join(b, " ")
}

// The search ends in at most ⌈log2(break/start)⌉ + ⌈log2(bracket/
// resolution)⌉ + 1 phases on an adjacent pair around the capacity, for
// every capacity from 8 to 5,000.
func TestDecideSearchBound(t *testing.T) {
	for capacity := 8; capacity <= 5000; capacity++ {
		levels, _, end := search(searchPlan, below(capacity))
		b := end.Bracket
		if end.Verdict != Broken || b.Held != capacity || b.Broke != capacity+1 {
			t.Fatalf("capacity %d: end %+v", capacity, end)
		}
		breakAt := capacity + 1
		grow := int(math.Ceil(math.Log2(float64(breakAt) / 8)))
		bracket := 8 << grow / 2
		bound := grow + int(math.Ceil(math.Log2(float64(bracket)))) + 1
		if len(levels) > bound {
			t.Fatalf("capacity %d: %d phases %v, bound %d", capacity, len(levels), levels, bound)
		}
		if b.HeldPhase < 0 || levels[b.HeldPhase] != b.Held || levels[b.BrokePhase] != b.Broke {
			t.Fatalf("capacity %d: final pair's phases %+v in %v", capacity, b, levels)
		}
	}
}

// An inconclusive phase while growing ends the run inconclusive; one
// while bisecting ends it broken at the bracket so far, saying why.
func TestDecideInconclusive(t *testing.T) {
	j := func(level int, jd Judgement) *Judged { return &Judged{Judgement: jd, Target: level} }
	ok := Judgement{Accepted: true, Judged: true}
	unf := inconclusive("target unfulfilled: x")
	if mv := Decide(searchPlan, []*Judged{j(8, ok), j(16, unf)}, 0); !mv.End || mv.Verdict != Inconclusive || mv.Bracket.Held != 8 || mv.Reason != "target unfulfilled: x" {
		t.Fatalf("growing: %+v", mv)
	}
	mv := Decide(searchPlan, []*Judged{j(8, ok), j(16, broken("b")), j(12, unf)}, 0)
	if !mv.End || mv.Verdict != Broken || mv.Bracket.Held != 8 || mv.Bracket.Broke != 16 || mv.Reason != "b; search stopped at 12: target unfulfilled: x" {
		t.Fatalf("bisecting: %+v", mv)
	}
	if mv := Decide(searchPlan, []*Judged{j(8, ok), j(16, Judgement{Stop: true, Verdict: Interrupted})}, 0); !mv.End || mv.Verdict != Interrupted {
		t.Fatalf("interrupted: %+v", mv)
	}
}

// The budget: no phase starts that could end past it; the run ends
// inconclusive while nothing broke, broken at the bracket after a break.
// A slotted (sharded) plan counts phases × slot, not a clock.
func TestDecideBudget(t *testing.T) {
	p := searchPlan
	p.Budget, p.PhaseCost = 5*time.Minute, 11*time.Second
	j := func(level int, jd Judgement) *Judged { return &Judged{Judgement: jd, Target: level} }
	ok := Judgement{Accepted: true, Judged: true}
	hist := []*Judged{j(8, ok), j(16, ok)}
	if mv := Decide(p, hist, 289*time.Second); mv.End {
		t.Fatalf("a phase that ends at 300 s is within the budget: %+v", mv)
	}
	mv := Decide(p, hist, 290*time.Second)
	if !mv.End || mv.Verdict != Inconclusive || mv.Reason != "held 16; not yet broken at 32 concurrent requests — the budget of 5m ended the run" {
		t.Fatalf("growing past the budget: %+v", mv)
	}
	hist = append(hist, j(32, broken("b")))
	mv = Decide(p, hist, 290*time.Second)
	if !mv.End || mv.Verdict != Broken || mv.Bracket.Held != 16 || mv.Bracket.Broke != 32 || !strings.Contains(mv.Reason, "b; the budget of 5m ended the search at a bracket of 16–32") {
		t.Fatalf("bisecting past the budget: %+v", mv)
	}
	// Slotted: the Ramp counts 27 phases × 11 s = 297 s; a 28th would end at 308 s.
	p.Slotted = true
	r := NewRamp(&capacityPhaser{capacity: 1 << 30, runs: map[int]int{}}, p, &nopObserver{})
	r.out.Phases = make([]*Judged, 27)
	if got := r.spent(); got != 297*time.Second {
		t.Fatalf("slotted spent %s", got)
	}
}

// slowTail is a phase that met its success share, whose latencies are
// 10 ms but for the slowest 1.5 %: 183 ms (p99 183 ms, p98 10 ms).
func slowTail() *Measurement {
	m := measured(10000, 0, 0, okSetups, 4)
	m.Stats.Latency.Reset()
	for i := 0; i < 1000; i++ {
		v := int64(10_000) // 10 ms
		if i >= 985 {
			v = 183_000 // the slowest 1.5 %: 183 ms
		}
		m.Stats.Latency.RecordValue(v)
	}
	return m
}

func TestLatencyLimits(t *testing.T) {
	m := slowTail()
	plan := reqPlan
	plan.MaxP99 = 150 * time.Millisecond
	j := Judge(m, plan, 1, levelOf(plan, 2))
	if j.Verdict != Broken || !strings.Contains(j.Reason, "p99 183 ms above Plan.MaxP99 150ms") {
		t.Fatalf("judgement %+v", j)
	}
	plan.MaxP99 = 200 * time.Millisecond
	if j := Judge(m, plan, 1, levelOf(plan, 2)); !j.Accepted {
		t.Fatalf("p99 under the limit: %+v", j)
	}
	plan.MaxP999 = 100 * time.Millisecond
	if j := Judge(m, plan, 1, levelOf(plan, 2)); j.Verdict != Broken || !strings.Contains(j.Reason, "p99.9 183 ms above Plan.MaxP999 100ms") {
		t.Fatalf("p99.9: %+v", j)
	}
}

// TestLatencyLimitsOfAStarvedClient: a p99 above its limit while the
// client's process kept its goroutines waiting for a CPU (half the limit
// or more: it is below the timeout) is the client's: its workers read the
// responses late. Below that wait it is the server's.
func TestLatencyLimitsOfAStarvedClient(t *testing.T) {
	plan := reqPlan
	plan.MaxP99, plan.Timeout = 150*time.Millisecond, time.Second
	for _, c := range []struct {
		wait    time.Duration
		verdict Verdict
		reason  string
	}{
		{120 * time.Millisecond, Inconclusive, "the client was starved: this process's goroutines waited up to 120 ms (p99) for a CPU — other work in brk's process competes with its workers: run brk in a process of its own (p99 183 ms above Plan.MaxP99 150ms)"},
		{60 * time.Millisecond, Broken, "p99 183 ms above Plan.MaxP99 150ms"},
	} {
		m := slowTail()
		m.ProcessWait, m.ProcessWaitOK = c.wait, true
		j := Judge(m, plan, 1, levelOf(plan, 2))
		if j.Verdict != c.verdict || j.Reason != c.reason && c.verdict == Inconclusive || !strings.Contains(j.Reason, c.reason) {
			t.Errorf("process wait %v: %s (%s), want %s (%s)", c.wait, j.Verdict, j.Reason, c.verdict, c.reason)
		}
		if c.verdict == Inconclusive && !j.ClientBound {
			t.Errorf("process wait %v: not client-bound", c.wait)
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A search whose client cannot drive a level above one that held bisects
// below it: to the highest level the client can judge (inconclusive, the
// reason naming the lowest level it could not drive), or to the server's
// break when one lies below. A ramp, or a client-bound first level, ends
// the run there as before; so does any other inconclusive phase.
func TestSearchBelowTheClientsLimit(t *testing.T) {
	ok := Judgement{Accepted: true, Judged: true}
	cb := clientBound("the client was saturated: workers 97 % busy")
	other := inconclusive("setup impossible")
	// server: the judgement of a phase at level.
	run := func(p Plan, server func(level int) Judgement) ([]int, Next) {
		var hist []*Judged
		var levels []int
		for len(hist) < 100 {
			mv := Decide(p, hist, 0)
			if mv.End {
				return levels, mv
			}
			levels = append(levels, mv.Level)
			hist = append(hist, &Judged{Judgement: server(mv.Level), Index: len(hist), Target: mv.Level, Role: mv.Role})
		}
		t.Fatal("no end")
		return nil, Next{}
	}
	client := func(limit, capacity int) func(int) Judgement {
		return func(l int) Judgement {
			switch {
			case l >= limit:
				return cb
			case l > capacity:
				return broken(fmt.Sprintf("rejected at %d", l))
			}
			return ok
		}
	}
	for _, c := range []struct {
		name     string
		plan     Plan
		server   func(int) Judgement
		levels   []int
		verdict  Verdict
		held     int
		broke    int
		reasonIs string
	}{
		{"client limit above the last hold", searchPlan, client(100, 1<<30),
			[]int{8, 16, 32, 64, 128, 96, 112, 104, 100, 98, 99}, Inconclusive, 99, -1,
			"the client was saturated: workers 97 % busy — the lowest level the client could not drive: 100 concurrent requests (99 held)"},
		{"the server breaks below the client's limit", searchPlan, client(100, 80),
			[]int{8, 16, 32, 64, 128, 96, 80, 88, 84, 82, 81}, Broken, 80, 81, "rejected at 81"},
		{"the client's limit between the last hold and a rejection", searchPlan, func(l int) Judgement {
			switch {
			case l >= 128:
				return broken(fmt.Sprintf("rejected at %d", l))
			case l >= 100:
				return cb
			}
			return ok
		}, []int{8, 16, 32, 64, 128, 96, 112, 104, 100, 98, 99}, Broken, 99, 128,
			"rejected at 128; search stopped at 100: the client was saturated: workers 97 % busy"},
		{"client-bound first level", searchPlan, client(1, 1<<30), []int{8}, Inconclusive, -1, -1, "the client was saturated: workers 97 % busy"},
		{"a ramp ends at the client's limit", Plan{Mode: Requests, Conns: 8, Levels: Levels{Start: 8, Climb: Linear{Pace: 8}}, Phase: time.Second, Accept: p9999}, client(20, 1<<30),
			[]int{8, 16, 24}, Inconclusive, 16, -1, "the client was saturated: workers 97 % busy"},
		{"another inconclusive phase ends the search", searchPlan, func(l int) Judgement {
			if l >= 32 {
				return other
			}
			return ok
		}, []int{8, 16, 32}, Inconclusive, 16, -1, "setup impossible"},
	} {
		t.Run(c.name, func(t *testing.T) {
			levels, mv := run(c.plan, c.server)
			if fmt.Sprint(levels) != fmt.Sprint(c.levels) || mv.Verdict != c.verdict || mv.Bracket.Held != c.held || mv.Bracket.Broke != c.broke || mv.Reason != c.reasonIs {
				t.Errorf("levels %v, %v held %d broke %d, reason %q\nwant %v, %v held %d broke %d, reason %q",
					levels, mv.Verdict, mv.Bracket.Held, mv.Bracket.Broke, mv.Reason, c.levels, c.verdict, c.held, c.broke, c.reasonIs)
			}
		})
	}
}
