package brk

import (
	"slices"
	"testing"
	"time"
)

// TestResolveRamp: a Plan's Ramp puts its settings in the plan's older
// fields (Pace, Refine, Search); a nil Ramp keeps them; an older field
// beside a Ramp must be zero or equal to the Ramp's (Refine beside a
// Search passes, recorded and unused, as before).
func TestResolveRamp(t *testing.T) {
	s := Search{Growth: 3, Resolution: 4}
	for _, c := range []struct {
		name   string
		p      Plan
		pace   int
		refine bool
		search *Search
		err    string
	}{
		{name: "nil Ramp", p: Plan{Pace: 2, Refine: true}, pace: 2, refine: true},
		{name: "nil Ramp, the older search", p: Plan{Search: &s}, search: &s},
		{name: "Linear", p: Plan{Ramp: Linear{Pace: 3, Refine: true}}, pace: 3, refine: true},
		{name: "Search", p: Plan{Ramp: s}, search: &s},
		{name: "older fields equal", p: Plan{Ramp: Linear{Pace: 3}, Pace: 3}, pace: 3},
		{name: "the older search equal", p: Plan{Ramp: s, Search: &Search{Growth: 3, Resolution: 4}}, search: &s},
		{name: "Refine beside a Search", p: Plan{Ramp: s, Refine: true}, refine: true, search: &s},
		{name: "Pace that disagrees", p: Plan{Ramp: Linear{Pace: 3}, Pace: 2},
			err: "Plan.Pace (2) is the older form of Linear.Pace (3): with Plan.Ramp set, leave Plan.Pace zero or equal"},
		{name: "Pace beside a Search", p: Plan{Ramp: s, Pace: 1},
			err: "Plan.Pace applies to the linear ramp, not to the search (Plan.Ramp)"},
		{name: "Refine that disagrees", p: Plan{Ramp: Linear{}, Refine: true},
			err: "Plan.Refine (true) is the older form of Linear.Refine (false): with Plan.Ramp set, leave Plan.Refine false or equal"},
		{name: "the older search beside Linear", p: Plan{Ramp: Linear{}, Search: &s},
			err: "Plan.Search is the older form of a Plan.Ramp: with Plan.Ramp set, leave Plan.Search nil or equal"},
		{name: "another older search", p: Plan{Ramp: s, Search: &Search{Growth: 2}},
			err: "Plan.Search is the older form of a Plan.Ramp: with Plan.Ramp set, leave Plan.Search nil or equal"},
	} {
		p, _, err := resolveRamp(c.p)
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("%s: error %v, want %s", c.name, err, c.err)
			}
			continue
		}
		if err != nil || p.Ramp != nil || p.Pace != c.pace || p.Refine != c.refine || (p.Search == nil) != (c.search == nil) ||
			p.Search != nil && *p.Search != *c.search {
			t.Errorf("%s: Pace %d, Refine %v, Search %v, Ramp %v, %v; want %d, %v, %v, nil", c.name, p.Pace, p.Refine, p.Search, p.Ramp, err,
				c.pace, c.refine, c.search)
		}
	}
}

// TestRampRefusalsNameTheRamp: the checks refuse a Ramp's setting by the
// Ramp's field, and Defaults fills a Ramp's zero fields in the Ramp.
func TestRampRefusalsNameTheRamp(t *testing.T) {
	tg := Target{URL: "http://127.0.0.1:1/"}
	base := Plan{Start: 1, Max: 4, Phase: time.Second, Timeout: time.Second}
	for _, c := range []struct {
		ramp   Ramp
		err    string
		fields []string
	}{
		{Linear{Pace: -1}, "Plan.Start and Linear.Pace must be at least 1", []string{"Plan.Start", "Linear.Pace"}},
		{Search{Growth: 0.5}, "Search.Growth 0.5: want a factor above 1 (at most 1000), such as 2", []string{"Search.Growth"}},
		{Search{Resolution: -1}, "Search.Resolution must not be negative", []string{"Search.Resolution"}},
		{Search{Resolution: 2, ResolutionPct: 5}, "Search.Resolution and Search.ResolutionPct exclude each other",
			[]string{"Search.Resolution", "Search.ResolutionPct"}},
	} {
		p := base
		p.Ramp = c.ramp
		err := Validate(tg, p)
		pe, ok := err.(*PlanError)
		if !ok || err.Error() != c.err || !slices.Equal(pe.Fields, c.fields) {
			t.Errorf("%#v: %v, want %q naming %v", c.ramp, err, c.err, c.fields)
		}
	}
	for _, c := range []struct{ ramp, want Ramp }{
		{Linear{}, Linear{Pace: 1}},
		{Linear{Pace: 3, Refine: true}, Linear{Pace: 3, Refine: true}},
		{Search{}, Search{Growth: 2, ResolutionPct: 1}},
		{Search{Resolution: 5}, Search{Growth: 2, Resolution: 5}},
	} {
		p := Plan{Ramp: c.ramp}
		p.Defaults()
		if p.Ramp != c.want || p.Pace != 0 || p.Search != nil {
			t.Errorf("Defaults of %#v: %#v (Pace %d, Search %v), want %#v", c.ramp, p.Ramp, p.Pace, p.Search, c.want)
		}
	}
}
