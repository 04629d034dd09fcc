package brk

import (
	"github.com/brk-bench/brk/internal/judge"
	"github.com/brk-bench/brk/internal/shard"
)

// Mode is a test mode: what a phase's level counts. It is the engine's
// type (judge.Mode): one table holds what each mode decides (its noun and
// unit, how many connections a level needs, its admission policy), and
// callers read it through Mode's methods (Unit, Noun, PerConnPlan,
// LevelIsConns, Clocked, ...) rather than compare modes. Its text
// (MarshalText) is the report's "test" field: requests, connections or
// rate.
type Mode = judge.Mode

// The test modes.
const (
	// ModeRequests raises concurrent requests over connections opened once.
	ModeRequests = judge.Requests
	// ModeConnections raises concurrent connections, each set up, used for
	// a few requests and closed by the server.
	ModeConnections = judge.Connections
	// ModeRate raises an arrival rate (requests/s) scheduled against the
	// clock over connections opened once: an open model.
	ModeRate = judge.Rate
)

// Verdict names how a run ended: the judge's type (judge.Verdict), whose
// text (MarshalText) is the report's "verdict" and whose ExitCode is the
// CLI's exit status.
type Verdict = judge.Verdict

// The verdicts.
const (
	VerdictDone         = judge.Done
	VerdictBroken       = judge.Broken
	VerdictInconclusive = judge.Inconclusive
	VerdictInterrupted  = judge.Interrupted
)

// modeRules is what the API decides per test mode, beside the judge's
// entry (internal/judge/mode.go, read through Mode's methods) and the
// engine's (internal/sched/modes.go): the plan's defaults and refusals,
// its validation and the report's mode fields. One entry per mode;
// callers read it through rulesOf and never compare modes.
type modeRules struct {
	// fill fills the mode's defaults into p and refuses what does not
	// apply to the mode, before the plan is validated.
	fill func(t *Target, p *Plan) error
	// checks are the plan's refusals in the order they are tried (a plan
	// with its defaults filled in): the first that refuses names the plan's
	// error.
	checks []planCheck
	// report fills the mode's fields of res and of its plan.
	report func(res *Result, p Plan)
	// firstConns is how many connections phase 0 opens (a plan checked:
	// its Conns the run's connections); threads never outnumber them.
	firstConns func(p Plan) int
	// splitsConns: the plan's Conns connections are opened once and split
	// over the shards of a sharded run (each shard needs one).
	splitsConns bool
	// shardLevel is shard index of count's part of a phase's level (the
	// engine splits the rest by its connection base and arrivals).
	shardLevel func(level, index, count int) int
}

func allConns(p Plan) int { return p.Conns }

func wholeLevel(level, _, _ int) int { return level }

// planCheck refuses a plan (nil: it passes).
type planCheck func(p Plan) *PlanError

var modeTable = map[Mode]*modeRules{
	ModeRequests: {
		fill: fillOpenModel,
		checks: []planCheck{noRateFields, connsAtLeast1, startPaceAtLeast1(""), maxNotNegative, startNotAboveMax,
			phaseAtLeast1ms, timeoutAtLeast1ms, threadsNotNegative, threadsWithinConns, perConnLevelsWithinEngine,
			connsWithinEngine, outstandingWithinEngine},
		report:     func(res *Result, p Plan) { res.Plan.Conns = p.Conns },
		firstConns: allConns, splitsConns: true, shardLevel: wholeLevel,
	},
	ModeConnections: {
		fill: fillConnections,
		// The level is the connection count: Conns does not apply, and the
		// threads are capped at the level.
		checks: levelIsConns(noRateFields, connsAtLeast1, startPaceAtLeast1(""), maxNotNegative, startNotAboveMax,
			phaseAtLeast1ms, timeoutAtLeast1ms, threadsNotNegative, threadsWithinConns, levelsWithinEngine,
			connsWithinEngine, outstandingWithinEngine),
		report: func(res *Result, p Plan) {
			res.Conns = 0
			res.Requests, res.KeepAlive = p.Requests, p.KeepAlive
			res.Plan.Requests, res.Plan.KeepAlive = p.Requests, p.KeepAlive
		},
		firstConns: func(p Plan) int { return p.Start },
		shardLevel: shard.Share,
	},
	ModeRate: {
		fill: fillRate,
		checks: []planCheck{connsAtLeast1, startPaceAtLeast1(" (requests/s)"), maxNotNegative, startNotAboveMax,
			rateWithinEngine, phaseAtLeast1ms, timeoutAtLeast1ms, threadsNotNegative, threadsWithinConns,
			connsWithinEngine, rateDepthAtLeast1, slotsWithinEngine, arrivalsKnown, seedWithinJSON, noRequests},
		report: func(res *Result, p Plan) {
			res.Plan.Conns = p.Conns
			res.RateDepth, res.Arrivals = p.RateDepth, p.Arrivals
			if p.Arrivals == "poisson" {
				res.Seed = p.Seed
			}
		},
		firstConns: allConns, splitsConns: true, shardLevel: wholeLevel,
	},
}

// rulesOf is m's entry of the table, or nil for an unknown mode.
func rulesOf(m Mode) *modeRules { return modeTable[m] }

// levelConns is the run's connections where the level is the connection
// count (the highest level: Max, or Start without one); Conns otherwise.
func levelConns(p Plan, m Mode) int {
	if !m.LevelIsConns() {
		return p.Conns
	}
	if p.Max > 0 {
		return p.Max
	}
	return p.Start
}

// levelIsConns wraps checks for a mode whose level is the connection
// count: they see one connection and automatic threads.
func levelIsConns(checks ...planCheck) []planCheck {
	out := make([]planCheck, len(checks))
	for i, c := range checks {
		out[i] = func(p Plan) *PlanError {
			p.Conns, p.Threads = 1, 0
			return c(p)
		}
	}
	return out
}
