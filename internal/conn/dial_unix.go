//go:build linux || darwin || dragonfly || freebsd

package conn

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

func (a Addr) sockaddr() unix.Sockaddr {
	if a.family == unix.AF_INET {
		sa := &unix.SockaddrInet4{Port: a.port}
		copy(sa.Addr[:], a.ip[:4])
		return sa
	}
	sa := &unix.SockaddrInet6{Port: a.port}
	copy(sa.Addr[:], a.ip[:])
	return sa
}

// Dialer starts nonblocking connects to one address. Its socket address is
// built once, so a dial allocates nothing in Go.
type Dialer struct {
	addr Addr
	sa   unix.Sockaddr
}

// NewDialer prepares dials to a.
func NewDialer(a Addr) *Dialer { return &Dialer{addr: a, sa: a.sockaddr()} }

// Addr returns the dialed address.
func (d *Dialer) Addr() Addr { return d.addr }

// Dial creates a nonblocking TCP socket with TCP_NODELAY and starts a
// connect. The connect usually completes later: register fd with the poller
// and call Finish at its first write readiness. A refused connect can be
// reported at once as an error.
func (d *Dialer) Dial() (fd int, err error) {
	fd, err = unix.Socket(d.addr.family, unix.SOCK_STREAM|sockFlags, unix.IPPROTO_TCP)
	if err != nil {
		return -1, os.NewSyscallError("socket", err)
	}
	if err := prepare(fd); err != nil {
		unix.Close(fd)
		return -1, err
	}
	unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	err = unix.Connect(fd, d.sa)
	if err != nil && err != unix.EINPROGRESS && err != unix.EINTR {
		unix.Close(fd)
		return -1, os.NewSyscallError("connect", err)
	}
	return fd, nil
}

// Finish reports the outcome of a nonblocking connect (SO_ERROR). It
// returns ErrWouldBlock while the connect is still in progress.
func Finish(fd int) error {
	v, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ERROR)
	if err != nil {
		return os.NewSyscallError("getsockopt", err)
	}
	if v != 0 {
		return os.NewSyscallError("connect", unix.Errno(v))
	}
	// SO_ERROR is 0 both on success and while in progress; a connected
	// socket has a peer.
	if _, err := unix.Getpeername(fd); err != nil {
		if err == unix.ENOTCONN {
			return ErrWouldBlock
		}
		return os.NewSyscallError("getpeername", err)
	}
	return nil
}

// Shutdown ends both directions of a socket without closing its
// descriptor, so that a goroutine blocked on it returns at once.
func Shutdown(fd int) { unix.Shutdown(fd, unix.SHUT_RDWR) }

// Close closes a descriptor.
func Close(fd int) { unix.Close(fd) }

// Reset closes the socket with an RST (SO_LINGER 0), so that a retired
// connection leaves no TIME_WAIT state on the client's ports.
func Reset(fd int) {
	unix.SetsockoptLinger(fd, unix.SOL_SOCKET, unix.SO_LINGER, &unix.Linger{Onoff: 1, Linger: 0})
	unix.Close(fd)
}

// RaiseNoFile raises the soft RLIMIT_NOFILE to the hard limit and returns
// the new soft limit.
func RaiseNoFile() (uint64, error) {
	var r unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &r); err != nil {
		return 0, os.NewSyscallError("getrlimit", err)
	}
	if r.Cur < r.Max {
		want := r
		want.Cur = want.Max
		if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &want); err == nil {
			r = want
		}
	}
	return uint64(r.Cur), nil // int64 on FreeBSD and DragonFly
}

// NoFile returns the current soft RLIMIT_NOFILE.
func NoFile() uint64 {
	var r unix.Rlimit
	unix.Getrlimit(unix.RLIMIT_NOFILE, &r)
	return uint64(r.Cur)
}

// Exhausted reports whether err means the client ran out of a local
// resource (descriptors, local ports, kernel buffers), and says in words
// what to raise.
func Exhausted(err error) (string, bool) {
	var errno unix.Errno
	if !errors.As(err, &errno) {
		return "", false
	}
	switch errno {
	case unix.EMFILE:
		return fmt.Sprintf("client ran out of file descriptors (RLIMIT_NOFILE soft limit %d): raise `ulimit -n` or use fewer connections", NoFile()), true
	case unix.ENFILE:
		return "client machine ran out of file descriptors (system-wide table full): raise fs.file-max or use fewer connections", true
	case unix.EADDRNOTAVAIL, unix.EADDRINUSE:
		return "client ran out of local ports (" + errno.Error() + "): widen net.ipv4.ip_local_port_range, enable net.ipv4.tcp_tw_reuse, or use fewer connections", true
	case unix.ENOBUFS, unix.ENOMEM:
		return "client kernel ran out of socket memory (" + errno.Error() + "): use fewer connections", true
	}
	return "", false
}

// IsTimeout reports whether err is a connect timeout reported by the kernel.
func IsTimeout(err error) bool {
	return errors.Is(err, unix.ETIMEDOUT)
}
