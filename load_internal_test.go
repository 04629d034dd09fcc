package brk

import (
	"slices"
	"testing"
	"time"
)

// TestResolveLoad: a Plan's Load puts its test's settings in the plan's
// older fields and names the test it runs; a nil Load keeps the older
// fields and runs the test asked, a recorded plan's, or the requests
// test; an older field beside a Load must be zero or equal to the Load's.
func TestResolveLoad(t *testing.T) {
	rec := Plan{mode: ModeConnections, Requests: 1} // a recorded plan (Result.Plan)
	for _, c := range []struct {
		name string
		p    Plan
		want Mode // the test an older entry point asks for
		mode Mode
		flat loadSettings
		err  string
	}{
		{name: "nil Load: requests", p: Plan{Conns: 8}, mode: ModeRequests, flat: loadSettings{conns: 8}},
		{name: "nil Load: the test asked", p: Plan{RateDepth: 2}, want: ModeRate, mode: ModeRate, flat: loadSettings{depth: 2}},
		{name: "nil Load: a recorded plan's test", p: rec, mode: ModeConnections, flat: loadSettings{requests: 1}},
		{name: "Requests", p: Plan{Load: Requests{Conns: 8}}, mode: ModeRequests, flat: loadSettings{conns: 8}},
		{name: "Connections", p: Plan{Load: Connections{Requests: 3}}, mode: ModeConnections, flat: loadSettings{requests: 3}},
		{name: "Connections kept alive", p: Plan{Load: Connections{KeepAlive: true}}, mode: ModeConnections, flat: loadSettings{keepAlive: true}},
		{name: "Rate", p: Plan{Load: Rate{Conns: 4, Depth: 2, Arrivals: "poisson", Seed: 7}}, mode: ModeRate,
			flat: loadSettings{conns: 4, depth: 2, arrivals: "poisson", seed: 7}},
		{name: "Rate asked by RunRate", p: Plan{Load: Rate{Conns: 4}}, want: ModeRate, mode: ModeRate, flat: loadSettings{conns: 4}},
		{name: "an older field equal to the Load's", p: Plan{Load: Rate{Conns: 4, Seed: 9}, Conns: 4, Seed: 9}, mode: ModeRate,
			flat: loadSettings{conns: 4, seed: 9}},
		{name: "another test asked", p: Plan{Load: Rate{}}, want: ModeConnections,
			err: "Plan.Load is the rate test, not the connections test this call runs: call Run (or Check with rate)"},
		{name: "an older field that disagrees", p: Plan{Load: Requests{Conns: 8}, Conns: 16},
			err: "Plan.Conns (16) is the older form of Requests.Conns (8): with Plan.Load set, leave Plan.Conns zero or equal"},
		{name: "an older field set, the Load's default", p: Plan{Load: Connections{}, Requests: 2},
			err: "Plan.Requests (2) is the older form of Connections.Requests (0): with Plan.Load set, leave Plan.Requests zero or equal"},
		{name: "another test's older field", p: Plan{Load: Requests{}, RateDepth: 2},
			err: "Plan.RateDepth does not apply to the requests test (Plan.Load): leave it zero"},
		{name: "Conns beside Connections", p: Plan{Load: Connections{}, Conns: 8},
			err: "Plan.Conns does not apply to the connections test (Plan.Load): leave it zero"},
	} {
		p, m, _, err := resolveLoad(c.p, c.want)
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("%s: error %v, want %s", c.name, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got := flatSettings(p); m != c.mode || got.conns != c.flat.conns || got.requests != c.flat.requests ||
			got.keepAlive != c.flat.keepAlive || got.depth != c.flat.depth || got.arrivals != c.flat.arrivals || got.seed != c.flat.seed {
			t.Errorf("%s: test %s, settings %+v; want %s, %+v", c.name, m, got, c.mode, c.flat)
		}
	}
}

// TestLoadRefusalsNameTheLoad: the checks refuse a Load's setting by the
// Load's field (a Go selector from the value that holds it), and the same
// setting in the plan's older field by that field.
func TestLoadRefusalsNameTheLoad(t *testing.T) {
	base := Plan{Start: 1, Pace: 1, Max: 1, Phase: time.Second, Timeout: time.Second}
	tg := Target{URL: "http://127.0.0.1:1/"}
	for _, c := range []struct {
		load  Load
		older Plan // the same setting in the older fields, run as test m
		m     Mode
		err   string // with %s for the field
		field string
	}{
		{Requests{Conns: -1}, Plan{Conns: -1}, ModeRequests, "%s must be at least 1", "Requests.Conns"},
		{Connections{Requests: -1}, Plan{Requests: -1}, ModeConnections, "%s must be at least 1", "Connections.Requests"},
		{Rate{Conns: -2}, Plan{Conns: -2}, ModeRate, "%s must be at least 1", "Rate.Conns"},
		{Rate{Depth: -1}, Plan{RateDepth: -1}, ModeRate, "%s must be at least 1", "Rate.Depth"},
		{Rate{Arrivals: "burst"}, Plan{Arrivals: "burst"}, ModeRate, `%s "burst": want uniform or poisson`, "Rate.Arrivals"},
	} {
		p := base
		p.Load = c.load
		err := Validate(tg, p)
		pe, ok := err.(*PlanError)
		want := fmtField(c.err, c.field)
		if !ok || err.Error() != want || !slices.Equal(pe.Fields, []string{c.field}) {
			t.Errorf("%#v: %v, want a *PlanError %q naming %s", c.load, err, want, c.field)
			continue
		}
		older := c.older
		older.Start, older.Pace, older.Max, older.Phase, older.Timeout = base.Start, base.Pace, base.Max, base.Phase, base.Timeout
		oldField := map[string]string{"Requests.Conns": "Plan.Conns", "Rate.Conns": "Plan.Conns", "Connections.Requests": "Plan.Requests",
			"Rate.Depth": "Plan.RateDepth", "Rate.Arrivals": "Plan.Arrivals"}[c.field]
		if err := Check(tg, older, c.m); err == nil || err.Error() != fmtField(c.err, oldField) {
			t.Errorf("%s with the older fields: %v, want %q", c.m, err, fmtField(c.err, oldField))
		}
	}
}

func fmtField(format, f string) string { return refuse(format, field(f)).Error() }
