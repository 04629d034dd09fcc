package judge

import (
	"fmt"

	"github.com/brk-bench/brk/internal/metrics"
)

// Mode is a test mode: what a phase's level counts and how a worker admits
// requests for it. Everything that differs between the modes is one entry
// of the table below (modes); callers read the entry's fields through
// Mode's methods and never compare modes. Each mode's admission policy is
// a file of its own (admit_depth.go, admit_conns.go, admit_rate.go); the
// worker asks the policy and never the mode. Its text (MarshalText) is
// the report's "test" field: requests, connections or rate. A Mode that
// is none of them is not Valid; the table answers for it as for the
// requests test (the zero Mode of an engine Config, a report without
// "test").
type Mode string

// The test modes.
const (
	// Requests: connections are opened once and kept; the level is the
	// number of concurrent requests (outstanding requests per connection
	// × connections).
	Requests Mode = "requests"
	// Connections: the level is the number of concurrent connections;
	// each carries a few requests one at a time, the last one asking the
	// server to close, and its owner then opens the next connection.
	Connections Mode = "connections"
	// Rate: an open model. Connections are opened once and kept; the
	// level is an arrival rate in requests/s, scheduled against the
	// clock whatever the server does (admit_rate.go).
	Rate Mode = "rate"
)

// modeSpec is one test mode's entry: what a phase's level is and how the
// engine runs and judges it.
type modeSpec struct {
	unit string // what a level counts, in a reason ("concurrent requests")
	noun string // the unit at a sentence's end ("connections")
	// perConnPlan: the plan's Start, Pace and Max count per connection
	// (a level is Conns × them); otherwise they are totals.
	perConnPlan bool
	// levelConns: the level is the connection count (Conns does not
	// apply; the run's connections are its highest level).
	levelConns bool
	// clocked: arrivals are scheduled against the clock. The client can
	// fall short of its schedule (a phase judged unfulfilled, never the
	// server's fault), connections are set up before phase 0, and the
	// machine is loaded from the phase's first instant.
	clocked bool
	// judgeSetups: the share of established setups is judged beside the
	// share of successes, whose reason then says "requests: ".
	judgeSetups bool
	// unreached names why a phase is unfulfilled because a connection
	// never held its part of level ("" : each did, or the rule does not
	// apply: the rate test's schedule decides what a connection holds).
	unreached func(s *metrics.Phase, plan Plan, level int) string
	// defaultSearchStart is the search's first level when the plan gives
	// none (a plan value: per connection when perConnPlan).
	defaultSearchStart int
	// owners is how many connection owners carry a phase at level over
	// conns connections.
	owners func(level, conns int) int
	// depth is the most requests a connection holds at level (rateDepth:
	// the plan's RateDepth).
	depth func(level, conns, rateDepth int) int
	// bound is the highest level the engine supports over conns, named.
	bound func(conns int) (int, string)
}

// modes is the table, filled in by init: its rules call Mode's methods,
// which read it.
var modes map[Mode]*modeSpec

func init() {
	modes = map[Mode]*modeSpec{
		Requests: {
			unit: "concurrent requests", noun: "concurrent requests",
			perConnPlan: true, unreached: unreachedDepth, defaultSearchStart: 1,
			owners: func(level, conns int) int { return min(level, conns) },
			depth: func(level, conns, _ int) int {
				if conns < 1 {
					return 1
				}
				return (level + conns - 1) / conns
			},
			bound: func(conns int) (int, string) {
				b := min(MaxOutstanding, conns*MaxLevel)
				return b, fmt.Sprintf("%d outstanding requests (%d per connection)", b, MaxLevel)
			},
		},
		Connections: {
			unit: "concurrent connections", noun: "connections",
			levelConns: true, judgeSetups: true, unreached: unreachedConns, defaultSearchStart: 16,
			owners: func(level, _ int) int { return level },
			depth:  func(int, int, int) int { return 1 },
			bound:  func(int) (int, string) { return MaxLevel, fmt.Sprintf("%d connections", MaxLevel) },
		},
		Rate: {
			unit: "requests/s", noun: "requests/s",
			clocked: true, defaultSearchStart: 100,
			unreached: func(*metrics.Phase, Plan, int) string { return "" },
			owners:    func(_, conns int) int { return conns },
			depth:     func(_, _, rateDepth int) int { return rateDepth },
			bound:     func(int) (int, string) { return MaxRate, fmt.Sprintf("%d requests/s", MaxRate) },
		},
	}
}

// Modes lists the test modes in their order.
func Modes() []Mode { return []Mode{Requests, Connections, Rate} }

func (m Mode) spec() *modeSpec {
	if s, ok := modes[m]; ok {
		return s
	}
	return modes[Requests]
}

// Valid reports whether m is one of the test modes.
func (m Mode) Valid() bool { _, ok := modes[m]; return ok }

// String is the mode's name in reports ("requests", "connections",
// "rate").
func (m Mode) String() string { return string(m) }

// MarshalText is the mode's name.
func (m Mode) MarshalText() ([]byte, error) { return []byte(m), nil }

// UnmarshalText reads a mode's name as it is; Valid tells whether it is
// one of the modes (a reader refuses an unknown test with its own words).
func (m *Mode) UnmarshalText(b []byte) error {
	*m = Mode(b)
	return nil
}

// Unit names what a level counts ("concurrent requests").
func (m Mode) Unit() string { return m.spec().unit }

// Noun is the unit of a level in a sentence's end ("concurrent
// requests", "connections", "requests/s").
func (m Mode) Noun() string { return m.spec().noun }

// PerConnPlan reports whether a plan's Start, Pace and Max count per
// connection in this mode (a level is Conns × them); otherwise they are
// totals.
func (m Mode) PerConnPlan() bool { return m.spec().perConnPlan }

// PlanUnit is what a plan's Start, Pace and Max are multiplied by to be a
// level over conns connections: conns where they count per connection,
// else 1.
func (m Mode) PlanUnit(conns int) int {
	if m.spec().perConnPlan {
		return conns
	}
	return 1
}

// LevelIsConns reports whether the level is the connection count (the
// plan's Conns does not apply; the run's connections are its highest
// level).
func (m Mode) LevelIsConns() bool { return m.spec().levelConns }

// Clocked reports whether arrivals are scheduled against the clock (an
// open model: a schedule, its depth per connection and its arrivals).
func (m Mode) Clocked() bool { return m.spec().clocked }

// DefaultSearchStart is the search's first level when a plan gives none,
// in the plan's terms (per connection where PerConnPlan).
func (m Mode) DefaultSearchStart() int { return m.spec().defaultSearchStart }

// owners is how many connection owners carry a phase at level over conns
// connections: in the requests test a level below conns leaves the other
// connections open and idle.
func (m Mode) owners(level, conns int) int { return m.spec().owners(level, conns) }

// depth is the most requests a connection holds at level: ⌈level/conns⌉
// in the requests test (on level mod conns of them; the others hold one
// fewer), 1 in the connections test, RateDepth in the rate test.
func (p Plan) depth(level int) int { return p.Mode.spec().depth(level, p.Conns, p.RateDepth) }

// DepthOf is what connection g (0-based, of conns) holds at level in the
// requests test: ⌈level/conns⌉ on the first level mod conns connections,
// ⌊level/conns⌋ on the others.
func DepthOf(level, conns, g int) int {
	d := level / conns
	if g < level%conns {
		d++
	}
	return d
}

// PerConnText says what a requests-test level is made of: "3 per
// connection", or "8 connections × 4 + 56 × 3" when level is not a
// multiple of conns.
func PerConnText(level, conns int) string {
	if conns < 1 {
		return ""
	}
	hi, d := level%conns, level/conns
	switch {
	case hi == 0:
		return fmt.Sprintf("%d per connection", d)
	case d == 0:
		return fmt.Sprintf("%d connections × 1, %d idle", hi, conns-hi)
	}
	return fmt.Sprintf("%d connections × %d + %d × %d", hi, d+1, conns-hi, d)
}

// levelText is a level with its unit, and in a mode whose plan counts per
// connection what it is made of: "64 concurrent requests (1 per
// connection)".
func (p Plan) levelText(level int) string {
	if p.Mode.spec().perConnPlan {
		return fmt.Sprintf("%d %s (%s)", level, p.Mode.Unit(), PerConnText(level, p.Conns))
	}
	return fmt.Sprintf("%d %s", level, p.Mode.Unit())
}
