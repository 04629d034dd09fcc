package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/brk-bench/brk"
	"github.com/brk-bench/brk/bench"

	"github.com/brk-bench/brk/internal/e2ekit"
	"github.com/brk-bench/brk/internal/testenv"
)

func compileSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open("../schema/report-1.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("report-1.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("report-1.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// validateReport checks a report against the schema and against what
// happened: counts add up, success_pct is succeeded ÷ attempted, levels
// follow start and pace, and last_accepted/first_rejected bracket the end.
func validateReport(t *testing.T, s *jsonschema.Schema, r *brk.Result, p brk.Plan) {
	t.Helper()
	p, err := p.Resolved() // a Load's settings in the older fields read below
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(doc); err != nil {
		t.Fatalf("report does not match the schema: %v\n%s", err, raw)
	}
	p.Defaults()
	// A level whose runs disagreed (a busy box) is settled by the
	// confirmation rules (internal/sched), not by its last run: it moves
	// neither end of the bracket the probes are checked against, and the
	// end is checked below.
	disagreed := levelsDisagreed(r)
	var lastAccepted, firstRejected *int
	steps := 0 // the linear ramp's steps so far: the phases that were neither a probe nor a repeat
	for i, ph := range r.Phases {
		c := ph.Counts
		sum := c.Succeeded + c.Timeout + c.Transport + c.Abandoned + c.Connect + c.ConnectTimeout + c.Status + c.Body + c.Protocol
		if c.Attempted != sum {
			t.Errorf("phase %d: attempted %d != succeeded + failures %d", i, c.Attempted, sum)
		}
		if c.Attempted > 0 {
			want := 100 * float64(c.Succeeded) / float64(c.Attempted)
			if math.Abs(ph.SuccessPct-want) > 1e-9 {
				t.Errorf("phase %d: success_pct %v, want %v", i, ph.SuccessPct, want)
			}
		}
		depth := p.Start + steps*p.Pace
		if !ph.Probe {
			steps++
		}
		if p.Max > 0 && depth > p.Max {
			depth = p.Max
		}
		level := depth * p.Conns
		if ph.Probe {
			// A refinement probe lies between the bracket found so far, at
			// any level (single units): its depth is ⌈level/conns⌉.
			level, depth = ph.Level, (ph.Level+p.Conns-1)/p.Conns
			// A bisection probe lies strictly inside; a repeat runs a
			// level already run (an end of the bracket, to confirm it).
			if ph.Role == "bisect" && (lastAccepted != nil && ph.Level <= *lastAccepted || firstRejected != nil && ph.Level >= *firstRejected) {
				t.Errorf("phase %d: probe at level %d outside the bracket %v..%v\n%s", i, ph.Level, deref(lastAccepted), deref(firstRejected), e2ekit.Describe(r))
			}
			if ph.Role != "bisect" && ph.Role != "repeat" {
				t.Errorf("phase %d: a probe with role %q", i, ph.Role)
			}
		} else if ph.Role != "ramp" {
			t.Errorf("phase %d: a linear ramp's phase with role %q", i, ph.Role)
		}
		if ph.Index != i || ph.Depth != depth || ph.Level != level {
			t.Errorf("phase %d: index %d depth %d level %d, want depth %d level %d", i, ph.Index, ph.Depth, ph.Level, depth, level)
		}
		if ph.LatencyMs.Count > 0 {
			h, err := hdrhistogram.Decode([]byte(ph.LatencyHdr))
			if err != nil {
				t.Fatalf("phase %d: latency_hdr does not decode: %v", i, err)
			}
			if uint64(h.TotalCount()) != ph.LatencyMs.Count {
				t.Errorf("phase %d: latency_hdr holds %d values, latency_ms.count %d", i, h.TotalCount(), ph.LatencyMs.Count)
			}
		}
		switch {
		case ph.Interrupted, slices.Contains(disagreed, ph.Level):
		case ph.Accepted:
			l := ph.Level
			lastAccepted = &l
		case r.Verdict == brk.VerdictBroken && (firstRejected == nil || ph.Probe && ph.Level < *firstRejected):
			l := ph.Level
			firstRejected = &l
		}
	}
	if len(disagreed) > 0 {
		// The bracket is then a level held and, above it, one rejected.
		ran := func(l *int, accepted bool) bool {
			return l != nil && slices.ContainsFunc(r.Phases, func(ph *brk.PhaseStats) bool {
				return ph.Level == *l && ph.Accepted == accepted && !ph.Interrupted
			})
		}
		if r.LastAccepted != nil && !ran(r.LastAccepted, true) || r.Verdict == brk.VerdictBroken &&
			(!ran(r.FirstRejected, false) || r.LastAccepted != nil && *r.FirstRejected <= *r.LastAccepted) {
			t.Errorf("held %v, broke at %v: not a level held and one rejected above it (the runs of %v disagreed)\n%s",
				deref(r.LastAccepted), deref(r.FirstRejected), disagreed, e2ekit.Describe(r))
		}
	} else {
		if !eqPtr(r.LastAccepted, lastAccepted) {
			t.Errorf("last_accepted %v, want %v\n%s", deref(r.LastAccepted), deref(lastAccepted), e2ekit.Describe(r))
		}
		if r.Verdict == brk.VerdictBroken && !eqPtr(r.FirstRejected, firstRejected) {
			t.Errorf("first_rejected %v, want %v\n%s", deref(r.FirstRejected), deref(firstRejected), e2ekit.Describe(r))
		}
	}
	if fr := r.FirstRejected; r.Verdict != brk.VerdictBroken && fr != nil {
		// An inconclusive run keeps the bracket it had when it stopped
		// (the runs of a level disagreed on a busy box: held 8, broke at
		// 9): its upper end is a level that a phase ran and did not
		// accept, above the last accepted one.
		notAccepted := slices.ContainsFunc(r.Phases, func(ph *brk.PhaseStats) bool { return ph.Level == *fr && !ph.Accepted })
		if r.Verdict != brk.VerdictInconclusive || !notAccepted || r.LastAccepted != nil && *fr <= *r.LastAccepted {
			t.Errorf("first_rejected %v on a %s run", *fr, r.Verdict)
		}
	}
	step := p.Pace * p.Conns
	if p.Refine {
		step = 1 // refined to adjacent levels: single units
	}
	if r.LastAccepted != nil && r.FirstRejected != nil && *r.FirstRejected != *r.LastAccepted+step && (p.Max == 0 || *r.FirstRejected != p.Max*p.Conns) {
		t.Errorf("bracket %d..%d is not one pace step", *r.LastAccepted, *r.FirstRejected)
	}
}

func eqPtr(a, b *int) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }

func TestReportsMatchSchemaAndWhatHappened(t *testing.T) {
	testenv.Parallel(t, testenv.Waits)
	s := compileSchema(t)
	demo := bench.Demo()
	fx, err := bench.StartFixture(demo.Fixture)
	if err != nil {
		t.Fatal(err)
	}
	defer fx.Close()
	plain, err := bench.StartFixture(bench.FixtureConfig{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	closed := testenv.RefusingAddr(t)

	short := 400 * time.Millisecond
	cases := []struct {
		name    string
		target  brk.Target
		plan    brk.Plan
		verdict brk.Verdict
		cancel  time.Duration
	}{
		{name: "broken", target: brk.Target{URL: fx.URL("/plain"), ExpectBody: []byte("ok")},
			plan: withPhase(demo.Plan, short), verdict: brk.VerdictBroken},
		{name: "done", target: brk.Target{URL: plain.URL("/hello")},
			plan: brk.Plan{Conns: 4, Start: 1, Pace: 2, Max: 4, Phase: 200 * time.Millisecond, Threads: 1, Baseline: true}, verdict: brk.VerdictDone},
		{name: "h2 broken", target: brk.Target{URL: fx.URL("/plain"), ExpectBody: []byte("ok"), Protocol: brk.HTTP2},
			plan: withPhase(demo.Plan, short), verdict: brk.VerdictBroken},
		{name: "h2 done", target: brk.Target{URL: plain.URL("/hello"), Protocol: brk.HTTP2},
			plan: brk.Plan{Conns: 4, Start: 1, Pace: 2, Max: 4, Phase: 200 * time.Millisecond, Threads: 1}, verdict: brk.VerdictDone},
		{name: "inconclusive", target: brk.Target{URL: "http://" + closed + "/"},
			plan: brk.Plan{Conns: 2, Phase: 2 * time.Second, Threads: 1}, verdict: brk.VerdictInconclusive},
		{name: "refined, with the server's CPU", target: brk.Target{URL: fx.URL("/plain"), ExpectBody: []byte("ok")},
			plan: brk.Plan{Conns: 8, Start: 1, Pace: 2, Phase: short, Timeout: 140 * time.Millisecond, Threads: 1,
				Refine: true, ServerPIDs: []int{os.Getpid()}}, verdict: brk.VerdictBroken},
		{name: "interrupted", target: brk.Target{URL: plain.URL("/plain")},
			plan: brk.Plan{Conns: 2, Phase: 10 * time.Second, Threads: 1}, verdict: brk.VerdictInterrupted, cancel: 300 * time.Millisecond},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if c.cancel > 0 {
				time.AfterFunc(c.cancel, cancel)
			}
			r, err := brk.Run(ctx, c.target, c.plan, nil)
			if err != nil {
				t.Fatal(err)
			}
			if r.Verdict != c.verdict {
				// brk may say it cannot tell on a loaded box; its report
				// must still match the schema.
				validateReport(t, s, r, c.plan)
				e2ekit.SkipOnNoise(t, r)
				t.Fatalf("verdict %s (%s), want %s", r.Verdict, r.Reason, c.verdict)
			}
			validateReport(t, s, r, c.plan)
			if c.verdict == brk.VerdictInterrupted {
				last := r.Phases[len(r.Phases)-1]
				if !last.Interrupted || last.Accepted {
					t.Errorf("cut-short phase: interrupted %v accepted %v", last.Interrupted, last.Accepted)
				}
			}
			if c.plan.Refine {
				probes := 0
				for _, ph := range r.Phases {
					if ph.Probe {
						probes++
					}
					if len(ph.Server) != 1 || ph.Server[0].Gone || ph.Server[0].UserS+ph.Server[0].SystemS <= 0 {
						t.Errorf("phase %d: server figures %+v", ph.Index, ph.Server)
					}
				}
				if probes == 0 {
					t.Errorf("no probe phase in a refined run")
				}
			}
			if c.plan.Baseline && (r.Baseline == nil || r.Baseline.DurationS <= 0) {
				t.Errorf("baseline missing: %+v", r.Baseline)
			}
		})
	}
}

// levelsDisagreed lists the levels some of whose runs were accepted and
// others rejected.
func levelsDisagreed(r *brk.Result) []int {
	held, rejected := map[int]bool{}, map[int]bool{}
	var both []int
	for _, ph := range r.Phases {
		if ph.Interrupted {
			continue
		}
		if ph.Accepted {
			held[ph.Level] = true
		} else {
			rejected[ph.Level] = true
		}
		if held[ph.Level] && rejected[ph.Level] && !slices.Contains(both, ph.Level) {
			both = append(both, ph.Level)
		}
	}
	return both
}

func withPhase(p brk.Plan, d time.Duration) brk.Plan {
	p.Phase = d
	return p
}

// TestRateReportsMatchSchema: rate reports (done, interrupted, poisson
// with its seed) match the schema, and their books balance.
func TestRateReportsMatchSchema(t *testing.T) {
	s := compileSchema(t)
	plain, err := bench.StartFixture(bench.FixtureConfig{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	target := brk.Target{URL: plain.URL("/plain"), ExpectBody: []byte("ok")}
	for _, c := range []struct {
		name    string
		plan    brk.Plan
		verdict brk.Verdict
		cancel  time.Duration
	}{
		{name: "done", plan: brk.Plan{Load: brk.Rate{Conns: 4}, Start: 200, Pace: 200, Max: 400, Phase: 200 * time.Millisecond, Threads: 2},
			verdict: brk.VerdictDone},
		{name: "poisson", plan: brk.Plan{Load: brk.Rate{Conns: 4, Arrivals: "poisson", Seed: 11}, Start: 300, Max: 300, Phase: 300 * time.Millisecond, Threads: 1}, verdict: brk.VerdictDone},
		{name: "interrupted", plan: brk.Plan{Load: brk.Rate{Conns: 2}, Start: 100, Phase: 10 * time.Second, Threads: 1},
			verdict: brk.VerdictInterrupted, cancel: 300 * time.Millisecond},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if c.cancel > 0 {
				time.AfterFunc(c.cancel, cancel)
			}
			var r *brk.Result
			for attempt := 1; ; attempt++ {
				r, err = brk.Run(ctx, target, c.plan, nil)
				if err != nil {
					t.Fatal(err)
				}
				if attempt == rateAttempts || !clientBehind(r) {
					break
				}
			}
			if c.verdict != brk.VerdictInconclusive {
				skipOnNoise(t, r)
			}
			if r.Verdict != c.verdict {
				t.Fatalf("verdict %s (%s), want %s", r.Verdict, r.Reason, c.verdict)
			}
			raw, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Validate(doc); err != nil {
				t.Fatalf("report does not match the schema: %v\n%s", err, raw)
			}
			checkRateAccounting(t, r)
			if load := c.plan.Load.(brk.Rate); load.Arrivals == "poisson" && (r.Arrivals != "poisson" || r.Seed != load.Seed) {
				t.Errorf("arrivals %q seed %d, want poisson %d", r.Arrivals, r.Seed, load.Seed)
			}
			for i, p := range r.Phases {
				if want := c.plan.Start + i*c.plan.Pace; p.Level != want && !p.Interrupted {
					t.Errorf("phase %d level %d, want %d", i, p.Level, want)
				}
			}
		})
	}
}
