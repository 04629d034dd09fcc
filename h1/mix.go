package h1

import (
	"errors"

	"github.com/brk-bench/brk/proto"
)

// MixSession is one connection's HTTP/1.1 protocol state for a request
// mix: each queued request names its target (QueueTarget), whose Template
// encoded it once. Requests of different targets are written back to
// back: Output copies a run of whole queued requests into the session's
// own buffer (at most 64 KiB, allocated once), or returns a lone request's
// bytes from its template without a copy. Each response is parsed with
// its request's HEAD-ness and body expectation. Responses come back in
// request order, as for Session, and it allocates nothing once its rings
// have grown to the connection's depth.
type MixSession struct {
	pipeline
	ts []*Template
	p  Parser

	// The unanswered requests in queue order, by ring position: [ans, wr)
	// are completely written, [wr, end) are queued; last marks the
	// request at end-1 as the closing one.
	toks         []uint32
	tgs          []uint8
	ans, wr, end uint32
	last         bool
	partial      int  // bytes of request wr already written
	stray        bool // the response being parsed answers no request

	buf []byte // coalesced output

	sample [SampleMax]byte
}

// outBuf bounds the bytes one Output coalesces.
const outBuf = 64 << 10

// ErrMixTargets is a mix of no templates or more than 256.
var ErrMixTargets = errors.New("h1: a mix needs 1..256 templates")

// NewMixSession returns a session over ts, the mix's targets in order.
func NewMixSession(ts []*Template) (*MixSession, error) {
	if len(ts) == 0 || len(ts) > 256 {
		return nil, ErrMixTargets
	}
	s := &MixSession{ts: ts, toks: make([]uint32, 8), tgs: make([]uint8, 8), buf: make([]byte, 0, outBuf)}
	s.Reset()
	return s, nil
}

// Reset begins a new connection: nothing queued, no response in progress.
func (s *MixSession) Reset() {
	s.ans, s.wr, s.end, s.last, s.partial, s.stray = 0, 0, 0, false, 0, false
	s.p.Reset(false)
}

// Queue appends one request of the mix's first target.
func (s *MixSession) Queue(token uint32, last bool) { s.QueueTarget(token, 0, last) }

// QueueTarget appends one request of target i; last makes it the closing
// request, a connection's final one: the caller queues nothing after it.
func (s *MixSession) QueueTarget(token uint32, i int, last bool) {
	if int(s.end-s.ans) == len(s.toks) {
		s.grow()
	}
	if s.ans == s.end && !s.stray {
		s.expectFor(i) // the next response answers this request
	}
	k := s.end & uint32(len(s.toks)-1)
	s.toks[k], s.tgs[k] = token, uint8(i)
	s.end++
	s.last = last
}

func (s *MixSession) grow() {
	n := 2 * len(s.toks)
	toks, tgs := make([]uint32, n), make([]uint8, n)
	for k := s.ans; k != s.end; k++ {
		toks[k&uint32(n-1)] = s.toks[k&uint32(len(s.toks)-1)]
		tgs[k&uint32(n-1)] = s.tgs[k&uint32(len(s.tgs)-1)]
	}
	s.toks, s.tgs = toks, tgs
}

// expectFor sets the parser up for a response to target i.
func (s *MixSession) expectFor(i int) {
	t := s.ts[i]
	s.p.SetExpectBody(t.expect, t.check)
	s.p.Reset(t.isHead)
}

func (s *MixSession) at(k uint32) (tok uint32, t *Template) {
	k &= uint32(len(s.toks) - 1)
	return s.toks[k], s.ts[s.tgs[k]]
}

// size is the byte length of the request at ring position k.
func (s *MixSession) size(k uint32, t *Template) int {
	if s.last && k+1 == s.end {
		return t.closeSize
	}
	return t.size
}

// bytesOf returns the request at ring position k from byte off: for a
// small request its whole encoding, for a large body the head or the
// body (from the template's one copy).
func (s *MixSession) bytesOf(k uint32, t *Template, off int) []byte {
	closing := s.last && k+1 == s.end
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

// Output returns queued bytes not yet written: the first queued request
// from where its writing stopped, followed by as many whole small
// requests as fit in 64 KiB. The slice is read-only and valid until the
// next Wrote.
func (s *MixSession) Output() []byte {
	if s.wr == s.end {
		return nil
	}
	_, t := s.at(s.wr)
	first := s.bytesOf(s.wr, t, s.partial)
	if s.wr+1 == s.end || t.segmented {
		return first
	}
	_, nt := s.at(s.wr + 1)
	if nt.segmented || len(first)+s.size(s.wr+1, nt) > outBuf {
		return first
	}
	b := append(s.buf[:0], first...)
	for k := s.wr + 1; k != s.end; k++ {
		_, t := s.at(k)
		if t.segmented || len(b)+s.size(k, t) > outBuf {
			break
		}
		b = append(b, s.bytesOf(k, t, 0)...)
	}
	s.buf = b
	return b
}

// Wrote consumes n bytes of Output and reports the last request it
// completed.
func (s *MixSession) Wrote(n int) (upTo uint32, ok bool) {
	for n > 0 && s.wr != s.end {
		tok, t := s.at(s.wr)
		k := s.size(s.wr, t) - s.partial
		if n < k {
			s.partial += n
			break
		}
		n -= k
		s.partial = 0
		if s.last && s.wr+1 == s.end {
			s.last = false
		}
		upTo, ok = tok, true
		s.wr++
	}
	return upTo, ok
}

// Parse consumes response bytes up to the end of one response and appends
// its completion to done. A response when nothing written awaits an
// answer is a stray (Parser.stray): the server's farewell
// (proto.ErrClosedIdle) or ErrUnsolicited.
func (s *MixSession) Parse(b []byte, done []proto.Completion) (int, []proto.Completion, error) {
	if !s.stray && !s.p.Started() && s.ans == s.wr && (s.partial == 0 || s.ans == s.end) {
		s.stray = true // nobody asked for these bytes
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
func (s *MixSession) complete(done []proto.Completion, closing bool) []proto.Completion {
	tok, _ := s.at(s.ans)
	c := proto.Completion{Token: tok, Status: s.p.Status(), BodyOK: s.p.BodyOK(), Closing: closing}
	if !c.BodyOK {
		c.Sample = s.sample[:copy(s.sample[:], s.p.Sample())]
	}
	if s.ans == s.wr {
		// An early response to a request still being written: stop
		// writing it; the connection ends after this response.
		c.Closing = true
		s.last, s.partial = false, 0
		s.wr, s.end = s.ans+1, s.ans+1
	}
	s.ans++
	if s.ans != s.end {
		k := s.ans & uint32(len(s.tgs)-1)
		s.expectFor(int(s.tgs[k]))
	} else {
		s.p.Reset(false)
	}
	return append(done, c)
}

// EOF tells the session the peer closed: a close-delimited response ends
// here; ErrTruncated is a response cut short.
func (s *MixSession) EOF(done []proto.Completion) ([]proto.Completion, error) {
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
