// Package sched is brk's engine: a fixed set of OS-thread-locked workers,
// each owning a readiness poller, its connection owners, a timer wheel and
// a metrics recorder, and the phase controller that drives them.
//
// No goroutine runs per connection or per request, and the request path
// allocates nothing: request bytes are encoded once per target, responses
// are parsed by a streaming parser with fixed state, request slots live in
// per-owner rings sized at phase start, and deadlines live in the wheel.
package sched

import (
	"crypto/tls"
	"errors"
	"time"

	"brk/conn"
)

// Parser is the response side of a protocol session as the worker drives
// it: one response at a time, in order. h1.Parser satisfies it; sched does
// not depend on its framing.
type Parser interface {
	SetExpectBody(b []byte, check bool)
	Reset(head bool)
	Parse(b []byte) (n int, done bool, err error)
	EOF() (done bool, err error)
	Started() bool
	Status() int
	Close() bool
	BodyOK() bool
}

// Config is what the engine needs to drive one target. It is validated by
// the caller before any traffic.
type Config struct {
	Threads int           // worker threads (>= 1, <= Conns)
	Conns   int           // connection owners
	Addr    conn.Addr     // dial address
	Request []byte        // one encoded request
	Head    bool          // the request is HEAD (responses have no body)
	Replay  bool          // the method may be replayed after Connection: close (GET, HEAD)
	Timeout time.Duration // request budget

	// StatusOK reports which status codes are accepted.
	StatusOK func(code int) bool
	// ExpectBody, when CheckBody, is the exact body every response must carry.
	ExpectBody []byte
	CheckBody  bool

	// Connections selects the connections test: a phase's depth is the
	// number of concurrent connections; each carries PerConn requests one
	// at a time, the last one CloseRequest (with Connection: close), then
	// waits for the server to close, and its owner opens the next one.
	Connections  bool
	PerConn      int
	CloseRequest []byte

	// TLS, when set, makes every connection TLS (https://). Each owner
	// clones it with a session cache of its own unless NoResume.
	TLS      *tls.Config
	NoResume bool

	// NewParser makes one response parser per connection owner.
	NewParser func() Parser
}

func (c *Config) validate() error {
	switch {
	case c.Conns < 1:
		return errors.New("sched: need at least one connection")
	case c.Threads < 1 || c.Threads > c.Conns:
		return errors.New("sched: threads must be between 1 and the connection count")
	case len(c.Request) == 0:
		return errors.New("sched: empty request")
	case c.Timeout <= 0:
		return errors.New("sched: timeout must be positive")
	case c.NewParser == nil:
		return errors.New("sched: no parser")
	case c.Connections && (c.PerConn < 1 || len(c.CloseRequest) == 0):
		return errors.New("sched: the connections test needs requests per connection and a closing request")
	}
	return nil
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
