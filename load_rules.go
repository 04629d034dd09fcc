package brk

import (
	"github.com/brk-bench/brk/internal/sched"
	"github.com/brk-bench/brk/internal/shard"
)

// Each test's rules, as methods of its Load (the interface in load.go):
// its defaults and refusals, its checks, its fields in the report, the
// connections of its phase 0, how a sharded run splits it, and its
// engine side. Beside them are the judge's rules (internal/judge/mode.go,
// read through Mode's methods) and the engine's (internal/sched/load.go:
// the value Load.engine returns).

// loadOf is the Load of test m with no settings (nil for an unknown
// test): the rules of a plan whose settings are in its older fields (an
// older entry point's, or a recorded plan's). It is the one place a Mode
// becomes a Load.
func loadOf(m Mode) Load {
	switch m {
	case ModeRequests:
		return Requests{}
	case ModeConnections:
		return Connections{}
	case ModeRate:
		return Rate{}
	}
	return nil
}

// planCheck refuses a plan (nil: it passes).
type planCheck func(p Plan) *PlanError

// fill refuses what applies to the connections test only.
func (Requests) fill(t *Target, p *Plan) error {
	switch {
	case t.TLS.NoResume:
		return refuse("%s applies to the connections test", fNoResume)
	case p.KeepAlive:
		return refuse("%s applies to the connections test", fKeepAlive)
	}
	return nil
}

// fill gives one request per connection by default.
func (Connections) fill(_ *Target, p *Plan) error {
	if p.Requests == 0 {
		p.Requests = 1
	}
	switch {
	case p.Requests < 0:
		return refuse("%s must be at least 1", fRequests)
	case p.KeepAlive && p.Requests > 1:
		return refuse("%s and %s cannot be combined: a kept-alive connection carries requests until the phase ends", fKeepAlive, fRequests)
	}
	return nil
}

// fill gives the depth per connection and the arrivals by default, and
// refuses what applies to the connections test only.
func (Rate) fill(t *Target, p *Plan) error {
	if p.RateDepth == 0 {
		p.RateDepth = t.Proto().DefaultRateDepth()
	}
	if p.Arrivals == "" {
		p.Arrivals = "uniform"
	}
	return Requests{}.fill(t, p)
}

// checks are the test's refusals of a plan with its defaults filled in,
// in the order they are tried: the first that refuses names the plan's
// error.
func (Requests) checks() []planCheck {
	return []planCheck{noRateFields, connsAtLeast1, startPaceAtLeast1(""), maxNotNegative, startNotAboveMax,
		phaseAtLeast1ms, timeoutAtLeast1ms, threadsNotNegative, threadsWithinConns, perConnLevelsWithinEngine,
		connsWithinEngine, outstandingWithinEngine}
}

// checks: the level is the connection count, so Conns does not apply,
// and the threads are capped at the level.
func (Connections) checks() []planCheck {
	return levelIsConns(noRateFields, connsAtLeast1, startPaceAtLeast1(""), maxNotNegative, startNotAboveMax,
		phaseAtLeast1ms, timeoutAtLeast1ms, threadsNotNegative, threadsWithinConns, levelsWithinEngine,
		connsWithinEngine, outstandingWithinEngine)
}

func (Rate) checks() []planCheck {
	return []planCheck{connsAtLeast1, startPaceAtLeast1(" (requests/s)"), maxNotNegative, startNotAboveMax,
		rateWithinEngine, phaseAtLeast1ms, timeoutAtLeast1ms, threadsNotNegative, threadsWithinConns,
		connsWithinEngine, rateDepthAtLeast1, slotsWithinEngine, arrivalsKnown, seedWithinJSON, noRequests}
}

// report fills the test's fields of res and of its plan.
func (Requests) report(res *Result, p Plan) { res.Plan.Conns = p.Conns }

func (Connections) report(res *Result, p Plan) {
	res.Conns = 0
	res.Requests, res.KeepAlive = p.Requests, p.KeepAlive
	res.Plan.Requests, res.Plan.KeepAlive = p.Requests, p.KeepAlive
}

func (Rate) report(res *Result, p Plan) {
	res.Plan.Conns = p.Conns
	res.RateDepth, res.Arrivals = p.RateDepth, p.Arrivals
	if p.Arrivals == "poisson" {
		res.Seed = p.Seed
	}
	res.Plan.RateDepth, res.Plan.Arrivals, res.Plan.Seed = res.RateDepth, res.Arrivals, res.Seed
}

// firstConns is how many connections phase 0 opens (a plan checked: its
// Conns the run's connections); threads never outnumber them.
func (Requests) firstConns(p Plan) int    { return p.Conns }
func (Connections) firstConns(p Plan) int { return p.Start }
func (Rate) firstConns(p Plan) int        { return p.Conns }

// splitsConns: the plan's Conns connections are opened once and split
// over the shards of a sharded run (each shard needs one).
func (Requests) splitsConns() bool    { return true }
func (Connections) splitsConns() bool { return false }
func (Rate) splitsConns() bool        { return true }

// shardLevel is shard index of count's part of a phase's level: the
// whole level where the engine splits it by its connection base
// (requests) or its arrivals (rate), a share of the connections
// otherwise.
func (Requests) shardLevel(level, _, _ int) int { return level }
func (Connections) shardLevel(level, index, count int) int {
	return shard.Share(level, index, count)
}
func (Rate) shardLevel(level, _, _ int) int { return level }

// engine is the test's engine side (sched.Load), with its own settings
// from the plan (its settings in the older fields).
func (Requests) engine(Plan) sched.Load { return sched.RequestsLoad{} }

func (Connections) engine(p Plan) sched.Load {
	return sched.ConnectionsLoad{PerConn: p.Requests, KeepAlive: p.KeepAlive}
}

// A shard of the rate test takes its arrivals of each phase's one schedule.
func (Rate) engine(p Plan) sched.Load {
	l := sched.RateLoad{Depth: p.RateDepth, Poisson: p.Arrivals == "poisson", Seed: p.Seed}
	if p.Shard != nil {
		l.ShardIndex, l.Shards = p.Shard.Index, p.Shard.Count
	}
	return l
}
