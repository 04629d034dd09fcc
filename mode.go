package brk

import "brk/sched"

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
)

// Unit names what a level counts ("concurrent requests").
func (m Mode) Unit() string { return m.engine().Unit() }

// Noun is the unit of a level in a sentence's end ("concurrent
// requests", "connections").
func (m Mode) Noun() string {
	if m == ModeConnections {
		return "connections"
	}
	return "concurrent requests"
}

func (m Mode) engine() sched.Mode {
	if m == ModeConnections {
		return sched.Connections
	}
	return sched.Requests
}

func (m Mode) valid() bool { return m == ModeRequests || m == ModeConnections }
