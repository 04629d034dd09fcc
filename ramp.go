package brk

import "cmp"

// Ramp is how a run chooses its levels from Plan.Start up to Plan.Max:
// Linear or Search. Plan.Ramp holds one; a nil Ramp is the linear ramp
// of the plan's older fields Plan.Pace and Plan.Refine, or the search of
// Plan.Search. With a Ramp set, each older field must be zero or equal to
// the Ramp's own value, as with Plan.Load (Plan.Refine beside a Search is
// recorded and does nothing, as before), and a refusal names the Ramp's
// field ("Linear.Pace must be at least 1").
type Ramp interface {
	// settings are the ramp's values in the plan's older fields.
	settings() rampSettings
	// withDefaults is the ramp with its zero fields given their defaults.
	withDefaults() Ramp
}

// Linear is the linear ramp: phase n runs at Plan.Start + n × Pace (per
// connection in the requests test) until a phase is rejected or
// Plan.Max is reached.
type Linear struct {
	Pace int // the step each phase (default 1)
	// Refine bisects, after the first rejected phase, between the last
	// accepted and the first rejected level until they are adjacent.
	Refine bool
}

func (r Linear) settings() rampSettings {
	return rampSettings{pace: r.Pace, refine: r.Refine,
		names: map[field]field{fPace: "Linear.Pace", fRefine: "Linear.Refine"}}
}

func (r Linear) withDefaults() Ramp {
	r.Pace = cmp.Or(r.Pace, 1)
	return r
}

func (s Search) settings() rampSettings {
	return rampSettings{search: &s,
		names: map[field]field{fSearch: "Plan.Ramp", fGrowth: "Search.Growth", fResolution: "Search.Resolution", fResPct: "Search.ResolutionPct"}}
}

func (s Search) withDefaults() Ramp {
	s.Growth = cmp.Or(s.Growth, 2)
	if s.Resolution == 0 && s.ResolutionPct == 0 {
		s.ResolutionPct = 1
	}
	return s
}

// rampSettings are a ramp's values as the plan's older fields hold them,
// and the names a refusal gives those fields.
type rampSettings struct {
	pace   int
	refine bool
	search *Search
	names  map[field]field // the older field → the Ramp's
}

// resolveRamp is p with its Ramp's settings in the older fields, which
// the rest of the package reads (and a nil Ramp), and the names its
// refusals give those fields; p itself for a nil Ramp.
func resolveRamp(p Plan) (Plan, map[field]field, error) {
	if p.Ramp == nil {
		return p, nil, nil
	}
	if isNilPointer(p.Ramp) {
		return p, nil, refuse("%s is a nil %T: give a value, such as brk.Search{}", fRamp, p.Ramp)
	}
	r := p.Ramp.settings()
	searches := r.search != nil
	switch {
	case p.Pace != 0 && p.Pace != r.pace && !searches:
		return p, nil, refuse("%s (%d) is the older form of %s (%d): with %s set, leave %s zero or equal", fPace, p.Pace, r.names[fPace], r.pace, fRamp, fPace)
	case p.Pace != 0 && searches:
		return p, nil, refuse("%s applies to the linear ramp, not to the search (%s)", fPace, fRamp)
	case p.Refine && !r.refine && !searches:
		return p, nil, refuse("%s (true) is the older form of %s (false): with %s set, leave %s false or equal", fRefine, r.names[fRefine], fRamp, fRefine)
	case p.Search != nil && (!searches || *p.Search != *r.search):
		return p, nil, refuse("%s is the older form of a %s: with %s set, leave %s nil or equal", fSearch, fRamp, fRamp, fSearch)
	}
	p.Pace, p.Search = r.pace, r.search
	if !searches {
		p.Refine = r.refine
	}
	p.Ramp = nil // the older fields hold it now
	return p, r.names, nil
}
