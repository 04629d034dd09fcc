package h1

import (
	"errors"
	"fmt"

	"github.com/brk-bench/brk/internal/exchange"
)

// ErrUnsolicited is a response that answers no request: bytes before any
// request was sent, or more responses than requests. A whole response that
// announces the close is the server's farewell instead
// (exchange.ErrClosedIdle).
var ErrUnsolicited = errors.New("unsolicited_response")

// stray parses b as a response that answers no request (nothing written
// awaits an answer). A whole one that announces the close is the server's
// farewell on an idle connection, exchange.ErrClosedIdle: an idle timeout's
// 408 Request Timeout with Connection: close, which Go's client drops
// too. Any other response, or bytes that are none, is ErrUnsolicited.
func (p *Parser) stray(b []byte) (int, error) {
	n, fin, err := p.Parse(b)
	switch {
	case err != nil:
		return n, ErrUnsolicited
	case !fin:
		return n, nil
	case p.Close():
		return n, exchange.ErrClosedIdle
	}
	return n, ErrUnsolicited
}

// strayEOF ends a response that answered no request at the peer's close:
// one the close completes (a close-delimited body) is the server's
// farewell; one cut short is the parser's error.
func (p *Parser) strayEOF() error {
	if fin, err := p.EOF(); !fin {
		return err
	}
	return exchange.ErrClosedIdle
}

// Session is one connection's HTTP/1.1 protocol state over a run's
// targets: one Template per target (a run without a request mix has
// one), the requests queued for writing with the target of each, how far
// the socket took them, and the response parser.
//
// Output writes a run of queued requests of one target from its
// template's shared buffer, without a copy; requests of different
// targets queued back to back are copied into the session's own buffer
// (grown on the first such run, at most 64 KiB), so that a mix still
// goes out in few writes. Responses come back in request order (RFC 9112
// §9.3.2), so a response answers the oldest unanswered request, and is
// parsed with that request's HEAD-ness and body expectation; one that
// arrives while that request is still being written (a server refusing a
// large upload early) answers it too, and the connection then ends. It
// allocates nothing once its rings have grown to the connection's depth.
type Session struct {
	ts []*Template
	p  Parser

	// The unanswered requests in queue order, by position since Reset:
	// [ans, wr) are completely written, [wr, end) are queued; last marks
	// the request at end-1 as the closing one. tgs holds each one's
	// target (a ring by position): what writing it and parsing its
	// response need. The requests themselves are the worker's to record
	// (exchange.Session): responses answer them in order.
	tgs          []uint8
	ans, wr, end uint32
	last         bool
	partial      int  // bytes of request wr already written
	stray        bool // the response being parsed answers no request

	buf []byte // coalesced output of requests of different targets
}

// outBuf bounds the bytes one Output coalesces.
const outBuf = 64 << 10

// MaxTargets is the most templates a Session takes: a queued request's
// target is one byte.
const MaxTargets = 256

// NewSession returns a session over ts, the run's targets in order (one
// without a request mix). Queue's target indexes ts. It panics without a
// template or with more than MaxTargets: the plan bounds a mix well
// below.
func NewSession(ts ...*Template) *Session {
	if len(ts) == 0 || len(ts) > MaxTargets {
		panic(fmt.Sprintf("h1: a session needs 1..%d templates, not %d", MaxTargets, len(ts)))
	}
	s := &Session{ts: ts, tgs: make([]uint8, 8)}
	s.Reset()
	return s
}

// Reset begins a new connection: nothing queued, no response in progress.
func (s *Session) Reset() {
	s.ans, s.wr, s.end, s.last, s.partial, s.stray = 0, 0, 0, false, 0, false
	s.p.Reset(false)
}

// Queue appends one request of target i; last makes it the closing
// request, a connection's final one: the caller queues nothing after it.
// The token is the worker's: a pipeline's responses answer its requests
// in the order they were queued, so the session keeps none.
func (s *Session) Queue(_ uint32, i int, last bool) {
	if int(s.end-s.ans) == len(s.tgs) {
		s.grow()
	}
	if s.ans == s.end && !s.stray {
		s.expectFor(i) // the next response answers this request
	}
	s.tgs[s.end&uint32(len(s.tgs)-1)] = uint8(i)
	s.end++
	s.last = last
}

func (s *Session) grow() {
	n := 2 * len(s.tgs)
	tgs := make([]uint8, n)
	for k := s.ans; k != s.end; k++ {
		tgs[k&uint32(n-1)] = s.tgs[k&uint32(len(s.tgs)-1)]
	}
	s.tgs = tgs
}

// expectFor sets the parser up for a response to target i.
func (s *Session) expectFor(i int) {
	t := s.ts[i]
	s.p.SetExpectBody(t.expect, t.check)
	s.p.Reset(t.isHead)
}

// at is the template of the request at position k.
func (s *Session) at(k uint32) *Template { return s.ts[s.tgs[k&uint32(len(s.tgs)-1)]] }

// closing reports whether the request at ring position k is the closing
// one.
func (s *Session) closing(k uint32) bool { return s.last && k+1 == s.end }

// size is the byte length of the request at ring position k.
func (s *Session) size(k uint32, t *Template) int {
	if s.closing(k) {
		return t.closeSize
	}
	return t.size
}

// bytesOf returns the request at ring position k from byte off: for a
// small request its whole encoding, for a large body the head or the
// body (from the template's one copy).
func (s *Session) bytesOf(k uint32, t *Template, off int) []byte {
	closing := s.closing(k)
	if t.segmented {
		head := t.head
		if closing {
			head = t.closeHead
		}
		if off < len(head) {
			return head[off:]
		}
		return t.body[off-len(head):]
	}
	if closing {
		return t.closing[off:t.closeSize]
	}
	return t.repeated[off:t.size]
}

// run is how many queued requests from ring position wr on are small
// requests of t, none the closing one, at most as many as t's shared
// buffer holds: those Output takes from that buffer in one slice.
func (s *Session) run(t *Template) uint32 {
	most := uint32(len(t.repeated) / t.size)
	if len(s.ts) == 1 { // every request is t's
		n := s.end - s.wr
		if s.last {
			n--
		}
		return min(n, most)
	}
	n := uint32(0)
	for k := s.wr; k != s.end && n < most && !s.closing(k) && s.tgs[k&uint32(len(s.tgs)-1)] == s.tgs[s.wr&uint32(len(s.tgs)-1)]; k++ {
		n++
	}
	return n
}

// Output returns queued bytes not yet written, read-only and valid until
// the next Wrote: a run of small requests of one target from its
// template's shared buffer, when that run is all that is queued, fills
// the buffer, or is followed by the closing request; otherwise the first
// queued request from where its writing stopped, followed by as many
// whole small requests as fit in 64 KiB, copied into the session's
// buffer. A large body, or the closing request, goes out alone.
func (s *Session) Output() []byte {
	if s.wr == s.end {
		return nil
	}
	t := s.at(s.wr)
	if !t.segmented {
		if n := s.run(t); n > 0 {
			if next := s.wr + n; next == s.end || n == uint32(len(t.repeated)/t.size) || s.closing(next) {
				return t.repeated[s.partial : int(n)*t.size]
			}
		}
	}
	first := s.bytesOf(s.wr, t, s.partial)
	if s.wr+1 == s.end || t.segmented || s.closing(s.wr) {
		return first
	}
	nt := s.at(s.wr + 1)
	if nt.segmented || len(first)+s.size(s.wr+1, nt) > outBuf {
		return first
	}
	b := append(s.buf[:0], first...)
	for k := s.wr + 1; k != s.end; k++ {
		t := s.at(k)
		if t.segmented || len(b)+s.size(k, t) > outBuf {
			break
		}
		b = append(b, s.bytesOf(k, t, 0)...)
	}
	s.buf = b
	return b
}

// Wrote consumes n bytes of Output and reports how many requests they
// completed, and whether requests are still queued.
func (s *Session) Wrote(n int) (written int, more bool) {
	for n > 0 && s.wr != s.end {
		k := s.size(s.wr, s.at(s.wr)) - s.partial
		if n < k {
			s.partial += n
			break
		}
		n -= k
		s.partial = 0
		if s.closing(s.wr) {
			s.last = false
		}
		written++
		s.wr++
	}
	return written, s.wr != s.end
}

// Parse consumes response bytes up to the end of one response and appends
// its completion to done. A response when nothing written awaits an
// answer is a stray (Parser.stray): the server's farewell
// (exchange.ErrClosedIdle) or ErrUnsolicited.
func (s *Session) Parse(b []byte, done []exchange.Completion) (int, []exchange.Completion, error) {
	if !s.stray && !s.p.Started() && s.ans == s.wr && (s.partial == 0 || s.ans == s.end) {
		// Nothing written awaits an answer, and no request is being
		// written: nobody asked for these bytes.
		s.stray = true
		s.p.Reset(false)
	}
	if s.stray {
		n, err := s.p.stray(b)
		return n, done, err
	}
	n, fin, err := s.p.Parse(b)
	if err != nil || !fin {
		return n, done, err
	}
	return n, s.complete(done, s.p.Close()), nil
}

// complete answers the oldest unanswered request with the parsed response.
func (s *Session) complete(done []exchange.Completion, closing bool) []exchange.Completion {
	c := exchange.Completion{Status: s.p.Status(), BodyOK: s.p.BodyOK(), Closing: closing}
	if !c.BodyOK {
		c.Sample = s.p.Sample() // the parser's bytes, kept until a body fails again
	}
	if s.ans == s.wr {
		// An early response to a request still being written: stop
		// writing it; the connection ends after this response (the
		// server would read the rest of the body as a new request).
		c.Closing = true
		s.last, s.partial = false, 0
		s.wr, s.end = s.ans+1, s.ans+1
	}
	s.ans++
	if s.ans != s.end {
		s.expectFor(int(s.tgs[s.ans&uint32(len(s.tgs)-1)]))
	} else {
		s.p.Reset(false)
	}
	return append(done, c)
}

// EOF tells the session the peer closed: a close-delimited response ends
// here; ErrTruncated is a response cut short.
func (s *Session) EOF(done []exchange.Completion) ([]exchange.Completion, error) {
	if !s.p.Started() {
		return done, nil
	}
	if s.stray {
		return done, s.p.strayEOF()
	}
	fin, err := s.p.EOF()
	if !fin {
		return done, err
	}
	return s.complete(done, true), nil
}
