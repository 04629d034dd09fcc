package h2

import (
	"bytes"
	"strconv"
	"testing"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/brk-bench/brk/internal/exchange"
)

func mixTemplates16(tb testing.TB) []*Template {
	tb.Helper()
	var ts []*Template
	for i := range 16 {
		var body []byte
		if i%4 == 3 {
			body = []byte("body " + strconv.Itoa(i))
		}
		tm, err := NewTemplate(exchange.Request{Host: "127.0.0.1:8080", Target: "/t/" + strconv.Itoa(i), Body: body}, "http", nil, false)
		if err != nil {
			tb.Fatal(err)
		}
		ts = append(ts, tm)
	}
	return ts
}

// TestSessionMixStreamsCarryTheirTargets: each queued request opens a
// stream with its own target's header block and body, whatever the order,
// the first on the connection with the table size update.
func TestSessionMixStreamsCarryTheirTargets(t *testing.T) {
	ts := mixTemplates16(t)
	s := NewSession(ts...)
	order := []int{5, 3, 3, 0, 15, 7}
	for i, tg := range order {
		s.Queue(uint32(i), tg, false)
	}
	if _, _, err := s.Parse(settings, nil); err != nil {
		t.Fatal(err)
	}
	out := bytes.TrimPrefix(s.Output(), []byte(http2.ClientPreface))
	fr := http2.NewFramer(nil, bytes.NewReader(out))
	dec := hpack.NewDecoder(4096, nil)
	paths := map[uint32]string{}
	bodies := map[uint32]string{}
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			break
		}
		switch f := f.(type) {
		case *http2.HeadersFrame:
			fields, err := dec.DecodeFull(f.HeaderBlockFragment())
			if err != nil {
				t.Fatal(err)
			}
			for _, hf := range fields {
				if hf.Name == ":path" {
					paths[f.StreamID] = hf.Value
				}
			}
		case *http2.DataFrame:
			bodies[f.StreamID] += string(f.Data())
		}
	}
	for i, tg := range order {
		id := uint32(2*i + 1)
		if want := "/t/" + strconv.Itoa(tg); paths[id] != want {
			t.Errorf("stream %d: path %q, want %q", id, paths[id], want)
		}
		if want := string(ts[tg].body); bodies[id] != want {
			t.Errorf("stream %d: body %q, want %q", id, bodies[id], want)
		}
	}
}

// BenchmarkSessionCycleMix is BenchmarkSessionCycle at depth 100 with a
// 16-target mix (every fourth with a body): 0 allocs/op.
func BenchmarkSessionCycleMix(b *testing.B) {
	ts := mixTemplates16(b)
	s := NewSession(ts...)
	const depth = 100
	for i := range depth {
		s.Queue(uint32(i), i%16, false)
	}
	if _, _, err := s.Parse(settings, nil); err != nil {
		b.Fatal(err)
	}
	s.Wrote(len(s.Output()))
	f := newFrames()
	f.fr.WriteHeaders(http2HeadersParam(1))
	f.fr.WriteData(1, true, []byte("ok"))
	resp := append([]byte(nil), f.Bytes()...)
	hl := 9 + len(block200CL)
	setID := func(id uint32) {
		for _, off := range []int{5, hl + 5} {
			resp[off], resp[off+1], resp[off+2], resp[off+3] = byte(id>>24), byte(id>>16), byte(id>>8), byte(id)
		}
	}
	done := make([]exchange.Completion, 0, 16)
	next, tok := uint32(1), uint32(depth)
	b.ReportAllocs()
	for b.Loop() {
		setID(next)
		next += 2
		in := resp
		for len(in) > 0 {
			n, comps, err := s.Parse(in, done[:0])
			if err != nil {
				b.Fatal(err)
			}
			in = in[n:]
			if len(comps) > 0 && comps[0].Status != 200 {
				b.Fatal(comps)
			}
		}
		s.Queue(tok, int(tok)%16, false)
		tok++
		if n, _ := s.Wrote(len(s.Output())); n != 1 {
			b.Fatal("request not written")
		}
	}
}
