package h2

import (
	"errors"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/brk-bench/brk/internal/exchange"
)

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

// parser is the response parser's state: the frame being read, the
// header block being decoded, the completions of the current Parse.
type parser struct {
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
	done     []exchange.Completion
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

// maybeEnd ends the frame once its payload is consumed.
func (s *Session) maybeEnd() error {
	if s.rs != rsPayload || s.rem > 0 || s.padWait {
		return nil
	}
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
		if st.t.head {
			return connErr(http2.ErrCodeProtocol, "DATA in a response to HEAD on stream %d", st.id)
		}
		if st.clen >= 0 && st.got+int64(len(b)) > st.clen {
			return connErr(http2.ErrCodeProtocol, "DATA past content-length on stream %d", st.id)
		}
		if st.t.check && !st.mismatch {
			e := st.t.expect
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

// end finishes a DATA, HEADERS or CONTINUATION frame: the parser reads a
// frame header next.
func (s *Session) end() error {
	s.rs = rsHeader
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
	if st.clen >= 0 && st.got != st.clen && !st.t.head && st.status != 204 && st.status != 304 {
		return connErr(http2.ErrCodeProtocol, "DATA of %d bytes for content-length %d on stream %d", st.got, st.clen, st.id)
	}
	ok := !st.mismatch && (!st.t.check || st.got == int64(len(st.t.expect)))
	tok := st.tok
	s.done = append(s.done, exchange.Completion{Token: tok, Status: st.status, BodyOK: ok})
	s.remove(st.id)
	if s.last && tok == s.lastTok && !s.ending {
		s.ending = true
		s.wfr.WriteGoAway(s.highest, http2.ErrCodeNo, nil)
	}
	return nil
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
		if err := s.settings(f); err != nil {
			return err
		}
		s.wfr.WriteSettingsAck()
		s.ready = true
	case *http2.PingFrame:
		if !f.IsAck() {
			s.wfr.WritePing(true, f.Data)
		}
	case *http2.GoAwayFrame:
		s.live.GoAways++
		s.goAway(f.LastStreamID)
	case *http2.RSTStreamFrame:
		return s.rstStream(f)
	case *http2.WindowUpdateFrame:
		return s.windowUpdate(f)
	}
	return nil
}
