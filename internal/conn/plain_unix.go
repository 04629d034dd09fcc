//go:build linux || darwin || dragonfly || freebsd

package conn

import "golang.org/x/sys/unix"

// Plain is the Transport of a plain TCP connection. A short read means the
// socket is drained: Read returns its bytes with ErrWouldBlock, so that
// the reader does not ask again in the same readiness event. After a
// hang-up it reads to the end. It keeps no state between events but the
// hang-up, and buffers nothing.
type Plain struct {
	fd  int
	hup bool
}

// Open points p at a new connection's descriptor.
func (p *Plain) Open(fd int) { *p = Plain{fd: fd} }

// Traits implements Transport.
func (p *Plain) Traits() Traits { return Traits{} }

// Arm implements Transport: it keeps a hang-up.
func (p *Plain) Arm(hup bool) {
	if hup {
		p.hup = true
	}
}

// Read reads from the socket; ErrWouldBlock when nothing is buffered, and
// with the bytes of a short read.
func (p *Plain) Read(b []byte) (int, error) {
	for {
		n, err := rawRead(p.fd, b)
		if err == nil {
			if n > 0 && n < len(b) && !p.hup {
				// Drained. A FIN or RST that came with the data is
				// reported in this event (hup); one that comes later
				// raises a new edge.
				return n, ErrWouldBlock
			}
			return n, nil
		}
		if err == unix.EINTR {
			continue
		}
		if err == unix.EAGAIN {
			return 0, ErrWouldBlock
		}
		return 0, err
	}
}

// Write writes to the socket; ErrWouldBlock when the send buffer is full.
func (p *Plain) Write(b []byte) (int, error) {
	for {
		n, err := rawWrite(p.fd, b)
		if err == nil {
			return n, nil
		}
		if err == unix.EINTR {
			continue
		}
		if err == unix.EAGAIN {
			return 0, ErrWouldBlock
		}
		return 0, err
	}
}

// Flush implements Transport: a plain socket buffers nothing.
func (p *Plain) Flush() (bool, error) { return false, nil }
