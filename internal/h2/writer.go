package h2

import (
	"golang.org/x/net/http2"
)

// writer is the output: out[off:] is unwritten; marks are where the
// requests in it end, in order: one is written once its mark is.
type writer struct {
	w      sink
	off    int
	marks  []int
	mh     int
	wfr    *http2.Framer // writes control frames into w
	sentHB bool          // the first request's header block was sent
}

// sink collects written frames.
type sink struct{ b []byte }

func (s *sink) Write(p []byte) (int, error) {
	s.b = append(s.b, p...)
	return len(p), nil
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
		t := s.ts[s.pendT[s.ph&uint32(len(s.pend)-1)]]
		s.ph++
		id := s.nextID
		s.nextID += 2
		s.highest = id
		st := s.insert(id)
		st.tok, st.t, st.clen, st.recv = tok, t, -1, streamWindow
		s.open++
		block := t.block
		if !s.sentHB {
			block, s.sentHB = t.first, true
		}
		var flags uint8 = flEndHeaders
		if t.body == nil {
			flags |= flEndStream
		}
		s.headers(id, flags, block)
		s.marks = append(s.marks, len(s.w.b))
		if t.body != nil {
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
	keep := s.ups[:0]
	for i, id := range s.ups {
		st := s.lookup(id)
		if st == nil {
			continue
		}
		body := st.t.body
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
