package sched

import (
	"errors"

	"github.com/brk-bench/brk/internal/judge"
)

// engineMode is a test mode's row in the engine: how its level is split
// over workers and owners and which admission policy runs it. The mode's
// words, units and planning are the judge's row (judge.Mode); the worker
// asks the policy and never the mode.
type engineMode struct {
	// share is worker i of n's part of a phase's level.
	share func(level, i, n int) int
	// inUse is how many of an engine's owners carry a phase at level.
	inUse func(c *Config, level int) int
	// policy is the admission policy of worker id.
	policy func(cfg *Config, id int) admission
	// check refuses an engine Config the mode cannot run (nil: none).
	check func(c *Config) error
}

// engineModes is the engine's row of each test mode; a Mode that is none
// of them runs as the requests test (the zero Mode of a Config).
var engineModes = map[judge.Mode]*engineMode{
	judge.Requests: {
		share:  func(level, _, _ int) int { return level }, // connections are split at start
		inUse:  func(c *Config, level int) int { return min(max(level-c.ConnBase, 0), c.Conns) },
		policy: func(*Config, int) admission { return depthPolicy{} },
		check:  func(*Config) error { return nil },
	},
	judge.Connections: {
		share: func(level, i, n int) int {
			s := level / n
			if i < level%n {
				s++
			}
			return s
		},
		inUse: func(_ *Config, level int) int { return level }, // this engine's share already
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
	judge.Rate: {
		share:  func(level, _, _ int) int { return level }, // each worker takes every n-th arrival of one schedule
		inUse:  func(c *Config, _ int) int { return c.Conns },
		policy: func(cfg *Config, id int) admission { return newRatePolicy(cfg, id) },
		check: func(c *Config) error {
			if c.RateDepth < 1 {
				return errors.New("sched: the rate test needs a depth per connection")
			}
			return nil
		},
	},
}

// engineOf is m's engine row.
func engineOf(m judge.Mode) *engineMode {
	if e, ok := engineModes[m]; ok {
		return e
	}
	return engineModes[judge.Requests]
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
