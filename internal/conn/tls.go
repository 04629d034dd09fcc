//go:build linux || darwin || dragonfly || freebsd

package conn

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/brk-bench/brk/internal/exchange"
)

// TLS design. crypto/tls drives a net.Conn, and two of its behaviours
// shape how brk uses it on nonblocking sockets (crypto/tls/conn.go):
//
//   - A handshake error is sticky: a handshake cannot be resumed after a
//     would-block error. So the handshake runs on a setup path: a short-lived
//     goroutine per connection setup that waits for readiness with poll(2)
//     on the socket until the setup deadline. The request path never runs
//     there.
//   - A read error that is a temporary net.Error is not sticky. So after the
//     handshake the same tls.Conn runs on the worker's thread over a
//     nonblocking socket: Read returns a temporary "would block" error when
//     the socket is empty, and the worker retries at the next readiness
//     edge. Writes never fail that way (a write error is sticky): ciphertext
//     the socket does not take is kept in the connection's own buffer and
//     flushed at the next write readiness.
//
// A short socket read means the socket is drained: the worker's next edge
// reports new data. The transport then answers further reads in the same
// event with "would block" without a system call, so there is no empty
// read per response.

// errWouldBlockTemp is the temporary net.Error the TLS transport reports
// when the socket has nothing to read; crypto/tls does not keep it.
var errWouldBlockTemp = &wouldBlock{}

type wouldBlock struct{}

func (*wouldBlock) Error() string   { return "conn: would block" }
func (*wouldBlock) Timeout() bool   { return false }
func (*wouldBlock) Temporary() bool { return true }

// sock is the net.Conn under a tls.Conn.
type sock struct {
	socket             // raw set once established (UseRaw)
	blocking bool      // handshake: wait with poll(2) until deadline
	deadline time.Time // handshake deadline
	drained  bool      // the last read was short: the socket is empty
	hup      bool      // the peer closed: read to EOF
	eof      bool      // a read returned EOF
	out      []byte    // ciphertext the socket has not taken yet
}

var errHandshakeTimeout = os.ErrDeadlineExceeded

func (s *sock) wait(events int16) error {
	for {
		ms := -1
		if !s.deadline.IsZero() {
			d := time.Until(s.deadline)
			if d <= 0 {
				return errHandshakeTimeout
			}
			ms = int(d/time.Millisecond) + 1
		}
		fds := []unix.PollFd{{Fd: int32(s.fd), Events: events}}
		_, err := unix.Poll(fds, ms)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return os.NewSyscallError("poll", err)
		}
		if fds[0].Revents != 0 {
			return nil
		}
	}
}

func (s *sock) Read(b []byte) (int, error) {
	if !s.blocking && s.drained && !s.hup {
		return 0, errWouldBlockTemp
	}
	for {
		n, err := s.read(b)
		switch {
		case err == nil && n == 0:
			s.eof = true
			return 0, io.EOF
		case err == nil:
			if n < len(b) && !s.hup {
				s.drained = true
			}
			return n, nil
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			if !s.blocking {
				s.drained = true
				return 0, errWouldBlockTemp
			}
			if err := s.wait(unix.POLLIN); err != nil {
				return 0, err
			}
		default:
			return 0, os.NewSyscallError("read", err)
		}
	}
}

func (s *sock) Write(b []byte) (int, error) {
	if s.blocking {
		done := 0
		for done < len(b) {
			n, err := s.write(b[done:])
			switch {
			case err == nil:
				done += n
			case err == unix.EINTR:
			case err == unix.EAGAIN:
				if err := s.wait(unix.POLLOUT); err != nil {
					return done, err
				}
			default:
				return done, os.NewSyscallError("write", err)
			}
		}
		return done, nil
	}
	if len(s.out) > 0 {
		s.out = append(s.out, b...)
		return len(b), nil
	}
	n, err := s.write(b)
	if err == unix.EAGAIN || err == unix.EINTR {
		n, err = 0, nil
	}
	if err != nil {
		return n, os.NewSyscallError("write", err)
	}
	if n < len(b) {
		s.out = append(s.out, b[n:]...)
	}
	return len(b), nil
}

// flush writes buffered ciphertext; pending reports what is left.
func (s *sock) flush() (pending bool, err error) {
	for len(s.out) > 0 {
		n, err := s.write(s.out)
		if err == unix.EINTR {
			continue
		}
		if err == unix.EAGAIN {
			return true, nil
		}
		if err != nil {
			return true, os.NewSyscallError("write", err)
		}
		s.out = s.out[:copy(s.out, s.out[n:])]
	}
	return false, nil
}

func (s *sock) Close() error                       { return nil } // the worker owns the descriptor
func (s *sock) LocalAddr() net.Addr                { return nil }
func (s *sock) RemoteAddr() net.Addr               { return nil }
func (s *sock) SetDeadline(t time.Time) error      { s.deadline = t; return nil }
func (s *sock) SetReadDeadline(t time.Time) error  { s.deadline = t; return nil }
func (s *sock) SetWriteDeadline(t time.Time) error { s.deadline = t; return nil }

// TLS is the Transport of an established TLS connection, used on the
// worker's thread after Handshake.
type TLS struct {
	s    sock
	c    *tls.Conn
	Info TLSInfo
}

// TLSInfo is what a handshake negotiated.
type TLSInfo = exchange.TLSInfo

// Handshake runs a TLS client handshake on the connected nonblocking
// socket fd, blocking the calling goroutine (poll(2)) until it completes or
// the deadline passes. It is the setup path: call it from a goroutine of
// its own, never from a worker's loop. The descriptor stays the caller's.
func Handshake(fd int, cfg *tls.Config, deadline time.Time) (*TLS, error) {
	t := &TLS{s: sock{socket: socket{fd: fd}, blocking: true, deadline: deadline}}
	t.c = tls.Client(&t.s, cfg)
	// The socket wrapper enforces the deadline in poll(2); HandshakeContext
	// would add a watcher goroutine per handshake for nothing.
	err := t.c.Handshake()
	if err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return nil, ErrHandshakeTimeout
		}
		return nil, err
	}
	st := t.c.ConnectionState()
	t.Info = TLSInfo{Version: st.Version, CipherSuite: st.CipherSuite, Group: uint16(st.CurveID), Resumed: st.DidResume, ALPN: st.NegotiatedProtocol}
	t.s.blocking = false
	t.s.deadline = time.Time{}
	return t, nil
}

// IsRemoteAlert reports whether err is a TLS alert the peer sent (a
// refusal such as "certificate required").
func IsRemoteAlert(err error) bool {
	var oe *net.OpError
	return errors.As(err, &oe) && oe.Op == "remote error"
}

// IsPlainAnswer reports whether a handshake failed because the server
// answered with something that is not TLS (plain HTTP).
func IsPlainAnswer(err error) bool {
	var rh tls.RecordHeaderError
	return errors.As(err, &rh)
}

// ErrHandshakeTimeout is a handshake that did not finish by its deadline.
var ErrHandshakeTimeout = errors.New("TLS handshake timed out")

// Traits implements Transport: TLS keeps state between readiness events
// and buffers what the socket did not take.
func (t *TLS) Traits() Traits { return Traits{ArmsEachEvent: true, Buffers: true} }

// UseRaw moves the established connection's records through raw (an
// io_uring's) instead of system calls on its descriptor.
func (t *TLS) UseRaw(raw Raw) { t.s.raw = raw }

// Arm prepares the transport for a readiness event: the socket may hold new
// data, and after a hang-up it is read to the end.
func (t *TLS) Arm(hup bool) {
	t.s.drained = false
	if hup {
		t.s.hup = true
	}
}

// Read reads decrypted bytes; ErrWouldBlock when the socket is drained.
func (t *TLS) Read(b []byte) (int, error) {
	n, err := t.c.Read(b)
	if n > 0 {
		return n, nil
	}
	if err == nil {
		return 0, ErrWouldBlock
	}
	var ne net.Error
	//lint:ignore SA1019 crypto/tls keeps a read error sticky unless it is a temporary net.Error: that is how our would-block reaches us
	if errors.As(err, &ne) && ne.Temporary() {
		return 0, ErrWouldBlock
	}
	if err == io.EOF {
		return 0, nil
	}
	return 0, err
}

// maxTLSWrite bounds the plaintext encrypted per Write, and so the
// ciphertext a connection buffers when its socket is full.
const maxTLSWrite = 64 << 10

// Write encrypts up to 64 KiB of b; the socket takes what it can and the
// rest waits in the transport for Flush. While ciphertext waits, Write
// takes nothing (ErrWouldBlock), so that a large body is never copied
// whole into a connection's buffer. It fails only when the connection is
// broken.
func (t *TLS) Write(b []byte) (int, error) {
	if len(t.s.out) > 0 {
		pending, err := t.s.flush()
		if err != nil {
			return 0, err
		}
		if pending {
			return 0, ErrWouldBlock
		}
	}
	if len(b) > maxTLSWrite {
		b = b[:maxTLSWrite]
	}
	return t.c.Write(b)
}

// Flush writes ciphertext the socket did not take before; pending reports
// whether some is still waiting for write readiness.
func (t *TLS) Flush() (pending bool, err error) { return t.s.flush() }
