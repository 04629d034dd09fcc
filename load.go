package brk

import (
	"cmp"
	"reflect"

	"github.com/brk-bench/brk/internal/sched"
)

// Load is a test: what a phase's level counts, and the test's own
// settings. Plan.Load holds one of Requests, Connections and Rate, and
// Run runs it. A nil Load is the requests test, with its connections in
// the plan's older field Plan.Conns.
//
// Plan.Conns, Plan.Requests, Plan.KeepAlive, Plan.RateDepth,
// Plan.Arrivals and Plan.Seed are the older form of the same settings.
// With a Load set, each of them must be zero or equal to the Load's own
// value (a recorded plan, Result.Plan, holds both); a refusal names the
// Load's field ("Rate.Depth must be at least 1").
type Load interface {
	// Mode is the test's name (its text is the report's "test").
	Mode() Mode
	// settings are the load's values in the plan's older fields.
	settings() loadSettings
	// withDefaults is the load with its zero fields that Plan.Defaults
	// fills given their defaults.
	withDefaults() Load

	// The test's rules (load_rules.go), read from the plan's older
	// fields once resolveLoad has written the load's settings there.
	fill(t *Target, p *Plan) error
	checks() []planCheck
	report(res *Result, p Plan)
	firstConns(p Plan) int
	splitsConns() bool
	shardLevel(level, index, count int) int
	engine(p Plan) sched.Load
}

// DefaultConns is the connections of the requests and rate tests by
// default (Requests.Conns, Rate.Conns).
const DefaultConns = 64

// Requests is the requests test: Conns connections opened once, each
// phase raising the outstanding requests per connection (Plan.Start,
// Pace and Max count per connection).
type Requests struct {
	Conns int // connections, opened once (default 64)
}

// Connections is the connections test: each phase holds Plan.Start + n ×
// Pace concurrent connections. Each is set up, carries Requests requests
// one at a time (the last asks Connection: close), waits for the server
// to close, and its owner opens the next at once.
type Connections struct {
	// Requests per connection (default 1).
	Requests int
	// KeepAlive keeps each connection open, carrying requests one at a
	// time until the phase's admission ends, instead of Requests each: a
	// level of N connections is N requests in flight, what most HTTP/1.1
	// clients do. Not with Requests above 1.
	KeepAlive bool
}

// Rate is the rate test, an open model: Conns connections opened once;
// each phase offers Plan.Start + n × Pace requests/s on a schedule
// against the clock, whatever the server does (RunRate says more).
type Rate struct {
	Conns int // connections, opened once (default 64)
	// Depth is the most outstanding requests a connection carries
	// (default: the protocol's, 1 over HTTP/1.1: no pipelining unless
	// asked).
	Depth int
	// Arrivals is "uniform" (the default: arrival k is due at the phase's
	// start + k/rate) or "poisson" (exponential gaps drawn from Seed).
	Arrivals string
	// Seed draws the poisson gaps; 0 picks one, which the result
	// reports. At most MaxSeed.
	Seed uint64
}

// Mode is ModeRequests.
func (Requests) Mode() Mode { return ModeRequests }

// Mode is ModeConnections.
func (Connections) Mode() Mode { return ModeConnections }

// Mode is ModeRate.
func (Rate) Mode() Mode { return ModeRate }

func (l Requests) withDefaults() Load {
	l.Conns = cmp.Or(l.Conns, DefaultConns)
	return l
}

func (l Connections) withDefaults() Load { return l }

func (l Rate) withDefaults() Load {
	l.Conns = cmp.Or(l.Conns, DefaultConns)
	return l
}

func (l Requests) settings() loadSettings {
	return loadSettings{conns: l.Conns, names: map[field]field{fConns: "Requests.Conns"}}
}

func (l Connections) settings() loadSettings {
	return loadSettings{requests: l.Requests, keepAlive: l.KeepAlive,
		names: map[field]field{fRequests: "Connections.Requests", fKeepAlive: "Connections.KeepAlive"}}
}

func (l Rate) settings() loadSettings {
	return loadSettings{conns: l.Conns, depth: l.Depth, arrivals: l.Arrivals, seed: l.Seed,
		names: map[field]field{fConns: "Rate.Conns", fRateDepth: "Rate.Depth", fArrivals: "Rate.Arrivals", fSeed: "Rate.Seed"}}
}

// loadSettings are a test's settings as the plan's older fields hold
// them, and the names a refusal gives those fields.
type loadSettings struct {
	conns, requests, depth int
	keepAlive              bool
	arrivals               string
	seed                   uint64
	names                  map[field]field // the older field → the Load's
}

// flatSettings are p's older fields.
func flatSettings(p Plan) loadSettings {
	return loadSettings{conns: p.Conns, requests: p.Requests, keepAlive: p.KeepAlive,
		depth: p.RateDepth, arrivals: p.Arrivals, seed: p.Seed}
}

// resolveLoad is p with its Load's settings in the older fields, which
// the rest of the package reads (and a nil Load), the test it runs and the names its
// refusals give those fields. want is the test an older entry point
// (RunMode, RunConnections, RunRate, Check) asks for; "" is p.Load's, or
// for a nil Load the test of a recorded plan (Result.Plan: Plan.Mode),
// else the requests test.
func resolveLoad(p Plan, want Mode) (Plan, Mode, map[field]field, error) {
	if p.Load == nil {
		return p, cmp.Or(want, p.mode, ModeRequests), nil, nil
	}
	if isNilPointer(p.Load) {
		return p, want, nil, refuse("%s is a nil %T: give a value, such as brk.Rate{}", fLoad, p.Load)
	}
	m := p.Load.Mode()
	if want != "" && want != m {
		return p, m, nil, refuse("%s is the %s test, not the %s test this call runs: call Run (or Check with %s)", fLoad, m, want, m)
	}
	l, flat := p.Load.settings(), flatSettings(p)
	type pair struct {
		f          field
		flat, load any
		set        bool
	}
	for _, c := range []pair{
		{fConns, flat.conns, l.conns, flat.conns != 0},
		{fRequests, flat.requests, l.requests, flat.requests != 0},
		{fKeepAlive, flat.keepAlive, l.keepAlive, flat.keepAlive},
		{fRateDepth, flat.depth, l.depth, flat.depth != 0},
		{fArrivals, flat.arrivals, l.arrivals, flat.arrivals != ""},
		{fSeed, flat.seed, l.seed, flat.seed != 0},
	} {
		if !c.set || c.flat == c.load {
			continue
		}
		if name, ok := l.names[c.f]; ok {
			return p, m, nil, refuse("%s (%v) is the older form of %s (%v): with %s set, leave %s zero or equal", c.f, c.flat, name, c.load, fLoad, c.f)
		}
		return p, m, nil, refuse("%s does not apply to the %s test (%s): leave it zero", c.f, m, fLoad)
	}
	p.Conns, p.Requests, p.KeepAlive = l.conns, l.requests, l.keepAlive
	p.RateDepth, p.Arrivals, p.Seed = l.depth, l.arrivals, l.seed
	p.Load = nil // the older fields hold it now
	return p, m, l.names, nil
}

// Resolved is p as Run reads it: its Load and Ramp with their own
// defaults (Requests.Conns, Rate.Conns, Linear.Pace, Search.Growth and
// ResolutionPct), their settings also in the older fields, the form of a
// recorded plan (Result.Plan), and its test as Mode. For a nil Load the older fields stay as they are, and the test is
// a recorded plan's or the requests test. The error is Run's refusal of
// an older field that disagrees with the Load (a *PlanError).
func (p Plan) Resolved() (Plan, error) {
	r, m, _, err := resolveLoad(p, "")
	if err != nil {
		return p, err
	}
	if _, _, err = resolveRamp(r); err != nil {
		return p, err
	}
	// The Load's and the Ramp's own defaults, in them and in the older
	// fields alike (Defaults fills the older fields only without them).
	if p.Load != nil {
		p.Load = p.Load.withDefaults()
	}
	if p.Ramp != nil {
		p.Ramp = p.Ramp.withDefaults()
	}
	r, _, _, _ = resolveLoad(p, "")
	r, _, _ = resolveRamp(r)
	r.mode, r.Load, r.Ramp = m, p.Load, p.Ramp
	return r, nil
}

// isNilPointer reports whether v is a nil pointer in an interface (a
// Load or Ramp given as a *Rate or *Search that is nil), whose methods
// would panic.
func isNilPointer(v any) bool {
	r := reflect.ValueOf(v)
	return r.Kind() == reflect.Pointer && r.IsNil()
}
