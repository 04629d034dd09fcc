package h2

import (
	"errors"
	"fmt"
	"math"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/brk-bench/brk/proto"
)

// Error is a connection error: the peer broke the protocol. Its code is
// the one the GOAWAY that ends the connection carries.
type Error struct {
	Code   http2.ErrCode
	Reason string
}

func (e *Error) Error() string { return "h2 " + e.Code.String() + ": " + e.Reason }

func connErr(code http2.ErrCode, format string, args ...any) error {
	return &Error{Code: code, Reason: fmt.Sprintf(format, args...)}
}

// Frame types and flags used by the streaming parser.
const (
	ftData         = 0x0
	ftHeaders      = 0x1
	ftPushPromise  = 0x5
	ftContinuation = 0x9

	flEndStream  = 0x1
	flEndHeaders = 0x4
	flPadded     = 0x8
	flPriority   = 0x20
)

// Parser states.
const (
	rsHeader  = iota // reading a 9-byte frame header
	rsPayload        // streaming a DATA, HEADERS or CONTINUATION payload
	rsBuffer         // buffering a whole control frame for the Framer
)

// stream is one open stream.
type stream struct {
	id       uint32 // 0: free table slot
	tok      uint32
	status   int
	final    bool  // final (non-1xx) response headers received
	clen     int64 // content-length, -1 unknown
	got      int64 // DATA bytes received
	mismatch bool  // body differs from the expected one
	recv     int64 // receive window left
	unacked  int64 // consumed, not yet returned by WINDOW_UPDATE
	upOff    int   // request body bytes sent (the body is out when it is len(body))
	upWin    int64 // the peer's window for this stream's request body
}

// mark says that the request of token tok is completely in the output
// once end bytes are written.
type mark struct {
	end int
	tok uint32
}

// Session is one connection's HTTP/2 client state (proto.Session): the
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
type Session struct {
	t *Template

	// Output: out[off:] is unwritten; marks are requests ending in it.
	w      sink
	off    int
	marks  []mark
	mh     int
	wfr    *http2.Framer // writes control frames into w
	sentHB bool          // the first request's header block was sent

	// Requests queued and not yet opened as streams, in queue order.
	pend     []uint32
	ph, pt   uint32
	last     bool // the connection's last request is queued
	lastTok  uint32
	nextID   uint32
	highest  uint32 // highest stream id opened
	open     int    // streams open (opened, not answered, not reset)
	tab      []stream
	tabMask  uint32
	tabShift uint32 // 32 − log2(len(tab))
	peerMax  int    // peer's SETTINGS_MAX_CONCURRENT_STREAMS (MaxInt32 unlimited)
	peerWin  int64
	peerFrm  int
	sendWin  int64    // connection send window
	ups      []uint32 // streams whose request body is not all sent, in opening order
	recvWin  int64    // connection receive window left
	recvAcc  int64    // connection bytes consumed, not yet returned
	ready    bool     // the peer's SETTINGS arrived
	goaway   bool     // the peer sent GOAWAY (or refused a stream)
	goLast   uint32   // the lowest last stream id of the peer's GOAWAYs; noGoAway before one
	ending   bool     // this side ends the connection (last answered, ids out)
	unproc   []uint32
	farewell []byte
	counters proto.Counters

	// Parser.
	rs       int
	fh       [9]byte
	fhn      int
	ftype    uint8
	fflags   uint8
	fid      uint32
	rem      int // payload bytes left
	padWait  bool
	skip     int
	padding  int
	cur      *stream // DATA: the stream, nil when closed or reset
	ctl      []byte
	rd       frameReader
	rfr      *http2.Framer
	dec      *hpack.Decoder
	contID   uint32 // CONTINUATION expected on this stream when non-zero
	hbID     uint32 // stream of the header block being decoded
	hbLen    int
	hbEnd    bool // the block's HEADERS carried END_STREAM
	hStatus  int
	hClen    int64
	hRegular bool
	hErr     error
	done     []proto.Completion
}

// sink collects written frames.
type sink struct{ b []byte }

func (s *sink) Write(p []byte) (int, error) {
	s.b = append(s.b, p...)
	return len(p), nil
}

// frameReader hands the Framer exactly one buffered frame.
type frameReader struct {
	b []byte
}

func (r *frameReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, errors.New("h2: frame reader empty")
	}
	n := copy(p, r.b)
	r.b = r.b[n:]
	return n, nil
}

// NewSession returns a session for t.
func NewSession(t *Template) *Session {
	s := &Session{t: t, pend: make([]uint32, 8), tab: make([]stream, 16), tabMask: 15, tabShift: 28}
	s.wfr = http2.NewFramer(&s.w, nil)
	s.rfr = http2.NewFramer(nil, &s.rd)
	s.rfr.SetMaxReadFrameSize(maxFrame)
	s.dec = hpack.NewDecoder(4096, s.onField)
	s.dec.SetMaxStringLength(maxHeaderBlock)
	s.ctl = make([]byte, 0, 9+maxFrame)
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
	s.counters.MaxStreams = -1
	s.rs, s.fhn, s.contID, s.cur = rsHeader, 0, 0, nil
	s.dec = hpack.NewDecoder(4096, s.onField)
	s.dec.SetMaxStringLength(maxHeaderBlock)
}

// Queue appends one request; last makes it the connection's last: once
// it is answered the session sends GOAWAY and the connection ends.
func (s *Session) Queue(token uint32, last bool) {
	if int(s.pt-s.ph) == len(s.pend) {
		p := make([]uint32, 2*len(s.pend))
		for k := s.ph; k != s.pt; k++ {
			p[k&uint32(len(p)-1)] = s.pend[k&uint32(len(s.pend)-1)]
		}
		s.pend = p
	}
	s.pend[s.pt&uint32(len(s.pend)-1)] = token
	s.pt++
	if last {
		s.last, s.lastTok = true, token
	}
}

// Output returns the bytes to write: control frames, then requests
// opened as streams as far as the peer's stream limit and windows allow.
func (s *Session) Output() []byte {
	s.fill()
	if s.off == len(s.w.b) {
		return nil
	}
	return s.w.b[s.off:]
}

// outputBound caps what one fill appends beyond the unwritten bytes.
const outputBound = 256 << 10

func (s *Session) fill() {
	if s.off == len(s.w.b) {
		s.w.b, s.off = s.w.b[:0], 0
		s.marks, s.mh = s.marks[:0], 0
	}
	if !s.ready {
		return
	}
	for s.ph != s.pt && !s.goaway && !s.ending && s.open < s.peerMax && s.nextID <= maxStreamID && len(s.w.b)-s.off < outputBound {
		tok := s.pend[s.ph&uint32(len(s.pend)-1)]
		s.ph++
		id := s.nextID
		s.nextID += 2
		s.highest = id
		st := s.insert(id)
		st.tok, st.clen, st.recv = tok, -1, streamWindow
		s.open++
		block := s.t.block
		if !s.sentHB {
			block, s.sentHB = s.t.first, true
		}
		var flags uint8 = flEndHeaders
		if s.t.body == nil {
			flags |= flEndStream
		}
		s.headers(id, flags, block)
		s.marks = append(s.marks, mark{end: len(s.w.b), tok: tok})
		if s.t.body != nil {
			st.upWin = s.peerWin
			s.ups = append(s.ups, id)
		}
	}
	s.upload()
	if s.nextID > maxStreamID && !s.ending {
		// Stream ids ran out: open no more, end the connection when the
		// open streams are answered.
		s.ending = true
		s.wfr.WriteGoAway(0, http2.ErrCodeNo, nil)
	}
}

// headers appends a HEADERS frame (with CONTINUATIONs when the block is
// larger than the peer's frame size).
func (s *Session) headers(id uint32, flags uint8, block []byte) {
	typ := uint8(ftHeaders)
	for {
		n := len(block)
		f := flags
		if n > s.peerFrm {
			n = s.peerFrm
			f &^= flEndHeaders
		}
		s.w.b = appendFrameHeader(s.w.b, n, typ, f, id)
		s.w.b = append(s.w.b, block[:n]...)
		block = block[n:]
		if len(block) == 0 {
			return
		}
		typ, flags = ftContinuation, flags&flEndHeaders
	}
}

func appendFrameHeader(b []byte, n int, typ, flags uint8, id uint32) []byte {
	return append(b, byte(n>>16), byte(n>>8), byte(n), typ, flags, byte(id>>24), byte(id>>16), byte(id>>8), byte(id))
}

// upload appends request body DATA of the streams that have some left,
// in the order they were opened, each within its own window and all
// within the connection's, up to the output bound. A stream whose window
// is shut is passed over; one that is gone (answered, reset, refused) is
// dropped. Streams whose body is out leave the list.
func (s *Session) upload() {
	body := s.t.body
	keep := s.ups[:0]
	for i, id := range s.ups {
		st := s.lookup(id)
		if st == nil {
			continue
		}
		for st.upOff < len(body) {
			n := min(int64(len(body)-st.upOff), int64(s.peerFrm), s.sendWin, st.upWin)
			if n <= 0 || len(s.w.b)-s.off >= outputBound {
				break
			}
			st.upOff += int(n)
			var flags uint8
			if st.upOff == len(body) {
				flags = flEndStream
			}
			s.w.b = appendFrameHeader(s.w.b, int(n), ftData, flags, id)
			s.w.b = append(s.w.b, body[st.upOff-int(n):st.upOff]...)
			s.sendWin -= n
			st.upWin -= n
		}
		if st.upOff < len(body) {
			keep = append(keep, id)
		}
		if s.sendWin <= 0 || len(s.w.b)-s.off >= outputBound {
			keep = append(keep, s.ups[i+1:]...)
			break
		}
	}
	s.ups = keep
}

// Wrote consumes n bytes of Output.
func (s *Session) Wrote(n int) (upTo uint32, ok bool) {
	s.off += n
	for s.mh < len(s.marks) && s.marks[s.mh].end <= s.off {
		upTo, ok = s.marks[s.mh].tok, true
		s.mh++
	}
	return upTo, ok
}

// Stream table: open addressing by stream id, linear probing, deletion
// by backward shift.

// slotOf spreads ids by Fibonacci hashing: consecutive ids would form
// one long cluster that every backward-shift deletion walks.
func (s *Session) slotOf(id uint32) uint32 { return ((id >> 1) * 0x9E3779B1) >> s.tabShift }

func (s *Session) lookup(id uint32) *stream {
	for i := s.slotOf(id); ; i = (i + 1) & s.tabMask {
		st := &s.tab[i]
		if st.id == id {
			return st
		}
		if st.id == 0 {
			return nil
		}
	}
}

func (s *Session) insert(id uint32) *stream {
	if 4*(s.open+1) > len(s.tab) {
		old := s.tab
		s.tab = make([]stream, 2*len(old))
		s.tabMask = uint32(len(s.tab) - 1)
		s.tabShift--
		for i := range old {
			if old[i].id != 0 {
				*s.place(old[i].id) = old[i]
			}
		}
	}
	st := s.place(id)
	*st = stream{id: id}
	return st
}

func (s *Session) place(id uint32) *stream {
	i := s.slotOf(id)
	for s.tab[i].id != 0 {
		i = (i + 1) & s.tabMask
	}
	return &s.tab[i]
}

// remove closes stream id (which must be open).
func (s *Session) remove(id uint32) {
	i := s.slotOf(id)
	for s.tab[i].id != id {
		i = (i + 1) & s.tabMask
	}
	s.open--
	if s.cur != nil && s.cur.id == id {
		s.cur = nil
	}
	for {
		s.tab[i] = stream{}
		j := i
		for {
			j = (j + 1) & s.tabMask
			if s.tab[j].id == 0 {
				return
			}
			home := s.slotOf(s.tab[j].id)
			// Move j back to i unless its home lies cyclically in (i, j].
			if (i <= j && (i < home && home <= j)) || (i > j && (home <= j || i < home)) {
				continue
			}
			s.tab[i] = s.tab[j]
			i = j
			break
		}
	}
}

// EOF: the peer closed. Streams still open are the worker's to count.
func (s *Session) EOF(done []proto.Completion) ([]proto.Completion, error) {
	return done, nil
}

// Cancel resets the stream of a request that missed its deadline
// (RST_STREAM CANCEL), or drops it before it was opened. The connection
// and its other streams carry on.
func (s *Session) Cancel(token uint32) bool {
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
			s.counters.Resets++
			return true
		}
	}
	return true
}

// Capacity is the peer's stream limit (none once the connection goes
// away), bounded by the stream ids left. Before the peer's SETTINGS it is
// one: the connection's logical first request is admitted at the connect,
// as over HTTP/1.1, so that its deadline covers the setup and a failed
// setup counts it (connect, connect_timeout); no stream is opened for it
// before the SETTINGS arrive.
func (s *Session) Capacity() int {
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

// Ready reports that the peer's SETTINGS arrived.
func (s *Session) Ready() bool { return s.ready }

// Drained reports that the connection ends gracefully now: the peer sent
// GOAWAY (or refused a stream) or this side ended it, and no stream the
// peer may still answer is open.
func (s *Session) Drained() bool { return (s.goaway || s.ending) && s.open == 0 }

// Farewell is the GOAWAY that ends a connection after a protocol error.
func (s *Session) Farewell() []byte { return s.farewell }

// Independent is true: each stream fails on its own.
func (s *Session) Independent() bool { return true }

// Counters are the session's counts (resets sent, GOAWAYs received) and
// the peer's stream limit on the current connection.
func (s *Session) Counters() *proto.Counters { return &s.counters }

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
func (s *Session) Parse(b []byte, done []proto.Completion) (int, []proto.Completion, error) {
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

// step consumes bytes of one parser state.
func (s *Session) step(b []byte) (int, error) {
	switch s.rs {
	case rsHeader:
		k := copy(s.fh[s.fhn:], b)
		s.fhn += k
		if s.fhn < 9 {
			return k, nil
		}
		s.fhn = 0
		if err := s.begin(); err != nil {
			return k, err
		}
		return k, s.maybeEnd()
	case rsBuffer:
		k := min(s.rem, len(b))
		s.ctl = append(s.ctl, b[:k]...)
		s.rem -= k
		if s.rem == 0 {
			s.rs = rsHeader
			return k, s.control()
		}
		return k, nil
	}
	// rsPayload
	if s.padWait {
		pad := int(b[0])
		s.padWait = false
		s.rem--
		if pad+s.skip > s.rem {
			return 1, connErr(http2.ErrCodeProtocol, "padding longer than the frame")
		}
		s.padding = pad
		return 1, s.maybeEnd()
	}
	var k int
	var err error
	switch data := s.rem - s.padding; {
	case s.skip > 0:
		k = min(s.skip, len(b))
		s.skip -= k
	case data > 0:
		k = min(data, len(b))
		err = s.payload(b[:k])
	default:
		k = min(s.rem, len(b)) // padding
	}
	s.rem -= k
	if err != nil {
		return k, err
	}
	return k, s.maybeEnd()
}

func (s *Session) maybeEnd() error {
	if s.rs != rsPayload || s.rem > 0 || s.padWait {
		return nil
	}
	s.rs = rsHeader
	return s.end()
}

// begin starts a frame from its header.
func (s *Session) begin() error {
	h := &s.fh
	n := int(h[0])<<16 | int(h[1])<<8 | int(h[2])
	s.ftype, s.fflags = h[3], h[4]
	s.fid = (uint32(h[5])<<24 | uint32(h[6])<<16 | uint32(h[7])<<8 | uint32(h[8])) & (1<<31 - 1)
	if !s.ready && s.ftype != 0x4 {
		return connErr(http2.ErrCodeProtocol, "first frame is not SETTINGS (not an HTTP/2 server?)")
	}
	if n > maxFrame {
		return connErr(http2.ErrCodeFrameSize, "frame of %d bytes over the %d advertised", n, maxFrame)
	}
	if s.contID != 0 && (s.ftype != ftContinuation || s.fid != s.contID) {
		return connErr(http2.ErrCodeProtocol, "frame type %d where CONTINUATION of stream %d was due", s.ftype, s.contID)
	}
	s.rem, s.padWait, s.skip, s.padding = n, false, 0, 0
	switch s.ftype {
	case ftData:
		if err := s.streamFrame("DATA"); err != nil {
			return err
		}
		if int64(n) > s.recvWin {
			return connErr(http2.ErrCodeFlowControl, "DATA beyond the connection window")
		}
		s.recvWin -= int64(n)
		s.recvAcc += int64(n)
		s.cur = s.lookup(s.fid)
		if st := s.cur; st != nil {
			if !st.final {
				return connErr(http2.ErrCodeProtocol, "DATA before response headers on stream %d", s.fid)
			}
			if int64(n) > st.recv {
				return connErr(http2.ErrCodeFlowControl, "DATA beyond the window of stream %d", s.fid)
			}
			st.recv -= int64(n)
			st.unacked += int64(n)
		}
		s.padWait = s.fflags&flPadded != 0
	case ftHeaders:
		if err := s.streamFrame("HEADERS"); err != nil {
			return err
		}
		st := s.lookup(s.fid)
		if st != nil && st.final && s.fflags&flEndStream == 0 {
			return connErr(http2.ErrCodeProtocol, "trailers without END_STREAM on stream %d", s.fid)
		}
		s.hbID, s.hbLen, s.hbEnd = s.fid, 0, s.fflags&flEndStream != 0
		s.hStatus, s.hClen, s.hRegular, s.hErr = 0, -1, false, nil
		s.padWait = s.fflags&flPadded != 0
		if s.fflags&flPriority != 0 {
			s.skip = 5
		}
		if s.fflags&flEndHeaders == 0 {
			s.contID = s.fid
		}
	case ftContinuation:
		if s.contID == 0 {
			return connErr(http2.ErrCodeProtocol, "CONTINUATION without HEADERS")
		}
		if s.fflags&flEndHeaders != 0 {
			s.contID = 0
		}
	case ftPushPromise:
		return connErr(http2.ErrCodeProtocol, "PUSH_PROMISE with push disabled")
	default:
		s.rs = rsBuffer
		s.ctl = append(s.ctl[:0], s.fh[:]...)
		if n == 0 {
			s.rs = rsHeader
			return s.control()
		}
		return nil
	}
	s.rs = rsPayload
	if s.padWait && n == 0 {
		return connErr(http2.ErrCodeFrameSize, "padded frame without its pad length")
	}
	if s.skip > n {
		return connErr(http2.ErrCodeFrameSize, "HEADERS shorter than its priority fields")
	}
	return nil
}

// streamFrame checks the stream of a DATA or HEADERS frame: not 0, not
// idle (a server opens no streams: push is off).
func (s *Session) streamFrame(what string) error {
	if s.fid == 0 {
		return connErr(http2.ErrCodeProtocol, "%s on stream 0", what)
	}
	if s.fid > s.highest || s.fid&1 == 0 {
		return connErr(http2.ErrCodeProtocol, "%s on idle stream %d", what, s.fid)
	}
	return nil
}

// payload handles DATA bytes or a header block fragment.
func (s *Session) payload(b []byte) error {
	if s.ftype == ftData {
		st := s.cur
		if st == nil {
			return nil // a reset or closed stream: only the window counts
		}
		if s.t.head {
			return connErr(http2.ErrCodeProtocol, "DATA in a response to HEAD on stream %d", st.id)
		}
		if st.clen >= 0 && st.got+int64(len(b)) > st.clen {
			return connErr(http2.ErrCodeProtocol, "DATA past content-length on stream %d", st.id)
		}
		if s.t.check && !st.mismatch {
			e := s.t.expect
			if st.got+int64(len(b)) > int64(len(e)) || string(e[st.got:st.got+int64(len(b))]) != string(b) {
				st.mismatch = true
			}
		}
		st.got += int64(len(b))
		return nil
	}
	s.hbLen += len(b)
	if s.hbLen > maxHeaderBlock {
		return connErr(http2.ErrCodeProtocol, "header block over %d bytes (CONTINUATION flood?)", maxHeaderBlock)
	}
	if _, err := s.dec.Write(b); err != nil && s.hErr == nil {
		return connErr(http2.ErrCodeCompression, "invalid HPACK: %v", err)
	}
	// A malformed field decoded before an HPACK error in the same bytes
	// is the first fault, however the bytes were split.
	return s.hErr
}

// onField is the HPACK decoder's emit callback, bound once.
func (s *Session) onField(f hpack.HeaderField) {
	if s.hErr != nil {
		return
	}
	if len(f.Name) > 0 && f.Name[0] == ':' {
		if s.hRegular || f.Name != ":status" || s.hStatus != 0 {
			s.hErr = connErr(http2.ErrCodeProtocol, "malformed response: pseudo-header %q", f.Name)
			return
		}
		v := f.Value
		if len(v) != 3 || v[0] < '1' || v[0] > '5' || v[1] < '0' || v[1] > '9' || v[2] < '0' || v[2] > '9' {
			s.hErr = connErr(http2.ErrCodeProtocol, "malformed response: :status %q", v)
			return
		}
		s.hStatus = int(v[0]-'0')*100 + int(v[1]-'0')*10 + int(v[2]-'0')
		return
	}
	s.hRegular = true
	if why := fieldFault(f.Name, f.Value); why != "" {
		s.hErr = connErr(http2.ErrCodeProtocol, "malformed response: field %q %s", f.Name, why)
		return
	}
	if f.Name == "content-length" {
		var n int64
		if len(f.Value) == 0 || len(f.Value) > 18 {
			s.hErr = connErr(http2.ErrCodeProtocol, "malformed response: content-length %q", f.Value)
			return
		}
		for i := 0; i < len(f.Value); i++ {
			c := f.Value[i]
			if c < '0' || c > '9' {
				s.hErr = connErr(http2.ErrCodeProtocol, "malformed response: content-length %q", f.Value)
				return
			}
			n = n*10 + int64(c-'0')
		}
		s.hClen = n
	}
}

// fieldFault names what makes a regular (not pseudo-) response field
// malformed, "" when nothing does: a name with a character RFC 9113
// §8.2.1 excludes (controls, SP, upper case, DEL and above, a colon), a
// value with NUL, CR or LF or starting or ending with SP or HTAB, or a
// connection-specific field (§8.2.2: connection, keep-alive,
// proxy-connection, transfer-encoding, upgrade; te other than
// "trailers"). It allocates nothing.
func fieldFault(name, value string) string {
	if name == "" {
		return "has an empty name"
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c <= 0x20 || c >= 'A' && c <= 'Z' || c >= 0x7f || c == ':' {
			if c >= 'A' && c <= 'Z' {
				return "has an upper-case name"
			}
			return "has an invalid character in its name"
		}
	}
	for i := 0; i < len(value); i++ {
		if c := value[i]; c == 0 || c == '\r' || c == '\n' {
			return "has NUL, CR or LF in its value"
		}
	}
	if n := len(value); n > 0 && (value[0] == ' ' || value[0] == '\t' || value[n-1] == ' ' || value[n-1] == '\t') {
		return "has a value starting or ending with whitespace"
	}
	switch name {
	case "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade":
		return "is connection-specific"
	case "te":
		if value != "trailers" {
			return "is connection-specific (te other than trailers)"
		}
	}
	return ""
}

// end finishes a DATA, HEADERS or CONTINUATION frame.
func (s *Session) end() error {
	switch s.ftype {
	case ftData:
		s.windowUpdates()
		if st := s.cur; st != nil && s.fflags&flEndStream != 0 {
			s.cur = nil
			return s.finish(st)
		}
		s.cur = nil
		return nil
	case ftHeaders, ftContinuation:
		if s.fflags&flEndHeaders == 0 {
			return nil
		}
	}
	// The header block ends.
	if err := s.dec.Close(); err != nil {
		return connErr(http2.ErrCodeCompression, "invalid HPACK: %v", err)
	}
	if s.hErr != nil {
		return s.hErr
	}
	st := s.lookup(s.hbID)
	if st == nil {
		return nil // a reset stream: decoded for the table only
	}
	if !st.final {
		if s.hStatus == 0 {
			return connErr(http2.ErrCodeProtocol, "malformed response: no :status on stream %d", st.id)
		}
		if s.hStatus < 200 {
			if s.hbEnd {
				return connErr(http2.ErrCodeProtocol, "informational response with END_STREAM on stream %d", st.id)
			}
			return nil // 1xx: the final response follows
		}
		st.final, st.status, st.clen = true, s.hStatus, s.hClen
	} else if s.hStatus != 0 {
		return connErr(http2.ErrCodeProtocol, "malformed trailers: :status on stream %d", st.id)
	}
	if s.hbEnd {
		return s.finish(st)
	}
	return nil
}

// finish completes a stream at END_STREAM.
func (s *Session) finish(st *stream) error {
	if st.clen >= 0 && st.got != st.clen && !s.t.head && st.status != 204 && st.status != 304 {
		return connErr(http2.ErrCodeProtocol, "DATA of %d bytes for content-length %d on stream %d", st.got, st.clen, st.id)
	}
	ok := !st.mismatch && (!s.t.check || st.got == int64(len(s.t.expect)))
	tok := st.tok
	s.done = append(s.done, proto.Completion{Token: tok, Status: st.status, BodyOK: ok})
	s.remove(st.id)
	if s.last && tok == s.lastTok && !s.ending {
		s.ending = true
		s.wfr.WriteGoAway(s.highest, http2.ErrCodeNo, nil)
	}
	return nil
}

// windowUpdates returns consumed receive window: the connection's once a
// sixteenth of it is consumed, a stream's once half of it is.
func (s *Session) windowUpdates() {
	if s.recvAcc >= connWindow/16 {
		s.wfr.WriteWindowUpdate(0, uint32(s.recvAcc))
		s.recvWin += s.recvAcc
		s.recvAcc = 0
	}
	if st := s.cur; st != nil && st.unacked >= streamWindow/2 && s.fflags&flEndStream == 0 {
		s.wfr.WriteWindowUpdate(st.id, uint32(st.unacked))
		st.recv += st.unacked
		st.unacked = 0
	}
}

// control reads a buffered control frame with the Framer.
func (s *Session) control() error {
	s.rd.b = s.ctl
	f, err := s.rfr.ReadFrame()
	if err != nil {
		return framerErr(s.rfr, err)
	}
	switch f := f.(type) {
	case *http2.SettingsFrame:
		if f.IsAck() {
			return nil
		}
		for i := 0; i < f.NumSettings(); i++ {
			set := f.Setting(i)
			if err := set.Valid(); err != nil {
				return framerErr(s.rfr, err)
			}
			switch set.ID {
			case http2.SettingMaxConcurrentStreams:
				s.peerMax = int(min(set.Val, math.MaxInt32))
				s.counters.MaxStreams = int64(set.Val)
			case http2.SettingInitialWindowSize:
				d := int64(set.Val) - s.peerWin
				s.peerWin = int64(set.Val)
				for _, id := range s.ups {
					if st := s.lookup(id); st != nil {
						st.upWin += d
						if st.upWin > math.MaxInt32 {
							return connErr(http2.ErrCodeFlowControl, "SETTINGS_INITIAL_WINDOW_SIZE overflows a stream window")
						}
					}
				}
			case http2.SettingMaxFrameSize:
				s.peerFrm = int(set.Val)
			}
		}
		s.wfr.WriteSettingsAck()
		s.ready = true
	case *http2.PingFrame:
		if !f.IsAck() {
			s.wfr.WritePing(true, f.Data)
		}
	case *http2.GoAwayFrame:
		s.counters.GoAways++
		s.goAway(f.LastStreamID)
	case *http2.RSTStreamFrame:
		if f.StreamID > s.highest || f.StreamID&1 == 0 {
			return connErr(http2.ErrCodeProtocol, "RST_STREAM on idle stream %d", f.StreamID)
		}
		st := s.lookup(f.StreamID)
		if st == nil {
			return nil
		}
		if f.ErrCode == http2.ErrCodeRefusedStream {
			// Not processed: replayed on a new connection, as after
			// GOAWAY; this one carries what it may still answer.
			s.unproc = append(s.unproc, st.tok)
			s.remove(st.id)
			s.goaway = true
			return nil
		}
		// Reset by the server: this request failed alone, with no
		// response (transport).
		s.done = append(s.done, proto.Completion{Token: st.tok, Reset: true})
		s.remove(st.id)
	case *http2.WindowUpdateFrame:
		inc := int64(f.Increment)
		if f.StreamID == 0 {
			s.sendWin += inc
			if s.sendWin > math.MaxInt32 {
				return connErr(http2.ErrCodeFlowControl, "connection window over 2^31-1")
			}
			return nil
		}
		if f.StreamID > s.highest || f.StreamID&1 == 0 {
			return connErr(http2.ErrCodeProtocol, "WINDOW_UPDATE on idle stream %d", f.StreamID)
		}
		if st := s.lookup(f.StreamID); st != nil && st.upOff < len(s.t.body) {
			st.upWin += inc
			if st.upWin > math.MaxInt32 {
				return connErr(http2.ErrCodeFlowControl, "window of stream %d over 2^31-1", f.StreamID)
			}
		}
	}
	return nil
}

// noGoAway is goLast before the peer's first GOAWAY: a refused stream
// stops new streams too (goaway), but a later GOAWAY must still mark the
// streams above its last id.
const noGoAway = ^uint32(0)

// goAway stops opening streams; those above last were not processed.
func (s *Session) goAway(last uint32) {
	if s.goaway && last >= s.goLast {
		return
	}
	s.goaway, s.goLast = true, last
	for i := 0; i < len(s.tab); {
		st := &s.tab[i]
		if st.id > last {
			s.unproc = append(s.unproc, st.tok)
			s.remove(st.id) // shifts a later entry into i: look again
			continue
		}
		i++
	}
}

// framerErr names an error of the Framer.
func framerErr(fr *http2.Framer, err error) error {
	reason := ""
	if d := fr.ErrorDetail(); d != nil {
		reason = d.Error()
	}
	var ce http2.ConnectionError
	var se http2.StreamError
	switch {
	case errors.As(err, &ce):
		if reason == "" {
			reason = "invalid frame"
		}
		return &Error{Code: http2.ErrCode(ce), Reason: reason}
	case errors.As(err, &se):
		return &Error{Code: se.Code, Reason: se.Error()}
	case errors.Is(err, http2.ErrFrameTooLarge):
		return &Error{Code: http2.ErrCodeFrameSize, Reason: "frame too large"}
	}
	return &Error{Code: http2.ErrCodeProtocol, Reason: err.Error()}
}
