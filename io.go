package brk

import (
	"os"

	"github.com/brk-bench/brk/internal/sched"
	"github.com/brk-bench/brk/internal/uring"
)

// Plan.IO's values.
const (
	// IOAuto is the readiness poller (epoll, kqueue) for now: io_uring is
	// chosen by name (IOUring) until it has been measured cheaper on
	// every workload (docs/engine.md).
	IOAuto = ""
	// IOEpoll is the readiness poller: epoll on Linux, kqueue on macOS and
	// the BSDs; a system call per read and per write.
	IOEpoll = "epoll"
	// IOUring is Linux's io_uring: receives and sends as completions of
	// one ring per worker, one system call per loop turn.
	IOUring = "uring"
)

// ioEnv is the environment variable that overrides Plan.IO.
const ioEnv = "BRK_IO"

// asked is the backend p asks for: BRK_IO when set, else p.IO.
func (p Plan) asked() string {
	if v, ok := os.LookupEnv(ioEnv); ok {
		return v
	}
	return p.IO
}

// UsesUring reports whether a run of p moves its bytes through io_uring
// (IOUring, by Plan.IO or BRK_IO): the report's header says so.
func (p Plan) UsesUring() bool { return p.asked() == IOUring }

// chooseIO returns the backend a plan's IO asks for on this box (BRK_IO
// first), or why it cannot run here.
func chooseIO(p Plan) (sched.IO, *PlanError) {
	io := p.asked()
	switch io {
	case IOAuto, "auto", IOEpoll:
		return sched.IOEpoll, nil
	case IOUring:
		if err := uring.Available(); err != nil {
			return 0, refuse("%s %s: io_uring cannot be set up on this box (%v); use %s %s", fIO, IOUring, err, fIO, IOEpoll)
		}
		return sched.IOUring, nil
	}
	return 0, refuse("%s %q: want %s or %s (or empty: the readiness poller)", fIO, io, IOEpoll, IOUring)
}
