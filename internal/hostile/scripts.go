package hostile

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"
)

// OKResponse is the minimal keep-alive response the ready-made scripts use
// when a test does not supply its own.
const OKResponse = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"

// PipelineWait is how long PipelineObserver waits after the first request of
// a batch for more requests to arrive before answering.
const PipelineWait = 20 * time.Millisecond

// Fixed answers every request with resp, keeping the connection open, until
// the client closes it or the server closes.
func Fixed(resp []byte) Script {
	return func(c *Conn, _ int) {
		for {
			if _, err := c.ReadRequest(); err != nil {
				return
			}
			if err := c.Respond(resp); err != nil {
				return
			}
		}
	}
}

// CloseAfter answers n-1 requests with resp and the n-th with last (which
// would normally carry "Connection: close"), then half-closes the connection
// (FIN) without reading further requests. Anything the client still sends is
// discarded until it closes, so the kernel never turns the close into an
// RST because of unread data.
func CloseAfter(n int, resp, last []byte) Script {
	return func(c *Conn, _ int) {
		for i := 1; i <= n; i++ {
			if _, err := c.ReadRequest(); err != nil {
				return
			}
			r := resp
			if i == n {
				r = last
			}
			if err := c.Respond(r); err != nil {
				return
			}
		}
		c.CloseWrite()
		c.Discard()
	}
}

// Never reads requests but never answers them, until the connection closes.
func Never() Script {
	return func(c *Conn, _ int) {
		for {
			if _, err := c.ReadRequest(); err != nil {
				return
			}
		}
	}
}

// NoRead accepts the connection and never reads from it, until the server
// closes. Once the kernel buffers fill, the client's writes block.
func NoRead() Script {
	return func(c *Conn, _ int) { <-c.Done() }
}

// Greeting writes b right after accept, before any request arrives, and
// then behaves like Fixed(OKResponse).
func Greeting(b []byte) Script {
	fixed := Fixed([]byte(OKResponse))
	return func(c *Conn, index int) {
		if err := c.Write(b); err != nil {
			return
		}
		fixed(c, index)
	}
}

// ResetMidBodyPartial is what ResetMidBody writes before resetting: a head
// announcing 10 body bytes followed by only 3 of them.
const ResetMidBodyPartial = "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"

// ResetMidBody reads one request, writes ResetMidBodyPartial, then resets
// the connection (RST).
func ResetMidBody() Script {
	return func(c *Conn, _ int) {
		if _, err := c.ReadRequest(); err != nil {
			return
		}
		if err := c.Write([]byte(ResetMidBodyPartial)); err != nil {
			return
		}
		c.Reset()
	}
}

// StallMidBody reads one request, writes ResetMidBodyPartial (a head with
// Content-Length: 10 and 3 body bytes), then sends nothing more until the
// server closes.
func StallMidBody() Script {
	return func(c *Conn, _ int) {
		if _, err := c.ReadRequest(); err != nil {
			return
		}
		if err := c.Write([]byte(ResetMidBodyPartial)); err != nil {
			return
		}
		<-c.Done()
	}
}

// CorruptEvery echoes request bodies: every request is answered with 200
// and the request's body. Every n-th response (counted across the whole
// server) whose body is not empty has its middle byte inverted; each such
// response is counted in Stats.Corrupted.
func CorruptEvery(n int) Script {
	return func(c *Conn, _ int) {
		for {
			req, err := c.ReadRequest()
			if err != nil {
				return
			}
			body := req.Body
			k := c.srv.echoed.Add(1)
			corrupt := n > 0 && k%int64(n) == 0 && len(body) > 0
			if corrupt {
				body[len(body)/2] ^= 0xff
			}
			resp := fmt.Appendf(nil, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n", len(body))
			if err := c.Respond(append(resp, body...)); err != nil {
				return
			}
			if corrupt {
				c.srv.corrupted.Add(1)
			}
		}
	}
}

// HugeHeaderResponse returns a valid keep-alive response with body "ok"
// whose head (status line, headers and the empty line) is exactly size
// bytes, padded with X-Fill-NNNNNN headers of at most 4096 bytes each. If
// size is smaller than the unpadded head, the head is not padded.
func HugeHeaderResponse(size int) []byte {
	const maxLine = 4096
	const minLine = len("X-Fill-000000: \r\n")
	var b strings.Builder
	b.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n")
	left := size - b.Len() - len("\r\n")
	for i := 0; left >= minLine; i++ {
		l := min(left, maxLine)
		if rest := left - l; rest > 0 && rest < minLine {
			l = left - minLine
		}
		fmt.Fprintf(&b, "X-Fill-%06d: %s\r\n", i, strings.Repeat("a", l-minLine))
		left -= l
	}
	b.WriteString("\r\nok")
	return []byte(b.String())
}

// HugeHeaders answers every request with HugeHeaderResponse(size).
func HugeHeaders(size int) Script {
	return Fixed(HugeHeaderResponse(size))
}

// ExtraResponse is the unsolicited response ExtraResponses sends after the
// real one; its body "ex" tells it apart from OKResponse.
const ExtraResponse = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nex"

// ExtraResponses answers each request with OKResponse followed by k copies
// of ExtraResponse, all in one write; all k+1 count as responses.
func ExtraResponses(k int) Script {
	resps := [][]byte{[]byte(OKResponse)}
	for range k {
		resps = append(resps, []byte(ExtraResponse))
	}
	return func(c *Conn, _ int) {
		for {
			if _, err := c.ReadRequest(); err != nil {
				return
			}
			if err := c.RespondMany(resps...); err != nil {
				return
			}
		}
	}
}

// PipelineObserver answers every request with resp, in batches: it blocks
// for a request, then waits PipelineWait for more to arrive (the only
// deliberate sleep in this package), records the batch size with
// ObservePipelined (so Stats.MaxPipelined is the deepest pipeline seen), and
// answers the whole batch in one write.
func PipelineObserver(resp []byte) Script {
	return func(c *Conn, _ int) {
		for {
			reqs, err := c.ReadAvailable(PipelineWait)
			if len(reqs) > 0 {
				c.ObservePipelined(len(reqs) + c.Pending())
				resps := make([][]byte, len(reqs))
				for i := range resps {
					resps[i] = resp
				}
				if werr := c.RespondMany(resps...); werr != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}
}

// FullBacklog returns the address of a listener whose accept queue is full
// and is never accepted from. The socket listens with backlog 1 and is
// filled with client connections that stay open until the test ends.
//
// On Linux the accept queue of a backlog-1 listener holds two established
// connections; once it is full the kernel silently drops further SYNs (no
// RST is sent, unlike a closed port), so a new connect keeps retransmitting
// its SYN (after 1 s, 3 s, 7 s, ...) and finally fails with a timeout, or
// with the caller's own deadline first. It is never refused.
func FullBacklog(tb testing.TB) (addr string) {
	tb.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		tb.Fatalf("hostile: socket: %v", err)
	}
	syscall.CloseOnExec(fd)
	tb.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		tb.Fatalf("hostile: bind: %v", err)
	}
	if err := syscall.Listen(fd, 1); err != nil {
		tb.Fatalf("hostile: listen: %v", err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		tb.Fatalf("hostile: getsockname: %v", err)
	}
	addr = fmt.Sprintf("127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port)

	// Fill the queue: connects complete in the kernel until it is full;
	// the first one that times out proves the queue is full.
	const probe = 200 * time.Millisecond
	for i := 0; ; i++ {
		if i == 16 {
			tb.Fatalf("hostile: accept queue of %s never filled", addr)
		}
		c, err := net.DialTimeout("tcp", addr, probe)
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				return addr
			}
			tb.Fatalf("hostile: filling backlog of %s: %v", addr, err)
		}
		tb.Cleanup(func() { c.Close() })
	}
}
