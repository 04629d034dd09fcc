// Package sched is brk's engine: a fixed set of OS-thread-locked workers,
// each owning a readiness poller, its connection owners, a timer wheel and
// a metrics recorder. It runs the phases that internal/judge's Ramp asks
// for (Engine implements judge.Phaser) and judges nothing itself.
//
// No goroutine runs per connection or per request, and the request path
// allocates nothing: request bytes are encoded once per target, responses
// are parsed by a streaming parser with fixed state, request slots live in
// per-owner rings sized at phase start, and deadlines live in the wheel.
//
// The walk of one request: io.go (a readiness event; reads parsed by the
// connection's protocol Session; writes of the session's output through
// the connection's transport) and request.go (admission onto the owner's
// ring, written, completed by the session's completion naming it,
// resolved and recorded), with the test mode's policy (admit_*.go)
// deciding what is admitted and what follows a response. The rate test's
// policy is also pumped once per turn of the worker's loop: it takes up
// the arrivals due on its schedule and names the instant of the next,
// which bounds the worker's poll timeout.
package sched

import (
	"crypto/tls"
	"errors"
	"time"

	"github.com/brk-bench/brk/internal/conn"
	"github.com/brk-bench/brk/internal/judge"
)

// Config is what the engine needs to drive one target. It is validated by
// the caller before any traffic.
type Config struct {
	// IO is how the workers move bytes (IOEpoll when zero).
	IO      IO
	Threads int           // worker threads (>= 1, <= Conns)
	Conns   int           // connection owners
	Addr    conn.Addr     // dial address
	Replay  bool          // the method may be replayed after Connection: close (GET, HEAD)
	Timeout time.Duration // request budget
	// MaxP99 and MaxP999 are the SLA's latency limits (0: none): each
	// span of a phase's timeline counts the responses slower than them.
	MaxP99, MaxP999 time.Duration
	// ServerPIDs are the server's processes on this box (given, or found
	// listening on a loopback target): their CPU is not the box's other
	// load (OtherLoad).
	ServerPIDs []int
	// Names name the settings a setup error suggests (the plan's
	// judge.Plan.Names).
	Names judge.Names

	// StatusOK reports which status codes are accepted.
	StatusOK func(code int) bool

	// Load is the test and its own settings (load.go): RequestsLoad,
	// ConnectionsLoad or RateLoad; nil is the requests test.
	Load Load

	// TLS, when set, makes every connection TLS (https://). Each owner
	// clones it with a session cache of its own unless NoResume.
	TLS      *tls.Config
	NoResume bool
	// ALPN, when set, is the protocol the TLS server must select ("h2");
	// a server that selects another or none fails the setup.
	ALPN string

	// NewSession makes one protocol session per connection owner.
	NewSession func() Session
	// Mix, when set, is a request mix of its targets (mix_engine.go);
	// nil is a mix of one target. NewSession's sessions take a target
	// index per request (exchange.Session.Queue).
	Mix *MixConfig

	// LevelConns is the requests test's connection count over which a
	// level is spread (every shard's; 0: Conns), and ConnBase the index
	// among them of this engine's first connection: connection g holds
	// judge.DepthOf(level, LevelConns, g).
	LevelConns int
	ConnBase   int
}

// levelConns is LevelConns or, when it is 0, Conns.
func (c *Config) levelConns() int {
	if c.LevelConns > 0 {
		return c.LevelConns
	}
	return c.Conns
}

// ownersInUse is how many of this engine's owners carry a phase at level
// (the connections test's level is this engine's share already).
func (c *Config) ownersInUse(level int) int { return c.load().inUse(c, level) }

func (c *Config) validate() error {
	switch {
	case c.Conns < 1:
		return errors.New("sched: need at least one connection")
	case c.Threads < 1 || c.Threads > c.Conns:
		return errors.New("sched: threads must be between 1 and the connection count")
	case c.Timeout <= 0:
		return errors.New("sched: timeout must be positive")
	case c.NewSession == nil:
		return errors.New("sched: no protocol session")
	}
	if err := c.validateMix(); err != nil {
		return err
	}
	return c.load().check()
}

// statusTable turns the StatusOK predicate into a lookup table.
func statusTable(f func(int) bool) *[600]bool {
	var t [600]bool
	for i := range t {
		if f == nil {
			t[i] = i >= 200 && i < 300
		} else {
			t[i] = f(i)
		}
	}
	return &t
}

// IO is a worker's I/O backend.
type IO uint8

const (
	// IOEpoll is the readiness poller: epoll on Linux, kqueue on macOS
	// and the BSDs; a system call per read and per write.
	IOEpoll IO = iota
	// IOUring is Linux's io_uring: receives and sends as completions,
	// one io_uring_enter per loop turn (internal/poller).
	IOUring
)
