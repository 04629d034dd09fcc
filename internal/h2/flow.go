package h2

import (
	"math"

	"golang.org/x/net/http2"
)

// flow is the flow-control state of both directions (RFC 9113 §5.2,
// §6.9) and the peer's frame size.
type flow struct {
	peerWin int64    // the peer's SETTINGS_INITIAL_WINDOW_SIZE
	peerFrm int      // the peer's SETTINGS_MAX_FRAME_SIZE
	sendWin int64    // connection send window
	ups     []uint32 // streams whose request body is not all sent, in opening order
	recvWin int64    // connection receive window left
	recvAcc int64    // connection bytes consumed, not yet returned
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

// settings applies the peer's SETTINGS: its stream limit, its initial
// stream window (which moves the windows of the streams still sending,
// RFC 9113 §6.9.2) and its frame size.
func (s *Session) settings(f *http2.SettingsFrame) error {
	for i := 0; i < f.NumSettings(); i++ {
		set := f.Setting(i)
		if err := set.Valid(); err != nil {
			return framerErr(s.rfr, err)
		}
		switch set.ID {
		case http2.SettingMaxConcurrentStreams:
			s.peerMax = int(min(set.Val, math.MaxInt32))
			s.live.MaxStreams = int64(set.Val)
			if l := &s.live.LowestMaxStreams; *l < 0 || int64(set.Val) < *l {
				*l = int64(set.Val)
			}
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
	return nil
}

// windowUpdate credits the connection's or a stream's send window.
func (s *Session) windowUpdate(f *http2.WindowUpdateFrame) error {
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
	if st := s.lookup(f.StreamID); st != nil && st.upOff < len(st.t.body) {
		st.upWin += inc
		if st.upWin > math.MaxInt32 {
			return connErr(http2.ErrCodeFlowControl, "window of stream %d over 2^31-1", f.StreamID)
		}
	}
	return nil
}
