package sched

import "fmt"

// Mode is a test mode: what a phase's level counts and how a worker admits
// requests for it. Each mode's admission policy is a file of its own
// (admit_depth.go, admit_conns.go, admit_rate.go); the worker asks the
// policy and never the mode.
type Mode uint8

// The test modes.
const (
	// Requests: connections are opened once and kept; the level is the
	// number of concurrent requests (outstanding requests per connection
	// × connections).
	Requests Mode = iota
	// Connections: the level is the number of concurrent connections;
	// each carries a few requests one at a time, the last one asking the
	// server to close, and its owner then opens the next connection.
	Connections
	// Rate: an open model. Connections are opened once and kept; the
	// level is an arrival rate in requests/s, scheduled against the
	// clock whatever the server does (admit_rate.go).
	Rate
)

// String is the mode's name in reports ("requests", "connections",
// "rate").
func (m Mode) String() string {
	switch m {
	case Connections:
		return "connections"
	case Rate:
		return "rate"
	}
	return "requests"
}

// Unit names what a level counts ("concurrent requests").
func (m Mode) Unit() string {
	switch m {
	case Connections:
		return "concurrent connections"
	case Rate:
		return "requests/s"
	}
	return "concurrent requests"
}

// owners is how many connection owners carry a phase at level over conns
// connections: in the requests test a level below conns leaves the other
// connections open and idle.
func (m Mode) owners(level, conns int) int {
	switch m {
	case Connections:
		return level
	case Requests:
		return min(level, conns)
	}
	return conns
}

// perConn is the most requests a connection holds at level: ⌈level/conns⌉
// in the requests test (on level mod conns of them; the others hold one
// fewer), 1 in the connections test.
func (m Mode) perConn(level, conns int) int {
	if m != Requests || conns < 1 {
		return 1
	}
	return (level + conns - 1) / conns
}

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

func (p Plan) perConnText(level int) string { return PerConnText(level, p.Conns) }

// share splits a phase's depth across workers: worker i of n gets its
// share (every worker gets the depth in the requests test, where the
// connections are split at start, and the whole rate in the rate test,
// where each worker takes every n-th arrival of one schedule).
func (m Mode) share(depth, i, n int) int {
	if m != Connections {
		return depth
	}
	s := depth / n
	if i < depth%n {
		s++
	}
	return s
}

func (m Mode) policy(cfg *Config, id int) admission {
	switch m {
	case Connections:
		return &connsPolicy{perConn: uint32(cfg.PerConn), keepAlive: cfg.KeepAlive}
	case Rate:
		return newRatePolicy(cfg, id)
	}
	return depthPolicy{}
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
}
