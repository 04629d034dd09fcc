package brk

import (
	"github.com/brk-bench/brk/internal/judge"
)

// Mode is a test mode: what a phase's level counts. It is the engine's
// type (judge.Mode): one table holds what each mode decides (its noun and
// unit, how many connections a level needs, its admission policy), and
// callers read it through Mode's methods (Unit, Noun, PerConnPlan,
// LevelIsConns, Clocked, ...) rather than compare modes. The library's
// own rules of each test are methods of its Load (load_rules.go; loadOf
// gives a Mode's). Its text (MarshalText) is the report's "test" field:
// requests, connections or rate.
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
