//go:build darwin || dragonfly || freebsd

package poller

import (
	"os"

	"golang.org/x/sys/unix"
)

// wakeIdent is the EVFILT_USER identifier of the wake-up event.
const wakeIdent = 0

// Poller waits for readiness of many descriptors on one thread.
type Poller struct {
	kq  int
	raw []unix.Kevent_t
	ts  unix.Timespec // the wait's timeout, kept here so that a wait allocates nothing
}

// New creates a poller with a wake-up event.
func New() (*Poller, error) {
	kq, err := unix.Kqueue()
	if err != nil {
		return nil, os.NewSyscallError("kqueue", err)
	}
	unix.CloseOnExec(kq)
	ev := []unix.Kevent_t{{Ident: wakeIdent, Filter: unix.EVFILT_USER, Flags: unix.EV_ADD | unix.EV_CLEAR}}
	if _, err := unix.Kevent(kq, ev, nil, nil); err != nil {
		unix.Close(kq)
		return nil, os.NewSyscallError("kevent", err)
	}
	return &Poller{kq: kq, raw: make([]unix.Kevent_t, 256)}, nil
}

// Add registers fd for edge-triggered (EV_CLEAR) read and write readiness.
func (p *Poller) Add(fd int) error {
	ev := []unix.Kevent_t{
		{Ident: uint64(fd), Filter: unix.EVFILT_READ, Flags: unix.EV_ADD | unix.EV_CLEAR},
		{Ident: uint64(fd), Filter: unix.EVFILT_WRITE, Flags: unix.EV_ADD | unix.EV_CLEAR},
	}
	_, err := unix.Kevent(p.kq, ev, nil, nil)
	return os.NewSyscallError("kevent", err)
}

// Wait blocks up to timeoutMs (-1: forever) and fills events. A descriptor
// ready for both directions yields two events. EINTR is zero events.
func (p *Poller) Wait(events []Event, timeoutMs int) (int, error) {
	if timeoutMs < 0 {
		return p.WaitNs(events, -1)
	}
	return p.WaitNs(events, int64(timeoutMs)*1e6)
}

// WaitNs is Wait with a timeout in nanoseconds (-1: forever).
func (p *Poller) WaitNs(events []Event, timeoutNs int64) (int, error) {
	max := len(events)
	if max > len(p.raw) {
		max = len(p.raw)
	}
	var ts *unix.Timespec
	if timeoutNs >= 0 {
		p.ts = unix.NsecToTimespec(timeoutNs)
		ts = &p.ts
	}
	n, err := unix.Kevent(p.kq, nil, p.raw[:max], ts)
	if err != nil {
		if err == unix.EINTR {
			return 0, nil
		}
		return 0, os.NewSyscallError("kevent", err)
	}
	k := 0
	for i := 0; i < n; i++ {
		r := &p.raw[i]
		if r.Filter == unix.EVFILT_USER {
			continue
		}
		e := Event{Fd: int32(r.Ident)}
		switch r.Filter {
		case unix.EVFILT_READ:
			e.Readable = true
		case unix.EVFILT_WRITE:
			e.Writable = true
		}
		if r.Flags&(unix.EV_EOF|unix.EV_ERROR) != 0 {
			e.Hup = true
			e.Readable = true
		}
		events[k] = e
		k++
	}
	return k, nil
}

// Wake makes a concurrent or later Wait return. Safe from any goroutine.
func (p *Poller) Wake() error {
	ev := []unix.Kevent_t{{Ident: wakeIdent, Filter: unix.EVFILT_USER, Fflags: unix.NOTE_TRIGGER}}
	_, err := unix.Kevent(p.kq, ev, nil, nil)
	return os.NewSyscallError("kevent", err)
}

// Close releases the kqueue.
func (p *Poller) Close() error {
	return os.NewSyscallError("close", unix.Close(p.kq))
}
