package h1

import (
	"errors"
	"math"

	"github.com/brk-bench/brk/proto"
)

// Template is a target's requests, encoded once and shared read-only by
// every Session of a run. A small request is repeated to fill a 64 KiB
// buffer, so that any run of queued requests is one contiguous slice; a
// request with a large body is its head followed by the body, which is
// the caller's one copy, never copied per connection. Each has a variant
// that asks the server to close (a connection's last request).
type Template struct {
	repeated  []byte // small requests: whole requests back to back
	closing   []byte // small requests: the closing request
	size      int    // bytes of one request
	closeSize int    // bytes of the closing request
	segmented bool   // large body: head, then body
	head      []byte // segmented: the heads
	closeHead []byte
	body      []byte
	isHead    bool
	expect    []byte
	check     bool
}

// inlineBody is the largest body repeated in the template's buffer; a
// larger one is written from the caller's copy after each head.
const inlineBody = 8 << 10

// NewTemplate prepares req for sessions. expect/check set the exact body
// every response must carry. req.Body and expect are kept, not copied.
func NewTemplate(req proto.Request, expect []byte, check bool) (*Template, error) {
	t := &Template{isHead: req.IsHead(), expect: expect, check: check}
	if len(req.Body) > inlineBody {
		return t, t.segment(req)
	}
	one, err := Encode(&req, false)
	if err != nil {
		return nil, err
	}
	closing, err := Encode(&req, true)
	if err != nil {
		return nil, err
	}
	copies := (64 << 10) / len(one)
	if copies < 2 {
		copies = 2
	}
	rep := make([]byte, 0, copies*len(one))
	for i := 0; i < copies; i++ {
		rep = append(rep, one...)
	}
	t.repeated, t.size, t.closing, t.closeSize = rep, len(one), closing, len(closing)
	return t, nil
}

// segment prepares a request with a large body: two heads and the body.
func (t *Template) segment(req proto.Request) error {
	head, err := EncodeHead(&req, false)
	if err != nil {
		return err
	}
	closeHead, err := EncodeHead(&req, true)
	if err != nil {
		return err
	}
	t.segmented, t.head, t.closeHead, t.body = true, head, closeHead, req.Body
	t.size, t.closeSize = len(head)+len(req.Body), len(closeHead)+len(req.Body)
	return nil
}

// Request returns the encoded request (tests, reports).
func (t *Template) Request() []byte {
	if t.segmented {
		return append(append([]byte(nil), t.head...), t.body...)
	}
	return t.repeated[:t.size]
}

// ErrUnsolicited is a response that answers no request: bytes before any
// request was sent, or more responses than requests. A whole response that
// announces the close is the server's farewell instead
// (proto.ErrClosedIdle).
var ErrUnsolicited = errors.New("unsolicited_response")

// stray parses b as a response that answers no request (nothing written
// awaits an answer). A whole one that announces the close is the server's
// farewell on an idle connection, proto.ErrClosedIdle: an idle timeout's
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
		return n, proto.ErrClosedIdle
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
	return proto.ErrClosedIdle
}

// Session is one connection's HTTP/1.1 protocol state: the requests queued
// for writing, how far the socket took them, and the response parser.
// Responses come back in request order (RFC 9112 §9.3.2), so a response
// answers the oldest unanswered request; one that arrives while that
// request is still being written (a server refusing a large upload early)
// answers it too, and the connection then ends. It allocates nothing once
// its token ring has grown to the connection's depth.
type Session struct {
	pipeline
	t       *Template
	queued  int  // whole requests queued and not yet fully written
	last    bool // a closing request is queued after them
	partial int  // bytes of the first queued request already written
	p       Parser
	stray   bool // the response being parsed answers no request

	// Tokens of the unanswered requests in queue order: [ans, wr) are
	// completely written, [wr, end) are queued.
	toks         []uint32
	ans, wr, end uint32

	sample [SampleMax]byte // the last failed body's first bytes
}

// NewSession returns a session for t.
func NewSession(t *Template) *Session {
	s := &Session{t: t, toks: make([]uint32, 8)}
	s.p.SetExpectBody(t.expect, t.check)
	s.p.Reset(t.isHead)
	return s
}

// Reset begins a new connection: nothing queued, no response in progress.
func (s *Session) Reset() {
	s.queued, s.last, s.partial = 0, false, 0
	s.ans, s.wr, s.end = 0, 0, 0
	s.stray = false
	s.p.Reset(s.t.isHead)
}

// Queue appends one request; last makes it the closing request, which is
// a connection's final one: the caller queues nothing after it.
func (s *Session) Queue(token uint32, last bool) {
	if int(s.end-s.ans) == len(s.toks) {
		s.grow()
	}
	s.toks[s.end&uint32(len(s.toks)-1)] = token
	s.end++
	if last {
		s.last = true
	} else {
		s.queued++
	}
}

func (s *Session) grow() {
	toks := make([]uint32, 2*len(s.toks))
	for k := s.ans; k != s.end; k++ {
		toks[k&uint32(len(toks)-1)] = s.toks[k&uint32(len(s.toks)-1)]
	}
	s.toks = toks
}

func (s *Session) token(k uint32) uint32 { return s.toks[k&uint32(len(s.toks)-1)] }

// Output returns queued bytes not yet written: as many whole requests as
// fit in the shared buffer, or the closing request once the others are out.
// The slice is read-only and valid until the next Wrote.
func (s *Session) Output() []byte {
	if s.t.segmented {
		return s.segment()
	}
	if s.queued > 0 {
		left := s.queued*s.t.size - s.partial
		b := s.t.repeated[s.partial:]
		if len(b) > left {
			b = b[:left]
		}
		return b
	}
	if s.last {
		return s.t.closing[s.partial:]
	}
	return nil
}

// segment returns what is left of the first queued request with a large
// body: its head, or the body from the template's one copy.
func (s *Session) segment() []byte {
	var head []byte
	switch {
	case s.queued > 0:
		head = s.t.head
	case s.last:
		head = s.t.closeHead
	default:
		return nil
	}
	if s.partial < len(head) {
		return head[s.partial:]
	}
	return s.t.body[s.partial-len(head):]
}

// Wrote consumes n bytes of Output and reports the last request it
// completed.
func (s *Session) Wrote(n int) (upTo uint32, ok bool) {
	for n > 0 {
		size := s.t.size
		if s.queued == 0 {
			if !s.last {
				break
			}
			size = s.t.closeSize
		}
		k := size - s.partial
		if n < k {
			s.partial += n
			break
		}
		n -= k
		s.partial = 0
		if s.queued > 0 {
			s.queued--
		} else {
			s.last = false
		}
		if s.wr != s.end {
			upTo, ok = s.token(s.wr), true
			s.wr++
		}
	}
	return upTo, ok
}

// Parse consumes response bytes up to the end of one response and appends
// its completion to done. A response when nothing written awaits an
// answer is a stray (Parser.stray): the server's farewell
// (proto.ErrClosedIdle) or ErrUnsolicited.
func (s *Session) Parse(b []byte, done []proto.Completion) (int, []proto.Completion, error) {
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
func (s *Session) complete(done []proto.Completion, closing bool) []proto.Completion {
	c := proto.Completion{Token: s.token(s.ans), Status: s.p.Status(), BodyOK: s.p.BodyOK(), Closing: closing}
	if !c.BodyOK {
		c.Sample = s.sample[:copy(s.sample[:], s.p.Sample())]
	}
	if s.ans == s.wr {
		// An early response to a request still being written: stop
		// writing it; the connection ends after this response (the
		// server would read the rest of the body as a new request).
		c.Closing = true
		s.queued, s.last, s.partial = 0, false, 0
		s.wr, s.end = s.ans+1, s.ans+1
	}
	s.ans++
	s.p.Reset(s.t.isHead)
	return append(done, c)
}

// EOF tells the session the peer closed: a close-delimited response ends
// here; ErrTruncated is a response cut short.
func (s *Session) EOF(done []proto.Completion) ([]proto.Completion, error) {
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

// pipeline answers the proto.Session questions whose answers are the same
// for every HTTP/1.1 session (Session, MixSession): a pipeline that only a
// close ends, with no protocol counts. Both embed it.
type pipeline struct{}

// Cancel cannot take one request out of a pipeline: the connection must
// be retired.
func (pipeline) Cancel(uint32) bool { return false }

// Capacity is unlimited: HTTP/1.1 pipelines whatever is admitted.
func (pipeline) Capacity() int { return math.MaxInt32 }

// Unprocessed is never certain in HTTP/1.1: a server that closed after a
// response may have processed the requests written after it (RFC 9112
// §9.3.2), so only idempotent ones are replayed.
func (pipeline) Unprocessed(uint32) bool { return false }

// Ready is true: an HTTP/1.1 connection carries requests once set up.
func (pipeline) Ready() bool { return true }

// Drained is false: an HTTP/1.1 server ends a connection by closing it.
func (pipeline) Drained() bool { return false }

// Farewell is nil: HTTP/1.1 has nothing to say before a close.
func (pipeline) Farewell() []byte { return nil }

// Independent is false: an abrupt end is one incident for a pipeline.
func (pipeline) Independent() bool { return false }

// Counters is nil: HTTP/1.1 keeps no protocol counts.
func (pipeline) Counters() *proto.Counters { return nil }
