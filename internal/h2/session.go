package h2

import (
	"errors"
	"fmt"
	"math"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/brk-bench/brk/internal/exchange"
)

// Session is one connection's HTTP/2 client state (exchange.Session): the
// streams it opened, flow control in both directions, the response
// parser, and the bytes it has to write. Requests open streams in the
// order they were queued, within the peer's stream limit. A request is
// written (outstanding) once its HEADERS are: its body's DATA follows
// within the peer's windows, and the bodies of several streams share the
// connection window, so that a stream whose window is shut holds no other
// stream back. DATA and HEADERS payloads are
// parsed in place from the read bytes (header fragments go to one HPACK
// decoder per connection); the rare frames are buffered whole and read
// with x/net/http2's Framer. It allocates nothing per request once its
// buffers have grown.
//
// It holds one Template per target of the run (one without a request
// mix; each encoded once: its header blocks and body); each queued request
// names its target, and each stream keeps its template, so that its
// response is checked against that target's expectation. The connection
// preface is the first template's (every template's preface is the same
// bytes).
//
// Its state is grouped by job in embedded structs (values, not pointers:
// a field of one costs what a field of Session does): the output
// (writer.go), the queue and the stream table (streams.go), the windows
// (flow.go) and the response parser (parser.go).
type Session struct {
	t  *Template   // ts[0]: the connection preface's
	ts []*Template // the run's targets, by Queue's index

	writer
	queue
	streamTable

	// The connection.
	peerMax int // peer's SETTINGS_MAX_CONCURRENT_STREAMS (MaxInt32 unlimited)
	flow
	ready    bool   // the peer's SETTINGS arrived
	goaway   bool   // the peer sent GOAWAY (or refused a stream)
	goLast   uint32 // the lowest last stream id of the peer's GOAWAYs; noGoAway before one
	ending   bool   // this side ends the connection (last answered, ids out)
	unproc   []uint32
	farewell []byte
	live     exchange.State // published by publish (State)

	parser
}

// MaxTargets is the most templates a Session takes: a queued request's
// target is one byte.
const MaxTargets = 256

// NewSession returns a session over ts, the run's targets in order (one
// without a request mix). Queue's target indexes ts. It panics without a
// template or with more than MaxTargets: the plan bounds a mix well
// below.
func NewSession(ts ...*Template) *Session {
	if len(ts) == 0 || len(ts) > MaxTargets {
		panic(fmt.Sprintf("h2: a session needs 1..%d templates, not %d", MaxTargets, len(ts)))
	}
	s := &Session{t: ts[0], ts: ts}
	s.pend, s.pendT = make([]uint32, 8), make([]uint8, 8)
	s.tab, s.tabMask, s.tabShift = make([]stream, 16), 15, 28
	s.wfr = http2.NewFramer(&s.w, nil)
	s.rfr = http2.NewFramer(nil, &s.rd)
	s.rfr.SetMaxReadFrameSize(maxFrame)
	s.dec = hpack.NewDecoder(4096, s.onField)
	s.dec.SetMaxStringLength(maxHeaderBlock)
	s.ctl = make([]byte, 0, 9+maxFrame)
	s.live.LowestMaxStreams = -1
	s.Reset()
	return s
}

// Reset begins a new connection: its preface is the first output.
func (s *Session) Reset() {
	s.w.b = append(s.w.b[:0], s.t.preface...)
	s.off, s.marks, s.mh, s.sentHB = 0, s.marks[:0], 0, false
	s.ph, s.pt, s.last = 0, 0, false
	s.nextID, s.highest, s.open = 1, 0, 0
	if s.t.FirstStreamID != 0 {
		s.nextID = s.t.FirstStreamID | 1
	}
	clear(s.tab)
	s.peerMax, s.peerWin, s.peerFrm = math.MaxInt32, 65535, 16384
	s.sendWin = 65535
	s.ups = s.ups[:0]
	s.recvWin, s.recvAcc = connWindow, 0
	s.ready, s.goaway, s.goLast, s.ending = false, false, noGoAway, false
	s.unproc = s.unproc[:0]
	s.farewell = s.farewell[:0]
	s.live.MaxStreams = -1
	s.rs, s.fhn, s.contID, s.cur = rsHeader, 0, 0, nil
	s.dec = hpack.NewDecoder(4096, s.onField)
	s.dec.SetMaxStringLength(maxHeaderBlock)
	s.publish()
}

// Queue appends one request of target i (an index of the session's
// templates); last makes it the connection's last: once it is answered
// the session sends GOAWAY and the connection ends.
func (s *Session) Queue(token uint32, i int, last bool) {
	if int(s.pt-s.ph) == len(s.pend) {
		p, pt := make([]uint32, 2*len(s.pend)), make([]uint8, 2*len(s.pend))
		for k := s.ph; k != s.pt; k++ {
			p[k&uint32(len(p)-1)] = s.pend[k&uint32(len(s.pend)-1)]
			pt[k&uint32(len(p)-1)] = s.pendT[k&uint32(len(s.pend)-1)]
		}
		s.pend, s.pendT = p, pt
	}
	s.pend[s.pt&uint32(len(s.pend)-1)] = token
	s.pendT[s.pt&uint32(len(s.pend)-1)] = uint8(i)
	s.pt++
	if last {
		s.last, s.lastTok = true, token
	}
	s.publish()
}

// Output returns the bytes to write: control frames, then requests
// opened as streams as far as the peer's stream limit and windows allow.
func (s *Session) Output() []byte {
	s.fill()
	s.publish()
	if s.off == len(s.w.b) {
		return nil
	}
	return s.w.b[s.off:]
}

// Wrote consumes n bytes of Output. There may be more while bytes of
// the output are left, requests wait to be opened, or bodies to be sent.
func (s *Session) Wrote(n int) (written int, more bool) {
	s.off += n
	for s.mh < len(s.marks) && s.marks[s.mh] <= s.off {
		written++
		s.mh++
	}
	return written, s.off < len(s.w.b) || s.ph != s.pt || len(s.ups) > 0
}

// EOF: the peer closed. Streams still open are the worker's to count.
func (s *Session) EOF(done []exchange.Completion) ([]exchange.Completion, error) {
	return done, nil
}

// Cancel resets the stream of a request that missed its deadline
// (RST_STREAM CANCEL), or drops it before it was opened. The connection
// and its other streams carry on.
func (s *Session) Cancel(token uint32) bool {
	keep := s.cancel(token)
	s.publish()
	return keep
}

func (s *Session) cancel(token uint32) bool {
	if s.last && token == s.lastTok && !s.ending {
		// The connection's last request will never be answered: the
		// connection ends once its other streams are.
		s.ending = true
		defer s.wfr.WriteGoAway(s.highest, http2.ErrCodeNo, nil)
	}
	for k := s.ph; k != s.pt; k++ {
		if s.pend[k&uint32(len(s.pend)-1)] == token {
			for ; k+1 != s.pt; k++ {
				s.pend[k&uint32(len(s.pend)-1)] = s.pend[(k+1)&uint32(len(s.pend)-1)]
				s.pendT[k&uint32(len(s.pend)-1)] = s.pendT[(k+1)&uint32(len(s.pend)-1)]
			}
			s.pt--
			return true
		}
	}
	for i := range s.tab {
		if st := &s.tab[i]; st.id != 0 && st.tok == token {
			id := st.id
			s.remove(id)
			s.wfr.WriteRSTStream(id, http2.ErrCodeCancel)
			s.live.Resets++
			return true
		}
	}
	return true
}

// State is the session's live state (exchange.State), which publish
// keeps current.
func (s *Session) State() *exchange.State { return &s.live }

// publish brings the live state up to date: the last step of each call
// that changes it (Reset, Queue, Output, Parse, Cancel).
func (s *Session) publish() {
	s.live.Ready = s.ready
	s.live.Capacity = s.capacity()
	// Drained: the peer sent GOAWAY (or refused a stream) or this side
	// ended the connection, and no stream the peer may still answer is
	// open.
	s.live.Drained = (s.goaway || s.ending) && s.open == 0
}

// capacity is the peer's stream limit (none once the connection goes
// away), bounded by the stream ids left. Before the peer's SETTINGS it is
// one: the connection's logical first request is admitted at the connect,
// as over HTTP/1.1, so that its deadline covers the setup and a failed
// setup counts it (connect, connect_timeout); no stream is opened for it
// before the SETTINGS arrive.
func (s *Session) capacity() int {
	if !s.ready {
		return 1
	}
	if s.goaway || s.ending {
		return 0
	}
	left := int((maxStreamID-int64(s.nextID))/2 + 1)
	if s.nextID > maxStreamID {
		left = 0
	}
	return min(s.peerMax, s.open+int(s.pt-s.ph)+left)
}

// Unprocessed reports a stream above the peer's GOAWAY last stream id, or
// one it refused (REFUSED_STREAM): the server did not process it.
func (s *Session) Unprocessed(token uint32) bool {
	for _, t := range s.unproc {
		if t == token {
			return true
		}
	}
	return false
}

// Farewell is the GOAWAY that ends a connection after a protocol error.
func (s *Session) Farewell() []byte { return s.farewell }

// fail records err as the connection's end: its GOAWAY is the farewell.
func (s *Session) fail(err error) error {
	code := http2.ErrCodeProtocol
	var e *Error
	if errors.As(err, &e) {
		code = e.Code
	}
	b := s.farewell[:0]
	b = appendFrameHeader(b, 8, 0x7, 0, 0)
	h := s.highest
	b = append(b, byte(h>>24), byte(h>>16), byte(h>>8), byte(h), byte(code>>24), byte(code>>16), byte(code>>8), byte(code))
	s.farewell = b
	return err
}

// Parse consumes frames and appends a completion per finished response.
// It stops early when done is full, so that the caller's completion
// buffer never grows.
func (s *Session) Parse(b []byte, done []exchange.Completion) (int, []exchange.Completion, error) {
	n, out, err := s.parse(b, done)
	s.publish()
	return n, out, err
}

func (s *Session) parse(b []byte, done []exchange.Completion) (int, []exchange.Completion, error) {
	s.done = done
	n := 0
	full := cap(done)
	for n < len(b) && (full == 0 || len(s.done) < full) {
		k, err := s.step(b[n:])
		n += k
		if err != nil {
			out := s.done
			s.done = nil
			return n, out, s.fail(err)
		}
	}
	out := s.done
	s.done = nil
	return n, out, nil
}
