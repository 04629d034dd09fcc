package sched

import (
	"errors"
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
	// share is worker i of n's part of a phase's level.
	share func(level, i, n int) int
	// inUse is how many of an engine's owners carry a phase at level.
	inUse func(c *Config, level int) int
	// bound is the highest level the engine supports over conns, named.
	bound func(conns int) (int, string)
	// policy is the admission policy of worker id.
	policy func(cfg *Config, id int) admission
	// check refuses an engine Config the mode cannot run ("" : none).
	check func(c *Config) error
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
			share: func(level, _, _ int) int { return level }, // connections are split at start
			inUse: func(c *Config, level int) int { return min(max(level-c.ConnBase, 0), c.Conns) },
			bound: func(conns int) (int, string) {
				b := min(MaxOutstanding, conns*MaxLevel)
				return b, fmt.Sprintf("%d outstanding requests (%d per connection)", b, MaxLevel)
			},
			policy: func(*Config, int) admission { return depthPolicy{} },
			check:  func(*Config) error { return nil },
		},
		Connections: {
			unit: "concurrent connections", noun: "connections",
			levelConns: true, judgeSetups: true, unreached: unreachedConns, defaultSearchStart: 16,
			owners: func(level, _ int) int { return level },
			depth:  func(int, int, int) int { return 1 },
			share: func(level, i, n int) int {
				s := level / n
				if i < level%n {
					s++
				}
				return s
			},
			inUse: func(_ *Config, level int) int { return level }, // this engine's share already
			bound: func(int) (int, string) { return MaxLevel, fmt.Sprintf("%d connections", MaxLevel) },
			policy: func(cfg *Config, _ int) admission {
				return &connsPolicy{perConn: uint32(cfg.PerConn), keepAlive: cfg.KeepAlive}
			},
			check: func(c *Config) error {
				if c.PerConn < 1 && !c.KeepAlive {
					return errors.New("sched: the connections test needs requests per connection")
				}
				return nil
			},
		},
		Rate: {
			unit: "requests/s", noun: "requests/s",
			clocked: true, defaultSearchStart: 100,
			unreached: func(*metrics.Phase, Plan, int) string { return "" },
			owners:    func(_, conns int) int { return conns },
			depth:     func(_, _, rateDepth int) int { return rateDepth },
			share:     func(level, _, _ int) int { return level }, // each worker takes every n-th arrival of one schedule
			inUse:     func(c *Config, _ int) int { return c.Conns },
			bound:     func(int) (int, string) { return MaxRate, fmt.Sprintf("%d requests/s", MaxRate) },
			policy:    func(cfg *Config, id int) admission { return newRatePolicy(cfg, id) },
			check: func(c *Config) error {
				if c.RateDepth < 1 {
					return errors.New("sched: the rate test needs a depth per connection")
				}
				return nil
			},
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

// share splits a phase's level across workers: worker i of n gets its
// share (every worker gets the depth in the requests test, where the
// connections are split at start, and the whole rate in the rate test,
// where each worker takes every n-th arrival of one schedule).
func (m Mode) share(level, i, n int) int { return m.spec().share(level, i, n) }

func (m Mode) policy(cfg *Config, id int) admission { return m.spec().policy(cfg, id) }

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

// admission is a test mode's admission policy, asked by the worker at a
// phase's start, before each admitted request, after each response and
// once per turn of its loop.
type admission interface {
	// start applies this worker's share of a phase's level: the depth
	// per connection and the owners that take part.
	start(w *worker, share int)
	// inUse reports whether owner o takes part in the phase.
	inUse(w *worker, o *owner) bool
	// next reports whether o may take one more request now (within the
	// depth and the session's capacity, which the worker checks), and
	// whether it is the connection's last. at is the request's admission
	// instant: its latency and its deadline start there. It is now, or
	// in the rate test the request's scheduled instant, which may be
	// earlier (backlog is latency).
	next(w *worker, o *owner, now int64) (at int64, ok, last bool)
	// answered decides what follows a response on o: it returns false
	// when the connection was retired or now waits for the server's close.
	answered(w *worker, o *owner, closing bool, now int64) bool
	// pump is called once per turn of the worker's loop, before it
	// waits, and at the end of admission: a policy driven by the clock
	// admits what is due at now. It returns the instant it next needs a
	// call (-1: none), which bounds the worker's poll timeout.
	pump(w *worker, now int64) int64
	// abort discards what the policy holds outside the owners' rings
	// (an interrupted phase), counting it as abandoned.
	abort(w *worker)
	// clocked reports whether the policy admits on the clock: the worker
	// then records the schedule (send lag, service time) and asks the OS
	// for precise timers.
	clocked() bool
	// followsLimit reports whether a connection's stream limit below its
	// depth is followed (limit.go): where the policy holds a depth the
	// server's SETTINGS can cap.
	followsLimit() bool
}
