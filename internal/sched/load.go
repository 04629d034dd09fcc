package sched

import (
	"errors"

	"github.com/brk-bench/brk/internal/judge"
)

// Load is a test's engine side, a value chosen once (Config.Load; nil is
// the requests test): how a phase's level is split over workers and
// owners, the admission policy that runs it, and the test's own
// settings. The test's words, units and planning are the judge's
// (judge.Mode); the worker asks the policy and never the test.
type Load interface {
	// Mode is the test this value runs.
	Mode() judge.Mode
	// share is worker i of n's part of a phase's level.
	share(level, i, n int) int
	// inUse is how many of an engine's owners carry a phase at level.
	inUse(c *Config, level int) int
	// policy is the admission policy of worker id.
	policy(c *Config, id int) admission
	// check refuses a value the engine cannot run.
	check() error
}

// RequestsLoad is the requests test: each phase's level is a depth per
// connection over the engine's connections, opened once.
type RequestsLoad struct{}

// ConnectionsLoad is the connections test: a phase's level is concurrent
// connections, each carrying PerConn requests one at a time.
type ConnectionsLoad struct {
	PerConn int
	// KeepAlive keeps each connection carrying requests one at a time
	// until the admission window ends, instead of PerConn requests.
	KeepAlive bool
}

// RateLoad is the rate test: a phase's level is arrivals per second on a
// schedule against the clock.
type RateLoad struct {
	// Depth is the most outstanding requests a connection carries.
	Depth int
	// Poisson draws exponential gaps between arrivals from Seed (with the
	// phase number) instead of a uniform schedule.
	Poisson bool
	Seed    uint64
	// ShardIndex and Shards make this engine shard ShardIndex of Shards:
	// it takes arrivals k ≡ ShardIndex (mod Shards) of each phase's one
	// schedule (Shards 0: every arrival). A phase's level is then the
	// whole schedule's rate.
	ShardIndex, Shards int
}

// Mode is judge.Requests.
func (RequestsLoad) Mode() judge.Mode { return judge.Requests }

// Mode is judge.Connections.
func (ConnectionsLoad) Mode() judge.Mode { return judge.Connections }

// Mode is judge.Rate.
func (RateLoad) Mode() judge.Mode { return judge.Rate }

// The requests test's connections are split over workers at start: each
// worker applies the whole level to its owners (ConnBase places them).
func (RequestsLoad) share(level, _, _ int) int { return level }

// The connections test's level is split over the workers.
func (ConnectionsLoad) share(level, i, n int) int {
	s := level / n
	if i < level%n {
		s++
	}
	return s
}

// Each worker takes every n-th arrival of the rate test's one schedule.
func (RateLoad) share(level, _, _ int) int { return level }

func (RequestsLoad) inUse(c *Config, level int) int {
	return min(max(level-c.ConnBase, 0), c.Conns)
}

// The connections test's level is this engine's share already.
func (ConnectionsLoad) inUse(_ *Config, level int) int { return level }

func (RateLoad) inUse(c *Config, _ int) int { return c.Conns }

func (RequestsLoad) policy(*Config, int) admission { return depthPolicy{} }

func (l ConnectionsLoad) policy(*Config, int) admission {
	return &connsPolicy{perConn: uint32(l.PerConn), keepAlive: l.KeepAlive}
}

func (l RateLoad) policy(c *Config, id int) admission { return newRatePolicy(l, c.Threads, id) }

func (RequestsLoad) check() error { return nil }

func (l ConnectionsLoad) check() error {
	if l.PerConn < 1 && !l.KeepAlive {
		return errors.New("sched: the connections test needs requests per connection")
	}
	return nil
}

func (l RateLoad) check() error {
	switch {
	case l.Depth < 1:
		return errors.New("sched: the rate test needs a depth per connection")
	case l.Shards < 0 || l.ShardIndex < 0 || l.ShardIndex >= max(l.Shards, 1):
		return errors.New("sched: the shard index must be in 0..Shards-1")
	}
	return nil
}

// load is c's test: Config.Load, or the requests test.
func (c *Config) load() Load {
	if c.Load == nil {
		return RequestsLoad{}
	}
	return c.Load
}

// admission is a test's admission policy, asked by the worker at a
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
