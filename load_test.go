package brk_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/brk-bench/brk"
	"github.com/brk-bench/brk/bench"
)

// TestRunRunsTheLoad: Run runs the test of Plan.Load, the same run as the
// older entry point of that test with the settings in the plan's older
// fields: the same test, verdict and levels, and the same recorded plan
// (the report's "plan" object, byte for byte).
func TestRunRunsTheLoad(t *testing.T) {
	tg := fixtureTarget(t)
	base := brk.Plan{Start: 1, Pace: 1, Max: 2, Phase: 150 * time.Millisecond, Timeout: time.Second,
		Accept: brk.AcceptAny, Threads: 1, Repeat: 1}
	older := func(f func(context.Context, brk.Target, brk.Plan, brk.Observer) (*brk.Result, error)) func(context.Context, brk.Target, brk.Plan) (*brk.Result, error) {
		return func(ctx context.Context, t brk.Target, p brk.Plan) (*brk.Result, error) { return f(ctx, t, p, nil) }
	}
	for _, c := range []struct {
		load  brk.Load
		flat  func(p *brk.Plan) // the same settings in the older fields
		run   func(context.Context, brk.Target, brk.Plan) (*brk.Result, error)
		start int
	}{
		{brk.Requests{Conns: 2}, func(p *brk.Plan) { p.Conns = 2 }, older(brk.Run), 1},
		{brk.Connections{Requests: 2}, func(p *brk.Plan) { p.Requests = 2 }, older(brk.RunConnections), 1},
		{brk.Connections{KeepAlive: true}, func(p *brk.Plan) { p.KeepAlive = true }, older(brk.RunConnections), 1},
		{brk.Rate{Conns: 2, Depth: 1, Arrivals: "poisson", Seed: 5}, func(p *brk.Plan) {
			p.Conns, p.RateDepth, p.Arrivals, p.Seed = 2, 1, "poisson", 5
		}, older(brk.RunRate), 100},
	} {
		p := base
		p.Start, p.Max, p.Pace = c.start, 2*c.start, c.start
		withLoad, flat := p, p
		withLoad.Load = c.load
		c.flat(&flat)
		var got, want *brk.Result
		// A rate run whose client fell behind its schedule (a busy box:
		// 15 arrivals in a 150 ms phase, 1.5 ms late on average is 1 %)
		// ends inconclusive whatever the entry point: the pair is run
		// again, at most three times.
		for try := 1; ; try++ {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			var err error
			got, err = brk.Run(ctx, tg, withLoad, nil)
			if err != nil {
				t.Fatalf("%#v: %v", c.load, err)
			}
			want, err = c.run(ctx, tg, flat)
			cancel()
			if err != nil {
				t.Fatalf("%#v, older fields: %v", c.load, err)
			}
			if try == 3 || !strings.Contains(got.Reason+want.Reason, "fell behind its arrival schedule") {
				break
			}
			t.Logf("%#v: a client behind its schedule (%s; %s): again", c.load, got.Reason, want.Reason)
		}
		gp, _ := json.Marshal(got.Plan)
		wp, _ := json.Marshal(want.Plan)
		if got.Test != c.load.Mode() || got.Test != want.Test || got.Verdict != want.Verdict || len(got.Phases) != len(want.Phases) ||
			!bytes.Equal(gp, wp) {
			t.Errorf("%#v: Run gave %s %s (%s), %d phases, plan %s; the older entry point %s %s (%s), %d phases, plan %s",
				c.load, got.Test, got.Verdict, got.Reason, len(got.Phases), gp, want.Test, want.Verdict, want.Reason, len(want.Phases), wp)
		}
		for i := range min(len(got.Phases), len(want.Phases)) {
			if got.Phases[i].Level != want.Phases[i].Level {
				t.Errorf("%#v: phase %d at level %d, the older entry point's at %d", c.load, i, got.Phases[i].Level, want.Phases[i].Level)
			}
		}
		// A recorded plan runs its own test again through Run.
		if err := brk.Validate(tg, got.Plan); err != nil {
			t.Errorf("%#v: its recorded plan refused: %v", c.load, err)
		}
	}
}

// TestResolved: Plan.Resolved is the plan as Run reads it: a Load's
// settings also in the older fields and its test as Mode; a nil Load's
// older fields as they are, the requests test; a disagreeing older field
// refused as Run refuses it. RateSlotWarning reads a Rate's settings and
// names its fields.
func TestResolved(t *testing.T) {
	r, err := brk.Plan{Load: brk.Rate{Conns: 4, Depth: 2, Arrivals: "poisson", Seed: 3}}.Resolved()
	if err != nil || r.Mode() != brk.ModeRate || r.Conns != 4 || r.RateDepth != 2 || r.Arrivals != "poisson" || r.Seed != 3 {
		t.Errorf("Rate: %s %d %d %q %d, %v", r.Mode(), r.Conns, r.RateDepth, r.Arrivals, r.Seed, err)
	}
	r, err = brk.Plan{Load: brk.Connections{Requests: 2, KeepAlive: false}}.Resolved()
	if err != nil || r.Mode() != brk.ModeConnections || r.Requests != 2 || r.Conns != 0 {
		t.Errorf("Connections: %s %d %d, %v", r.Mode(), r.Requests, r.Conns, err)
	}
	r, err = brk.Plan{Conns: 8}.Resolved()
	if err != nil || r.Mode() != brk.ModeRequests || r.Conns != 8 || r.Load != nil {
		t.Errorf("nil Load: %s %d %v, %v", r.Mode(), r.Conns, r.Load, err)
	}
	// The Load's and the Ramp's own defaults, in both forms (the report's
	// header reads the older fields after Defaults, which leaves them be
	// beside a Ramp).
	r, err = brk.Plan{Load: brk.Requests{}, Ramp: brk.Search{}}.Resolved()
	if err != nil || r.Conns != brk.DefaultConns || r.Load != (brk.Requests{Conns: brk.DefaultConns}) || r.Search == nil ||
		*r.Search != (brk.Search{Growth: 2, ResolutionPct: 1}) || r.Ramp != (brk.Search{Growth: 2, ResolutionPct: 1}) {
		t.Errorf("defaults: Conns %d, Load %#v, Search %v, Ramp %#v, %v", r.Conns, r.Load, r.Search, r.Ramp, err)
	}
	if _, err := (brk.Plan{Load: brk.Requests{}, Conns: 64}).Resolved(); err == nil {
		t.Errorf("Plan.Conns 64 beside Requests{} resolved (Run refuses it)")
	}
	// A nil pointer given as a Load or a Ramp is refused, not a panic.
	var nilRate *brk.Rate
	var nilSearch *brk.Search
	if err := brk.Validate(brk.Target{URL: "http://127.0.0.1:1/"}, brk.Plan{Load: nilRate}); err == nil ||
		err.Error() != "Plan.Load is a nil *brk.Rate: give a value, such as brk.Rate{}" {
		t.Errorf("a nil *Rate as the Load: %v", err)
	}
	nils := brk.Plan{Load: nilRate, Ramp: nilSearch}
	nils.DefaultsFor(brk.ModeRate) // no panic
	if err := brk.Validate(brk.Target{URL: "http://127.0.0.1:1/"}, brk.Plan{Ramp: nilSearch}); err == nil ||
		err.Error() != "Plan.Ramp is a nil *brk.Search: give a value, such as brk.Search{}" {
		t.Errorf("a nil *Search as the Ramp: %v", err)
	}
	if _, err := (brk.Plan{Load: brk.Requests{Conns: 8}, Conns: 9}).Resolved(); err == nil {
		t.Errorf("Plan.Conns 9 beside Requests{Conns: 8} resolved")
	}
	w := brk.RateSlotWarning(brk.Plan{Load: brk.Rate{Conns: 2, Depth: 1}, Start: 1000, Timeout: time.Second})
	if w == nil || len(w.Fields) < 2 || w.Fields[0] != "Rate.Conns" || w.Fields[1] != "Rate.Depth" {
		t.Errorf("RateSlotWarning of a Rate: %v, want one naming Rate.Conns and Rate.Depth", w)
	}
}

// TestDefaultsOfALoad: Plan.Defaults gives a Load's connections their
// default in the Load, and Run takes the plan it filled.
func TestDefaultsOfALoad(t *testing.T) {
	for _, c := range []struct {
		load, want brk.Load
	}{
		{brk.Requests{}, brk.Requests{Conns: brk.DefaultConns}},
		{brk.Rate{Depth: 2}, brk.Rate{Conns: brk.DefaultConns, Depth: 2}},
		{brk.Connections{Requests: 3}, brk.Connections{Requests: 3}},
	} {
		p := brk.Plan{Load: c.load}
		p.Defaults()
		if p.Load != c.want || p.Conns != 0 {
			t.Errorf("%#v: Defaults gave %#v and Conns %d, want %#v and 0", c.load, p.Load, p.Conns, c.want)
		}
		if err := brk.Validate(brk.Target{URL: "http://127.0.0.1:1/"}, p); err != nil {
			t.Errorf("%#v: the filled plan refused: %v", c.load, err)
		}
	}
}

// TestRunRunsTheRamp: Run runs the levels of Plan.Ramp, the same run as
// the plan with the ramp in its older fields (Pace, Refine, Search): the
// same levels and the same recorded plan, byte for byte.
func TestRunRunsTheRamp(t *testing.T) {
	tg := fixtureTarget(t)
	base := brk.Plan{Load: brk.Requests{Conns: 2}, Start: 1, Max: 4, Phase: 150 * time.Millisecond, Timeout: time.Second,
		Accept: brk.AcceptAny, Threads: 1, Repeat: 1}
	for _, c := range []struct {
		ramp brk.Ramp
		flat func(p *brk.Plan)
	}{
		{brk.Linear{Pace: 3, Refine: true}, func(p *brk.Plan) { p.Pace, p.Refine = 3, true }},
		{brk.Search{Growth: 2}, func(p *brk.Plan) { p.Search = &brk.Search{Growth: 2} }},
	} {
		withRamp, flat := base, base
		withRamp.Ramp = c.ramp
		c.flat(&flat)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		got, err := brk.Run(ctx, tg, withRamp, nil)
		if err != nil {
			t.Fatalf("%#v: %v", c.ramp, err)
		}
		want, err := brk.Run(ctx, tg, flat, nil)
		cancel()
		if err != nil {
			t.Fatalf("%#v, older fields: %v", c.ramp, err)
		}
		gp, _ := json.Marshal(got.Plan)
		wp, _ := json.Marshal(want.Plan)
		var gl, wl []int
		for _, s := range got.Phases {
			gl = append(gl, s.Level)
		}
		for _, s := range want.Phases {
			wl = append(wl, s.Level)
		}
		if !bytes.Equal(gp, wp) || fmt.Sprint(gl) != fmt.Sprint(wl) || got.Verdict != want.Verdict {
			t.Errorf("%#v: Run gave %s, levels %v, plan %s; the older fields %s, levels %v, plan %s", c.ramp, got.Verdict, gl, gp, want.Verdict, wl, wp)
		}
	}
}

// fixtureTarget is the built-in fixture's /plain, "ok" checked; the
// fixture ends with the test.
func fixtureTarget(t *testing.T) brk.Target {
	fx, err := bench.StartFixture(bench.FixtureConfig{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fx.Close() })
	return brk.Target{URL: fx.URL("/plain"), ExpectBody: []byte("ok")}
}
