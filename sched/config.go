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

// Session is one connection's protocol as the worker drives it: it
// encodes the requests the worker admits, says how many of them a write
// completed, and parses responses. The worker owns the sockets, admission,
// deadlines and outcomes; a protocol package exports a type that satisfies
// this without importing sched (h1.Session).
type Session interface {
	// Reset begins a new connection: nothing queued, no response begun.
	Reset()
	// Queue appends one admitted request; last marks a connection's final
	// request (it asks the server to close).
	Queue(last bool)
	// Output returns queued bytes not yet written (nil when none).
	Output() []byte
	// Wrote consumes n bytes of Output and returns how many requests are
	// now completely written.
	Wrote(n int) int
	// Parse consumes response bytes; done when the response to the oldest
	// written request is complete (Status, BodyOK and Closing describe it).
	Parse(b []byte) (n int, done bool, err error)
	// EOF tells the session the peer closed: done completes a
	// close-delimited response.
	EOF() (done bool, err error)
	Status() int
	BodyOK() bool
	Closing() bool
}

// Config is what the engine needs to drive one target. It is validated by
// the caller before any traffic.
type Config struct {
	Threads int           // worker threads (>= 1, <= Conns)
	Conns   int           // connection owners
	Addr    conn.Addr     // dial address
	Replay  bool          // the method may be replayed after Connection: close (GET, HEAD)
	Timeout time.Duration // request budget

	// StatusOK reports which status codes are accepted.
	StatusOK func(code int) bool

	// Connections selects the connections test: a phase's depth is the
	// number of concurrent connections; each carries PerConn requests one
	// at a time, the last one asking the server to close, then
	// waits for the server to close, and its owner opens the next one.
	Connections bool
	PerConn     int

	// TLS, when set, makes every connection TLS (https://). Each owner
	// clones it with a session cache of its own unless NoResume.
	TLS      *tls.Config
	NoResume bool

	// NewSession makes one protocol session per connection owner.
	NewSession func() Session
}

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
	case c.Connections && c.PerConn < 1:
		return errors.New("sched: the connections test needs requests per connection")
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
