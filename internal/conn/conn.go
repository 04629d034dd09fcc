// Package conn opens brk's nonblocking TCP connections and moves their bytes.
//
// Addresses are resolved once before load; a worker then dials with a
// nonblocking connect, registers the socket with its poller and learns the
// outcome from the first write readiness (SO_ERROR). Once a connection is
// set up (TCP connect, then the TLS handshake for https://), a Transport
// moves its bytes: Plain or TLS, chosen once at setup, so that the
// scheduler never asks which.
package conn

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"syscall"
)

// ErrWouldBlock is returned by a Transport when the operation must wait for
// the next readiness edge.
var ErrWouldBlock = errors.New("conn: operation would block")

// Transport moves an established connection's bytes on a nonblocking
// socket. A worker calls Arm for every readiness event, then reads until
// ErrWouldBlock and writes until its output is taken or ErrWouldBlock.
type Transport interface {
	// Traits is what the transport answers the same way on every
	// connection, read once when a connection's transport is chosen.
	Traits() Traits
	// Arm prepares for a readiness event: the socket may hold new data;
	// after a hang-up (hup) it is read to the end. A transport that keeps
	// no state between events (Plain) needs it only for a hang-up: see
	// ArmsEachEvent.
	Arm(hup bool)
	// Read returns decrypted or plain bytes, ErrWouldBlock when the
	// socket is drained, and (0, nil) at the peer's orderly end. It may
	// return bytes with ErrWouldBlock: these, and the socket is drained
	// (a short read), so that the reader need not ask again.
	Read(b []byte) (int, error)
	// Write takes what the socket takes now: ErrWouldBlock when it takes
	// nothing. A buffering transport (TLS) takes all of b and keeps what
	// the socket refused for Flush.
	Write(b []byte) (int, error)
	// Flush writes what the transport buffered; pending reports whether
	// some waits for the next write readiness. A transport that buffers
	// nothing (Plain) needs no Flush: see Buffers.
	Flush() (pending bool, err error)
}

// Traits is what a transport answers the same way on every connection,
// so that the loop does not ask it per event: a plain socket keeps no
// state between readiness events and buffers nothing; TLS does both; an
// io_uring's plain transport (internal/poller) hands received bytes out
// in place.
type Traits struct {
	ArmsEachEvent bool // it needs Arm on every readiness event, not only after a hang-up
	Buffers       bool // it keeps written bytes for Flush
	InPlace       bool // it is a Chunker
}

// Chunker is a Transport that hands received bytes out in place: Chunk is
// Read without the copy, the next bytes received in the buffer they landed
// in, valid until the next Chunk or Read or the close.
type Chunker interface {
	Chunk() ([]byte, error)
}

// Raw moves an established connection's bytes without a system call per
// read or write: an io_uring's receive completions and batched sends
// (internal/poller). Read answers unix.EAGAIN when nothing was received,
// (0, nil) at the peer's end; Write answers unix.EAGAIN when it takes
// nothing. Errors are the system's (unix.Errno), as a system call's.
// Chunk is Read without the copy: the next bytes received, in the buffer
// they landed in, valid until the next Chunk or Read or the close.
type Raw interface {
	Read(b []byte) (int, error)
	Chunk() ([]byte, error)
	Write(b []byte) (int, error)
}

// Resolve looks up host:port once, before any traffic, and returns the
// socket addresses to dial (IPv4 first, then IPv6).
func Resolve(hostport string) ([]Addr, error) {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return nil, err
	}
	p, err := strconv.Atoi(port)
	if err != nil || p <= 0 || p > 65535 {
		if p, err = net.LookupPort("tcp", port); err != nil {
			return nil, fmt.Errorf("bad port %q", port)
		}
	}
	ips, err := net.LookupIP(host)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %v", host, unwrapDNS(err))
	}
	var v4, v6 []Addr
	for _, ip := range ips {
		if ip4 := ip.To4(); ip4 != nil {
			var a Addr
			a.family = syscall.AF_INET
			copy(a.ip[:4], ip4)
			a.port = p
			v4 = append(v4, a)
		} else {
			var a Addr
			a.family = syscall.AF_INET6
			copy(a.ip[:], ip.To16())
			a.port = p
			v6 = append(v6, a)
		}
	}
	out := append(v4, v6...)
	if len(out) == 0 {
		return nil, fmt.Errorf("resolve %s: no addresses", host)
	}
	return out, nil
}

func unwrapDNS(err error) error {
	var de *net.DNSError
	if errors.As(err, &de) {
		return errors.New(de.Err)
	}
	return err
}

// Addr is a resolved TCP address.
type Addr struct {
	family int
	ip     [16]byte
	port   int
}

// String formats the address as host:port.
func (a Addr) String() string {
	return net.JoinHostPort(a.ip4or6().String(), strconv.Itoa(a.port))
}

func (a Addr) ip4or6() net.IP {
	if a.family == syscall.AF_INET {
		return net.IP(a.ip[:4])
	}
	return net.IP(a.ip[:])
}

// Loopback reports whether the address is on this box's loopback
// (127.0.0.0/8, ::1), and its port.
func (a Addr) Loopback() (port int, ok bool) {
	return a.port, a.family != 0 && a.ip4or6().IsLoopback()
}
