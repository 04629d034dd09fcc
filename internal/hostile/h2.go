package hostile

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"sync"
	"sync/atomic"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// H2Stats counts what scripted HTTP/2 connections saw and did.
type H2Stats struct {
	Requests   atomic.Int64 // complete requests (END_STREAM seen)
	Responses  atomic.Int64 // responses written by Respond
	Resets     atomic.Int64 // RST_STREAM frames received
	PingAcks   atomic.Int64 // PING ACKs received
	GoAways    atomic.Int64 // GOAWAY frames received
	LastGoAway atomic.Int64 // the error code of the latest GOAWAY received
	MaxOpen    atomic.Int64 // most streams open at once on one connection
	BodyBytes  atomic.Int64 // request DATA bytes received
}

// H2Event is what H2Conn.Next read.
type H2Event struct {
	Kind   int // H2Request, H2Reset, H2PingAck, H2GoAway, H2Open
	Stream uint32
	Code   http2.ErrCode
	Body   []byte // H2Request: the request body
	Fields []hpack.HeaderField
}

// H2Conn event kinds.
const (
	H2Request = iota
	H2Reset
	H2PingAck
	H2GoAway
	// H2Open: a stream's HEADERS arrived without END_STREAM (its body
	// follows); reported only when H2Conn.Opens is set.
	H2Open
)

// H2Conn speaks HTTP/2 frames on one scripted connection with x/net's
// Framer: every frame it sends is the script's choice.
type H2Conn struct {
	C      *Conn
	Fr     *http2.Framer
	st     *H2Stats
	enc    *hpack.Encoder
	encBuf bytes.Buffer
	open   map[uint32][]byte // open stream → body so far
	// Unanswered counts requests read and not yet answered or reset.
	Unanswered int
	// Opens makes Next report H2Open for a request whose body follows.
	Opens bool
	// Mu serialises writes and Unanswered: Next holds it for its own
	// (SETTINGS and PING acknowledgements, counting requests), so a script
	// that writes from other goroutines while Next reads holds it too.
	Mu sync.Mutex
}

// NewH2 reads the client preface and sends SETTINGS (the script's
// settings; none means the defaults).
func NewH2(c *Conn, st *H2Stats, settings ...http2.Setting) (*H2Conn, error) {
	h := &H2Conn{C: c, st: st, open: map[uint32][]byte{}}
	pre := make([]byte, len(http2.ClientPreface))
	if _, err := io.ReadFull(c.tc, pre); err != nil {
		return nil, err
	}
	if string(pre) != http2.ClientPreface {
		return nil, errors.New("hostile: not an HTTP/2 client preface")
	}
	h.Fr = http2.NewFramer(c.tc, c.tc)
	h.Fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	h.Fr.SetMaxReadFrameSize(1 << 20)
	h.enc = hpack.NewEncoder(&h.encBuf)
	if err := h.Fr.WriteSettings(settings...); err != nil {
		return nil, err
	}
	return h, nil
}

// Next reads frames until a request is complete, a stream is reset, a
// PING is acknowledged or a GOAWAY arrives. SETTINGS are acknowledged.
func (h *H2Conn) Next() (H2Event, error) {
	for {
		f, err := h.Fr.ReadFrame()
		if err != nil {
			return H2Event{}, err
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				h.Mu.Lock()
				err := h.Fr.WriteSettingsAck()
				h.Mu.Unlock()
				if err != nil {
					return H2Event{}, err
				}
			}
		case *http2.MetaHeadersFrame:
			h.open[f.StreamID] = []byte{}
			h.Mu.Lock()
			h.Unanswered++
			if n := int64(h.Unanswered); n > h.st.MaxOpen.Load() {
				h.st.MaxOpen.Store(n)
			}
			h.Mu.Unlock()
			if f.StreamEnded() {
				delete(h.open, f.StreamID)
				h.st.Requests.Add(1)
				return H2Event{Kind: H2Request, Stream: f.StreamID, Fields: f.Fields}, nil
			}
			if h.Opens {
				return H2Event{Kind: H2Open, Stream: f.StreamID, Fields: f.Fields}, nil
			}
		case *http2.DataFrame:
			h.st.BodyBytes.Add(int64(len(f.Data())))
			b := append(h.open[f.StreamID], f.Data()...)
			if f.StreamEnded() {
				delete(h.open, f.StreamID)
				h.st.Requests.Add(1)
				return H2Event{Kind: H2Request, Stream: f.StreamID, Body: b}, nil
			}
			h.open[f.StreamID] = b
		case *http2.RSTStreamFrame:
			delete(h.open, f.StreamID)
			h.Mu.Lock()
			h.Unanswered--
			h.Mu.Unlock()
			h.st.Resets.Add(1)
			return H2Event{Kind: H2Reset, Stream: f.StreamID, Code: f.ErrCode}, nil
		case *http2.PingFrame:
			if f.IsAck() {
				h.st.PingAcks.Add(1)
				return H2Event{Kind: H2PingAck}, nil
			}
			h.Mu.Lock()
			err := h.Fr.WritePing(true, f.Data)
			h.Mu.Unlock()
			if err != nil {
				return H2Event{}, err
			}
		case *http2.GoAwayFrame:
			h.st.GoAways.Add(1)
			h.st.LastGoAway.Store(int64(f.ErrCode))
			return H2Event{Kind: H2GoAway, Stream: f.LastStreamID, Code: f.ErrCode}, nil
		}
	}
}

// Block encodes a response header block: :status and content-length.
func (h *H2Conn) Block(status int, body string) []byte {
	h.encBuf.Reset()
	h.enc.WriteField(hpack.HeaderField{Name: ":status", Value: strconv.Itoa(status)})
	h.enc.WriteField(hpack.HeaderField{Name: "content-length", Value: strconv.Itoa(len(body))})
	return bytes.Clone(h.encBuf.Bytes())
}

// Respond writes a complete response on stream id.
func (h *H2Conn) Respond(id uint32, status int, body string) error {
	if err := h.Fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: h.Block(status, body),
		EndHeaders: true, EndStream: body == ""}); err != nil {
		return err
	}
	if body != "" {
		if err := h.Fr.WriteData(id, true, []byte(body)); err != nil {
			return err
		}
	}
	h.st.Responses.Add(1)
	h.Unanswered--
	return nil
}
