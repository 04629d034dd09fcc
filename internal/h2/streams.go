package h2

import (
	"golang.org/x/net/http2"

	"github.com/brk-bench/brk/internal/exchange"
)

// queue holds the requests queued and not yet opened as streams, in
// queue order (a ring of tokens).
type queue struct {
	pend    []uint32
	pendT   []uint8 // each queued request's target in a mix (mix.go)
	ph, pt  uint32
	last    bool // the connection's last request is queued
	lastTok uint32
}

// streamTable is the open streams and the ids handed out.
type streamTable struct {
	nextID   uint32
	highest  uint32 // highest stream id opened
	open     int    // streams open (opened, not answered, not reset)
	tab      []stream
	tabMask  uint32
	tabShift uint32 // 32 − log2(len(tab))
}

// stream is one open stream.
type stream struct {
	id       uint32 // 0: free table slot
	tok      uint32
	t        *Template // the stream's request (its target's, in a mix)
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

// rstStream handles the server's reset of a stream.
func (s *Session) rstStream(f *http2.RSTStreamFrame) error {
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
	s.done = append(s.done, exchange.Completion{Token: st.tok, Reset: true})
	s.remove(st.id)
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
