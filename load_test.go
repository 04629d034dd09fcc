package brk_test

import (
	"bytes"
	"context"
	"encoding/json"
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
	fx, err := bench.StartFixture(bench.FixtureConfig{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer fx.Close()
	tg := brk.Target{URL: fx.URL("/plain"), ExpectBody: []byte("ok")}
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
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		got, err := brk.Run(ctx, tg, withLoad, nil)
		if err != nil {
			t.Fatalf("%#v: %v", c.load, err)
		}
		want, err := c.run(ctx, tg, flat)
		cancel()
		if err != nil {
			t.Fatalf("%#v, older fields: %v", c.load, err)
		}
		gp, _ := json.Marshal(got.Plan)
		wp, _ := json.Marshal(want.Plan)
		if got.Test != c.load.Mode() || got.Test != want.Test || got.Verdict != want.Verdict || len(got.Phases) != len(want.Phases) ||
			!bytes.Equal(gp, wp) {
			t.Errorf("%#v: Run gave %s %s, %d phases, plan %s; the older entry point %s %s, %d phases, plan %s",
				c.load, got.Test, got.Verdict, len(got.Phases), gp, want.Test, want.Verdict, len(want.Phases), wp)
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
	if _, err := (brk.Plan{Load: brk.Requests{Conns: 8}, Conns: 9}).Resolved(); err == nil {
		t.Errorf("Plan.Conns 9 beside Requests{Conns: 8} resolved")
	}
	w := brk.RateSlotWarning(brk.Plan{Load: brk.Rate{Conns: 2, Depth: 1}, Start: 1000, Timeout: time.Second})
	if w == nil || len(w.Fields) < 2 || w.Fields[0] != "Rate.Conns" || w.Fields[1] != "Rate.Depth" {
		t.Errorf("RateSlotWarning of a Rate: %v, want one naming Rate.Conns and Rate.Depth", w)
	}
}
