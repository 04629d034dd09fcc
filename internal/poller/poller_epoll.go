//go:build linux

package poller

import (
	"os"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/brk-bench/brk/internal/conn"
)

// Poller waits for readiness of many descriptors on one thread.
type Poller struct {
	epfd   int
	wakefd int
	raw    []unix.EpollEvent
	ts     unix.Timespec // epoll_pwait2's timeout, kept here so that a wait allocates nothing
	noPW2  bool          // the kernel has no epoll_pwait2 (before 5.11): millisecond waits
	ring   *ringPoller   // the io_uring backend (NewUring); nil: epoll
}

// New creates a poller with a wake-up descriptor.
func New() (*Poller, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, os.NewSyscallError("epoll_create1", err)
	}
	wfd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		unix.Close(epfd)
		return nil, os.NewSyscallError("eventfd", err)
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLET, Fd: int32(wfd)}
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, wfd, &ev); err != nil {
		unix.Close(wfd)
		unix.Close(epfd)
		return nil, os.NewSyscallError("epoll_ctl", err)
	}
	return &Poller{epfd: epfd, wakefd: wfd, raw: make([]unix.EpollEvent, 256)}, nil
}

// Add registers fd for edge-triggered read and write readiness (on a
// ring: for its connect's completion, a writable event).
func (p *Poller) Add(fd int) error {
	if p.ring != nil {
		return p.ring.add(fd)
	}
	ev := unix.EpollEvent{
		Events: unix.EPOLLIN | unix.EPOLLOUT | unix.EPOLLRDHUP | unix.EPOLLET,
		Fd:     int32(fd),
	}
	return os.NewSyscallError("epoll_ctl", unix.EpollCtl(p.epfd, unix.EPOLL_CTL_ADD, fd, &ev))
}

// Wait blocks up to timeoutMs (-1: forever) and fills events. Wake-ups are
// consumed here and reported as a zero-length result when nothing else is
// ready. EINTR is reported as zero events.
func (p *Poller) Wait(events []Event, timeoutMs int) (int, error) {
	if timeoutMs < 0 {
		return p.WaitNs(events, -1)
	}
	return p.WaitNs(events, int64(timeoutMs)*1e6)
}

// WaitNs is Wait with a timeout in nanoseconds (-1: forever): epoll_pwait2
// where the kernel has it (Linux 5.11), so that a worker can wake for a
// scheduled instant with microsecond precision; otherwise the timeout is
// rounded up to whole milliseconds.
func (p *Poller) WaitNs(events []Event, timeoutNs int64) (int, error) {
	if p.ring != nil {
		return p.ring.wait(events, timeoutNs)
	}
	max := len(events)
	if max > len(p.raw) {
		max = len(p.raw)
	}
	var n int
	var err error
	switch {
	case timeoutNs < 0:
		n, err = unix.EpollWait(p.epfd, p.raw[:max], -1)
	case !p.noPW2:
		p.ts = unix.NsecToTimespec(timeoutNs)
		r0, _, e1 := unix.Syscall6(unix.SYS_EPOLL_PWAIT2, uintptr(p.epfd), uintptr(unsafe.Pointer(&p.raw[0])),
			uintptr(max), uintptr(unsafe.Pointer(&p.ts)), 0, 0)
		n = int(r0)
		if e1 == unix.ENOSYS {
			p.noPW2 = true
			return p.WaitNs(events, timeoutNs)
		}
		if e1 != 0 {
			err = e1
		}
	default:
		n, err = unix.EpollWait(p.epfd, p.raw[:max], int((timeoutNs+999_999)/1_000_000))
	}
	if err != nil {
		if err == unix.EINTR {
			return 0, nil
		}
		return 0, os.NewSyscallError("epoll_wait", err)
	}
	k := 0
	for i := 0; i < n; i++ {
		r := &p.raw[i]
		if int(r.Fd) == p.wakefd {
			var buf [8]byte
			unix.Read(p.wakefd, buf[:])
			continue
		}
		events[k] = Event{
			Fd:       r.Fd,
			Readable: r.Events&(unix.EPOLLIN|unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) != 0,
			Writable: r.Events&(unix.EPOLLOUT|unix.EPOLLERR) != 0,
			Hup:      r.Events&(unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) != 0,
		}
		k++
	}
	return k, nil
}

// Wake makes a concurrent or later Wait return. Safe from any goroutine.
func (p *Poller) Wake() error {
	if p.ring != nil {
		return p.ring.wake()
	}
	var one = [8]byte{1, 0, 0, 0, 0, 0, 0, 0}
	_, err := unix.Write(p.wakefd, one[:])
	if err == unix.EAGAIN {
		return nil // the counter is saturated: a wake-up is pending anyway
	}
	return os.NewSyscallError("write", err)
}

// Close releases the poller's descriptors.
func (p *Poller) Close() error {
	if p.ring != nil {
		return p.ring.close()
	}
	unix.Close(p.wakefd)
	return os.NewSyscallError("close", unix.Close(p.epfd))
}

// Uring reports whether p moves its connections' bytes through an
// io_uring (NewUring).
func (p *Poller) Uring() bool { return p.ring != nil }

// Raw returns the ring's byte mover for fd's established connection and
// arms its receive (conn.TLS.UseRaw); nil on epoll, whose transports make
// their own system calls.
func (p *Poller) Raw(fd int) conn.Raw {
	if p.ring == nil {
		return nil
	}
	return p.ring.raw(fd)
}

// Transport returns the ring's transport for fd's established plain
// connection and arms its receive; nil on epoll, where a conn.Plain makes
// the system calls.
func (p *Poller) Transport(fd int) conn.Transport {
	if p.ring == nil {
		return nil
	}
	return p.ring.transport(fd)
}

// Forget ends what the poller does on fd; call it before closing fd (a
// ring's receive would keep the socket open).
func (p *Poller) Forget(fd int) {
	if p.ring != nil {
		p.ring.forget(fd)
	}
}
