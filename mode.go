package brk

import "github.com/brk-bench/brk/sched"

// Mode is a test mode: what a phase's level counts. Its text is the
// report's "test" field.
type Mode string

// The test modes.
const (
	// ModeRequests raises concurrent requests over connections opened once.
	ModeRequests Mode = "requests"
	// ModeConnections raises concurrent connections, each set up, used for
	// a few requests and closed by the server.
	ModeConnections Mode = "connections"
	// ModeRate raises an arrival rate (requests/s) scheduled against the
	// clock over connections opened once: an open model.
	ModeRate Mode = "rate"
)

// Unit names what a level counts ("concurrent requests").
func (m Mode) Unit() string { return m.engine().Unit() }

// Noun is the unit of a level in a sentence's end ("concurrent
// requests", "connections").
func (m Mode) Noun() string {
	switch m {
	case ModeConnections:
		return "connections"
	case ModeRate:
		return "requests/s"
	}
	return "concurrent requests"
}

func (m Mode) engine() sched.Mode {
	switch m {
	case ModeConnections:
		return sched.Connections
	case ModeRate:
		return sched.Rate
	}
	return sched.Requests
}

func (m Mode) valid() bool { return m == ModeRequests || m == ModeConnections || m == ModeRate }
