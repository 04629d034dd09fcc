package h2

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/brk-bench/brk/internal/exchange"
)

func testTemplate(t testing.TB, body []byte) *Template {
	t.Helper()
	tm, err := NewTemplate(exchange.Request{Host: "127.0.0.1:8080", Target: "/plain", Body: body}, "http", nil, false)
	if err != nil {
		t.Fatal(err)
	}
	return tm
}

// frames builds server bytes with x/net's Framer.
type frames struct {
	bytes.Buffer
	fr *http2.Framer
}

func newFrames() *frames {
	f := &frames{}
	f.fr = http2.NewFramer(&f.Buffer, nil)
	return f
}

// Static-table response blocks: :status 200 (0x88), and content-length
// as a literal without indexing of static name 28.
var (
	block200   = []byte{0x88}
	block200CL = []byte{0x88, 0x0f, 0x0d, 0x01, '2'} // :status 200, content-length: 2
	block103   = []byte{0x48, 0x03, '1', '0', '3'}   // :status 103 (literal, incremental indexing of name 8)
	settings   = []byte{0, 0, 0, 0x4, 0, 0, 0, 0, 0} // an empty SETTINGS frame
)

// open returns a ready session with n requests opened on streams 1, 3, ...
func open(t testing.TB, tm *Template, n int) *Session {
	t.Helper()
	s := NewSession(tm)
	for i := 0; i < n; i++ {
		s.Queue(uint32(i), 0, false)
	}
	if _, _, err := s.Parse(settings, nil); err != nil {
		t.Fatal(err)
	}
	out := s.Output()
	if !bytes.HasPrefix(out, []byte(http2.ClientPreface)) {
		t.Fatalf("output does not start with the preface")
	}
	if written, _ := s.Wrote(len(out)); written != n {
		t.Fatalf("wrote %d requests, want %d", written, n)
	}
	return s
}

func TestTemplateBlocks(t *testing.T) {
	tm := testTemplate(t, nil)
	if tm.first[0] != 0x20 || !bytes.Equal(tm.first[1:], tm.block) {
		t.Fatalf("first % x, block % x: want the block after a size update to 0", tm.first, tm.block)
	}
	// Decoded by one decoder, block after block: the same fields each
	// time (no dynamic-table reference).
	var got []string
	d := hpack.NewDecoder(4096, func(f hpack.HeaderField) { got = append(got, f.Name+": "+f.Value) })
	for i, b := range [][]byte{tm.first, tm.block, tm.block} {
		got = got[:0]
		if _, err := d.Write(b); err != nil {
			t.Fatal(err)
		}
		want := []string{":method: GET", ":scheme: http", ":authority: 127.0.0.1:8080", ":path: /plain", "user-agent: brk"}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("block %d decodes to %q", i, got)
		}
	}
}

func TestReadyAndCapacity(t *testing.T) {
	s := NewSession(testTemplate(t, nil))
	s.Queue(7, 0, false)
	if s.State().Ready || s.State().Capacity != 1 {
		t.Fatalf("ready %v, capacity %d before the peer's SETTINGS: want not ready, the logical first request", s.State().Ready, s.State().Capacity)
	}
	out := s.Output()
	if string(out) != string(s.t.preface) {
		t.Fatalf("a stream opened before SETTINGS: %d bytes", len(out))
	}
	f := newFrames()
	f.fr.WriteSettings(http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: 3})
	if _, _, err := s.Parse(f.Bytes(), nil); err != nil {
		t.Fatal(err)
	}
	if !s.State().Ready || s.State().Capacity != 3 || s.State().MaxStreams != 3 {
		t.Fatalf("ready %v capacity %d", s.State().Ready, s.State().Capacity)
	}
	// The SETTINGS ACK, then the request.
	out = s.Output()[len(s.t.preface):]
	if !bytes.HasPrefix(out, []byte{0, 0, 0, 0x4, 0x1, 0, 0, 0, 0}) {
		t.Fatalf("no SETTINGS ACK: % x", out[:9])
	}
	hdr := out[9:18]
	if hdr[3] != 0x1 || hdr[4] != flEndHeaders|flEndStream || hdr[8] != 1 || !bytes.Equal(out[18:], s.t.first) {
		t.Fatalf("HEADERS % x", out[9:])
	}
	// A lower limit applies at once.
	f.Reset()
	f.fr.WriteSettings(http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: 1})
	s.Parse(f.Bytes(), nil)
	if s.State().Capacity != 1 {
		t.Fatalf("capacity %d after the limit dropped to 1", s.State().Capacity)
	}
}

// A limit lowered and raised again in one read is kept as the lowest the
// peer set, across connections, until the reader sets it back.
func TestLowestMaxStreams(t *testing.T) {
	s := NewSession(testTemplate(t, nil))
	if c := s.State(); c.LowestMaxStreams != -1 || c.MaxStreams != -1 {
		t.Fatalf("before SETTINGS: %+v", *c)
	}
	f := newFrames()
	for _, v := range []uint32{1000, 2, 1000} {
		f.fr.WriteSettings(http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: v})
	}
	if _, _, err := s.Parse(f.Bytes(), nil); err != nil {
		t.Fatal(err)
	}
	if c := s.State(); c.MaxStreams != 1000 || c.LowestMaxStreams != 2 {
		t.Fatalf("after 1000, 2, 1000: %+v", *c)
	}
	s.Reset() // a new connection keeps the lowest so far
	if c := s.State(); c.MaxStreams != -1 || c.LowestMaxStreams != 2 {
		t.Fatalf("after Reset: %+v", *c)
	}
}

// parseCase is a server byte stream for a session with n open streams.
type parseCase struct {
	name    string
	streams int
	in      func(f *frames)
	want    []exchange.Completion
	err     string // substring of the error; "" for none
}

var parseCases = []parseCase{
	{"headers and data", 1, func(f *frames) {
		f.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block200CL, EndHeaders: true})
		f.fr.WriteData(1, true, []byte("ok"))
	}, []exchange.Completion{{Token: 0, Status: 200, BodyOK: true}}, ""},
	{"out of order", 2, func(f *frames) {
		f.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 3, BlockFragment: block200, EndHeaders: true, EndStream: true})
		f.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block200, EndHeaders: true, EndStream: true})
	}, []exchange.Completion{{Token: 1, Status: 200, BodyOK: true}, {Token: 0, Status: 200, BodyOK: true}}, ""},
	{"padding and priority", 1, func(f *frames) {
		f.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block200CL, EndHeaders: true, PadLength: 7,
			Priority: http2.PriorityParam{Weight: 10}})
		f.fr.WriteDataPadded(1, true, []byte("ok"), make([]byte, 30))
	}, []exchange.Completion{{Token: 0, Status: 200, BodyOK: true}}, ""},
	{"continuation", 1, func(f *frames) {
		f.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block200CL[:2]})
		f.fr.WriteContinuation(1, false, block200CL[2:3])
		f.fr.WriteContinuation(1, true, block200CL[3:])
		f.fr.WriteData(1, false, []byte("o"))
		f.fr.WriteData(1, true, []byte("k"))
	}, []exchange.Completion{{Token: 0, Status: 200, BodyOK: true}}, ""},
	{"interim and trailers", 1, func(f *frames) {
		f.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block103, EndHeaders: true})
		f.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block200, EndHeaders: true})
		f.fr.WriteData(1, false, []byte("ok"))
		f.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: []byte{0x40, 1, 'x', 1, 'y'}, EndHeaders: true, EndStream: true})
	}, []exchange.Completion{{Token: 0, Status: 200, BodyOK: true}}, ""},
	{"ping, window update, priority, unknown", 1, func(f *frames) {
		f.fr.WritePing(false, [8]byte{1})
		f.fr.WriteWindowUpdate(0, 100)
		f.fr.WriteWindowUpdate(1, 100)
		f.fr.WritePriority(1, http2.PriorityParam{Weight: 1})
		f.fr.WriteRawFrame(0xee, 0, 0, []byte("ext"))
		f.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block200, EndHeaders: true, EndStream: true})
	}, []exchange.Completion{{Token: 0, Status: 200, BodyOK: true}}, ""},
	{"server reset", 1, func(f *frames) {
		f.fr.WriteRSTStream(1, http2.ErrCodeInternal)
	}, []exchange.Completion{{Token: 0, Reset: true}}, ""},
	{"frame too large", 1, func(f *frames) {
		f.Write([]byte{0, 0x40, 0x01, 0, 0, 0, 0, 0, 1})
	}, nil, "FRAME_SIZE_ERROR"},
	{"data on idle stream", 1, func(f *frames) {
		f.fr.WriteData(5, true, []byte("x"))
	}, nil, "DATA on idle stream 5"},
	{"headers on stream 0", 1, func(f *frames) {
		f.Write([]byte{0, 0, 1, 1, 5, 0, 0, 0, 0, 0x88})
	}, nil, "HEADERS on stream 0"},
	{"push promise", 1, func(f *frames) {
		f.fr.WritePushPromise(http2.PushPromiseParam{StreamID: 1, PromiseID: 2, BlockFragment: block200, EndHeaders: true})
	}, nil, "PUSH_PROMISE"},
	{"data past content-length", 1, func(f *frames) {
		f.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block200CL, EndHeaders: true})
		f.fr.WriteData(1, true, []byte("okk"))
	}, nil, "DATA past content-length"},
	{"short body", 1, func(f *frames) {
		f.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block200CL, EndHeaders: true})
		f.fr.WriteData(1, true, []byte("o"))
	}, nil, "for content-length 2"},
	{"no status", 1, func(f *frames) {
		f.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: []byte{0x40, 1, 'x', 1, 'y'}, EndHeaders: true, EndStream: true})
	}, nil, "no :status"},
	{"invalid hpack", 1, func(f *frames) {
		f.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: []byte{0xff, 0xff, 0xff, 0xff, 0x7f}, EndHeaders: true})
	}, nil, "COMPRESSION_ERROR"},
	{"interleaved continuation", 2, func(f *frames) {
		f.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block200})
		f.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 3, BlockFragment: block200, EndHeaders: true})
	}, nil, "CONTINUATION of stream 1 was due"},
	{"connection window overflow", 1, func(f *frames) {
		f.fr.WriteWindowUpdate(0, 1<<31-1)
	}, nil, "FLOW_CONTROL_ERROR"},
	{"bad padding", 1, func(f *frames) {
		f.Write([]byte{0, 0, 2, 1, flPadded | flEndHeaders, 0, 0, 0, 1, 5, 0x88})
	}, nil, "padding longer"},
	{"ping of 4 bytes", 1, func(f *frames) {
		f.Write([]byte{0, 0, 4, 6, 0, 0, 0, 0, 0, 1, 2, 3, 4})
	}, nil, "FRAME_SIZE_ERROR"},
}

// parseAll feeds in to a fresh session in chunks cut at the given
// points and collects completions and the first error.
func parseAll(t testing.TB, streams int, in []byte, cuts []int) ([]exchange.Completion, error) {
	s := open(t, testTemplate(t, nil), streams)
	var got []exchange.Completion
	prev := 0
	cuts = append(cuts, len(in))
	for _, c := range cuts {
		b := in[prev:c]
		prev = c
		for len(b) > 0 {
			n, comps, err := s.Parse(b, make([]exchange.Completion, 0, 2))
			got = append(got, comps...)
			if err != nil {
				return got, err
			}
			if n == 0 && len(comps) == 0 {
				t.Fatalf("Parse made no progress")
			}
			b = b[n:]
		}
	}
	return got, nil
}

func TestParseTable(t *testing.T) {
	for _, c := range parseCases {
		t.Run(c.name, func(t *testing.T) {
			f := newFrames()
			c.in(f)
			in := f.Bytes()
			// Whole, byte by byte, and random splits agree.
			every := make([]int, 0, len(in))
			for i := 1; i < len(in); i++ {
				every = append(every, i)
			}
			r := rand.New(rand.NewPCG(1, uint64(len(in))))
			random := []int{}
			for i := 1; i < len(in); i++ {
				if r.IntN(5) == 0 {
					random = append(random, i)
				}
			}
			for _, cuts := range [][]int{nil, every, random} {
				got, err := parseAll(t, c.streams, in, cuts)
				if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
					t.Fatalf("cuts %d: err %v, want %q", len(cuts), err, c.err)
				}
				if !reflect.DeepEqual(got, c.want) {
					t.Fatalf("cuts %d: completions %+v, want %+v", len(cuts), got, c.want)
				}
			}
		})
	}
}

// TestCancelThenLateFrames: a reset stream's later HEADERS go through the
// decoder (its dynamic-table entry is used by the next block) and its DATA
// counts against the connection window, which is returned.
func TestCancelThenLateFrames(t *testing.T) {
	s := open(t, testTemplate(t, nil), 2)
	if !s.Cancel(0) {
		t.Fatal("Cancel returned false")
	}
	out := s.Output()
	if !bytes.Equal(out, []byte{0, 0, 4, 3, 0, 0, 0, 0, 1, 0, 0, 0, 8}) {
		t.Fatalf("output % x, want RST_STREAM(1, CANCEL)", out)
	}
	s.Wrote(len(out))
	if s.State().Resets != 1 || s.State().Capacity != 1<<31-1 && s.open != 1 {
		t.Fatalf("resets %d open %d", s.State().Resets, s.open)
	}
	f := newFrames()
	// Stream 1 (reset): a literal with incremental indexing adds "x: y"
	// to the dynamic table; stream 3 refers to it (index 62).
	f.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: []byte{0x88, 0x40, 1, 'x', 1, 'y'}, EndHeaders: true})
	big := make([]byte, maxFrame)
	for i := 0; i < connWindow/16/maxFrame+1; i++ {
		f.fr.WriteData(1, false, big)
	}
	f.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 3, BlockFragment: []byte{0x88, 0xbe}, EndHeaders: true, EndStream: true})
	_, comps, err := s.Parse(f.Bytes(), nil)
	if err != nil || len(comps) != 1 || comps[0].Token != 1 || comps[0].Status != 200 {
		t.Fatalf("comps %+v err %v", comps, err)
	}
	out = s.Output()
	if len(out) != 13 || out[3] != 0x8 || out[8] != 0 {
		t.Fatalf("no connection WINDOW_UPDATE: % x", out)
	}
}

// dataBytes sums the DATA payloads per stream in frames b.
func dataBytes(b []byte) map[uint32]int {
	n := map[uint32]int{}
	for len(b) >= 9 {
		l := int(b[0])<<16 | int(b[1])<<8 | int(b[2])
		if b[3] == ftData {
			n[uint32(b[5]&0x7f)<<24|uint32(b[6])<<16|uint32(b[7])<<8|uint32(b[8])] += l
		}
		b = b[9+l:]
	}
	return n
}

// TestUploadWithinWindows: a request is written (outstanding) once its
// HEADERS are; the bodies of several streams go out together, each within
// its stream window and all within the connection window, and resume on
// WINDOW_UPDATE.
func TestUploadWithinWindows(t *testing.T) {
	body := bytes.Repeat([]byte("b"), 25)
	s := NewSession(testTemplate(t, body))
	s.Queue(0, 0, false)
	s.Queue(1, 0, false)
	f := newFrames()
	f.fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 10})
	s.Parse(f.Bytes(), nil)
	out := s.Output()
	if written, _ := s.Wrote(len(out)); written != 2 {
		t.Fatalf("%d requests written: want both written with their HEADERS", written)
	}
	if got := dataBytes(out[len(s.t.preface):]); got[1] != 10 || got[3] != 10 {
		t.Fatalf("body bytes per stream %v in stream windows of 10: want 10 each", got)
	}
	step := func(id, inc uint32, want map[uint32]int) {
		t.Helper()
		f.Reset()
		f.fr.WriteWindowUpdate(id, inc)
		s.Parse(f.Bytes(), nil)
		out := s.Output()
		written, _ := s.Wrote(len(out))
		if got := dataBytes(out); !reflect.DeepEqual(got, want) || written != 0 {
			t.Fatalf("WINDOW_UPDATE(%d, %d): body bytes %v, %d new requests written; want %v and none", id, inc, got, written, want)
		}
	}
	step(1, 10, map[uint32]int{1: 10})
	step(1, 10, map[uint32]int{1: 5}) // its last DATA, END_STREAM
	step(3, 100, map[uint32]int{3: 15})
	if len(s.ups) != 0 {
		t.Fatalf("%d bodies left with every body out", len(s.ups))
	}
}

// TestUploadSharesWindows: a stream whose window is shut holds no other
// back (stream windows 0, the second one opened first), and bodies share
// the connection window in opening order.
func TestUploadSharesWindows(t *testing.T) {
	body := bytes.Repeat([]byte("b"), 40000)
	s := NewSession(testTemplate(t, body))
	for i := uint32(0); i < 3; i++ {
		s.Queue(i, 0, false)
	}
	f := newFrames()
	f.fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 0})
	s.Parse(f.Bytes(), nil)
	out := s.Output()
	if written, _ := s.Wrote(len(out)); written != 3 || s.open != 3 {
		t.Fatalf("%d written, %d open: want 3 streams open and written with windows shut", written, s.open)
	}
	if got := dataBytes(out[len(s.t.preface):]); len(got) != 0 || len(s.ups) != 3 {
		t.Fatalf("body bytes %v, %d bodies waiting, with every stream window 0", got, len(s.ups))
	}
	f.Reset()
	f.fr.WriteWindowUpdate(3, 1<<20)
	f.fr.WriteWindowUpdate(5, 1<<20)
	s.Parse(f.Bytes(), nil)
	out = s.Output()
	s.Wrote(len(out))
	// Stream 1's window stays shut; 3 takes its body, 5 the rest of the
	// connection's 65535.
	if got := dataBytes(out); got[1] != 0 || got[3] != 40000 || got[5] != 65535-40000 {
		t.Fatalf("body bytes %v: want 0, 40000, 25535", got)
	}
	f.Reset()
	f.fr.WriteWindowUpdate(0, 1<<20)
	f.fr.WriteWindowUpdate(1, 1<<20)
	s.Parse(f.Bytes(), nil)
	out = s.Output()
	if got := dataBytes(out); got[1] != 40000 || got[5] != 40000-(65535-40000) || len(s.ups) != 0 {
		t.Fatalf("body bytes %v, %d bodies left: want the rest of 1 and 5", got, len(s.ups))
	}
}

// TestStreamIDsRunOut: near 2^31−1 the capacity shrinks to the ids left;
// once they are used and answered the session sends GOAWAY and drains.
func TestStreamIDsRunOut(t *testing.T) {
	tm := testTemplate(t, nil)
	tm.FirstStreamID = maxStreamID - 4 // ids 2147483643, ...45, ...47
	s := NewSession(tm)
	s.Parse(settings, nil)
	if c := s.State().Capacity; c != 3 {
		t.Fatalf("capacity %d with 3 ids left", c)
	}
	for i := uint32(0); i < 3; i++ {
		s.Queue(i, 0, false)
	}
	s.Wrote(len(s.Output()))
	if s.State().Capacity != 0 || s.State().Drained {
		t.Fatalf("capacity %d drained %v with the ids used", s.State().Capacity, s.State().Drained)
	}
	f := newFrames()
	for id := uint32(maxStreamID - 4); id <= maxStreamID; id += 2 {
		f.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: block200, EndHeaders: true, EndStream: true})
	}
	_, comps, err := s.Parse(f.Bytes(), nil)
	if err != nil || len(comps) != 3 || !s.State().Drained {
		t.Fatalf("comps %d err %v drained %v", len(comps), err, s.State().Drained)
	}
}

// TestGoAwayUnprocessed: streams above the last stream id are
// unprocessed; the session drains once those at or below are answered.
func TestGoAwayUnprocessed(t *testing.T) {
	s := open(t, testTemplate(t, nil), 4) // streams 1, 3, 5, 7
	f := newFrames()
	f.fr.WriteGoAway(3, http2.ErrCodeNo, nil)
	s.Parse(f.Bytes(), nil)
	if !s.Unprocessed(2) || !s.Unprocessed(3) || s.Unprocessed(1) || s.State().Capacity != 0 || s.State().Drained {
		t.Fatalf("unprocessed %v, capacity %d", s.unproc, s.State().Capacity)
	}
	f.Reset()
	f.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block200, EndHeaders: true, EndStream: true})
	f.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 3, BlockFragment: block200, EndHeaders: true, EndStream: true})
	_, comps, err := s.Parse(f.Bytes(), nil)
	if err != nil || len(comps) != 2 || !s.State().Drained || s.State().GoAways != 1 {
		t.Fatalf("comps %+v err %v drained %v", comps, err, s.State().Drained)
	}
}

// TestFarewell: a protocol error leaves a GOAWAY with its code.
func TestFarewell(t *testing.T) {
	s := open(t, testTemplate(t, nil), 1)
	_, _, err := s.Parse([]byte{0, 0x40, 0x01, 0, 0, 0, 0, 0, 1}, nil)
	var e *Error
	if !errors.As(err, &e) || e.Code != http2.ErrCodeFrameSize {
		t.Fatalf("err %v", err)
	}
	fr := http2.NewFramer(nil, bytes.NewReader(s.Farewell()))
	g, err := fr.ReadFrame()
	if ga, ok := g.(*http2.GoAwayFrame); err != nil || !ok || ga.ErrCode != http2.ErrCodeFrameSize || ga.LastStreamID != 1 {
		t.Fatalf("farewell %v %v", g, err)
	}
}

// FuzzParse: the session reaches the same completions and error whether
// the server's bytes arrive whole or cut at arbitrary points.
func FuzzParse(f *testing.F) {
	for _, c := range parseCases {
		fr := newFrames()
		c.in(fr)
		f.Add(fr.Bytes(), uint64(7))
	}
	f.Fuzz(func(t *testing.T, in []byte, seed uint64) {
		whole, werr := parseAll(t, 3, in, nil)
		r := rand.New(rand.NewPCG(seed, 0))
		var cuts []int
		for i := 1; i < len(in); i++ {
			if r.IntN(4) == 0 {
				cuts = append(cuts, i)
			}
		}
		split, serr := parseAll(t, 3, in, cuts)
		if fmt.Sprint(werr) != fmt.Sprint(serr) || !reflect.DeepEqual(whole, split) {
			t.Fatalf("whole: %+v %v; split at %v: %+v %v", whole, werr, cuts, split, serr)
		}
	})
}

// TestStreamTable: random inserts and removals agree with a map.
func TestStreamTable(t *testing.T) {
	s := NewSession(testTemplate(t, nil))
	ref := map[uint32]uint32{}
	r := rand.New(rand.NewPCG(3, 4))
	next := uint32(1)
	for i := 0; i < 200000; i++ {
		if len(ref) == 0 || r.IntN(3) > 0 && len(ref) < 500 {
			st := s.insert(next)
			st.tok = next * 7
			s.open++
			ref[next] = next * 7
			next += 2 * uint32(1+r.IntN(3))
		} else {
			var victim uint32
			k := r.IntN(len(ref))
			for id := range ref {
				if k == 0 {
					victim = id
					break
				}
				k--
			}
			s.remove(victim)
			delete(ref, victim)
		}
		if i%997 == 0 {
			for id, tok := range ref {
				if st := s.lookup(id); st == nil || st.tok != tok {
					t.Fatalf("step %d: id %d lost", i, id)
				}
			}
			if s.lookup(next) != nil || s.open != len(ref) {
				t.Fatalf("step %d: open %d, want %d", i, s.open, len(ref))
			}
		}
	}
}

// TestGoAwayAfterRefusedStream: a GOAWAY after a refused stream (which
// already stopped new streams) still marks the streams above its last id
// unprocessed, so that they are replayed rather than failed when the
// server closes; those at or below it are awaited.
func TestGoAwayAfterRefusedStream(t *testing.T) {
	s := open(t, testTemplate(t, nil), 4) // streams 1, 3, 5, 7: tokens 0..3
	in := []byte{
		0, 0, 4, 0x3, 0, 0, 0, 0, 1, 0, 0, 0, 0x7, // RST_STREAM(1, REFUSED_STREAM)
		0, 0, 8, 0x7, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, // GOAWAY(last 3, NO_ERROR)
	}
	if _, comps, err := s.Parse(in, nil); err != nil || len(comps) != 0 {
		t.Fatalf("comps %+v err %v", comps, err)
	}
	for tok, want := range []bool{true, false, true, true} {
		if s.Unprocessed(uint32(tok)) != want {
			t.Errorf("token %d (stream %d): unprocessed %v, want %v", tok, 2*tok+1, !want, want)
		}
	}
	if s.State().Drained || s.State().Capacity != 0 {
		t.Fatalf("drained %v capacity %d with stream 3 awaited", s.State().Drained, s.State().Capacity)
	}
	_, comps, err := s.Parse([]byte{0, 0, 1, 0x1, flEndHeaders | flEndStream, 0, 0, 0, 3, 0x88}, nil)
	if err != nil || len(comps) != 1 || comps[0].Token != 1 || !s.State().Drained {
		t.Fatalf("comps %+v err %v drained %v", comps, err, s.State().Drained)
	}
}
