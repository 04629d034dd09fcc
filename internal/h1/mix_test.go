package h1

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/brk-bench/brk/internal/exchange"
)

// mixTemplates are a mix's targets: a GET, a HEAD, a POST with a small
// body, and a POST whose body is above inlineBody (written from its one
// copy after its head).
func mixTemplates(t testing.TB) ([]*Template, []string, []string) {
	t.Helper()
	large := bytes.Repeat([]byte("L"), inlineBody+100)
	reqs := []exchange.Request{
		{Host: "h", Target: "/a"},
		{Host: "h", Target: "/head", Method: "HEAD"},
		{Host: "h", Target: "/post", Body: []byte("small body")},
		{Host: "h", Target: "/large", Body: large},
	}
	var ts []*Template
	var one, closing []string
	for _, r := range reqs {
		tpl, err := NewTemplate(r, nil, false)
		if err != nil {
			t.Fatal(err)
		}
		ts = append(ts, tpl)
		a, _ := Encode(&r, false)
		b, _ := Encode(&r, true)
		one, closing = append(one, string(a)), append(closing, string(b))
	}
	return ts, one, closing
}

func drainMix(s *Session, k int) (string, []int) {
	var out strings.Builder
	var done []int
	for {
		b := s.Output()
		if len(b) == 0 {
			return out.String(), done
		}
		if len(b) > k {
			b = b[:k]
		}
		out.Write(b)
		if n, _ := s.Wrote(len(b)); n > 0 {
			done = append(done, n)
		}
	}
}

// TestSessionMixWritesEachTargetsBytes: queued requests of different
// targets go out back to back, each its own template's bytes (the last
// its closing variant), at any write split, each request completed
// once.
func TestSessionMixWritesEachTargetsBytes(t *testing.T) {
	ts, one, closing := mixTemplates(t)
	order := []int{0, 2, 1, 0, 3, 2, 2, 0}
	want := ""
	for i, tg := range order {
		if i == len(order)-1 {
			want += closing[tg]
		} else {
			want += one[tg]
		}
	}
	for _, k := range []int{1, 7, 100, 4096, 1 << 20} {
		s := NewSession(ts...)
		for i, tg := range order {
			s.Queue(uint32(100+i), tg, i == len(order)-1)
		}
		out, done := drainMix(s, k)
		if out != want {
			t.Fatalf("k=%d: wrote %d bytes, want %d (first difference at %d)", k, len(out), len(want), firstDiff(out, want))
		}
		if n := total(done); n != len(order) {
			t.Fatalf("k=%d: writes completed %v requests, %d in all, want %d", k, done, n, len(order))
		}
	}
}

func firstDiff(a, b string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestSessionMixParsesPerTarget: each response is parsed as an answer to
// its own request: a HEAD response's Content-Length announces no body, and
// each target's body expectation is its own.
func TestSessionMixParsesPerTarget(t *testing.T) {
	a, _ := NewTemplate(exchange.Request{Host: "h", Target: "/a"}, []byte("aa"), true)
	hd, _ := NewTemplate(exchange.Request{Host: "h", Target: "/h", Method: "HEAD"}, nil, false)
	b, _ := NewTemplate(exchange.Request{Host: "h", Target: "/b"}, []byte("bbb"), true)
	s := NewSession(a, hd, b)
	for i, tg := range []int{0, 1, 2, 2} {
		s.Queue(uint32(i), tg, false)
	}
	drainMix(s, 1<<20)
	in := "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\naa" +
		"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n" + // HEAD: no body follows
		"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nbbb" +
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\naa" // /b's expectation is bbb
	var got []exchange.Completion
	buf := []byte(in)
	for len(buf) > 0 {
		n, c, err := s.Parse(buf, nil)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, c...)
		buf = buf[n:]
	}
	if len(got) != 4 {
		t.Fatalf("%d completions", len(got))
	}
	for i, ok := range []bool{true, true, true, false} {
		if got[i].Status != 200 || got[i].BodyOK != ok {
			t.Errorf("completion %d: %+v, want body ok %v", i, got[i], ok)
		}
	}
	if _, _, err := s.Parse([]byte("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"), nil); err != ErrUnsolicited {
		t.Errorf("a response to nothing: %v", err)
	}
}

// TestSessionMixEarlyResponse: a response to a request still being
// written ends the connection after it, as for one target.
func TestSessionMixEarlyResponse(t *testing.T) {
	ts, _, _ := mixTemplates(t)
	s := NewSession(ts...)
	s.Queue(1, 3, false)
	s.Queue(2, 0, false)
	b := s.Output()
	s.Wrote(len(b) / 2)
	n, c, err := s.Parse([]byte("HTTP/1.1 413 Too Large\r\nContent-Length: 0\r\n\r\n"), nil)
	if err != nil || n == 0 || len(c) != 1 || !c[0].Closing || c[0].Status != 413 {
		t.Fatalf("early response: %d %+v %v", n, c, err)
	}
	if out := s.Output(); out != nil {
		t.Errorf("still writing %d bytes after an early response", len(out))
	}
}

// BenchmarkSessionMixCycle: one request and its response per iteration
// through a Session of 16 targets at depth 16 (the output coalesces
// whole requests of different targets): 0 allocs/op.
func BenchmarkSessionMixCycle(b *testing.B) {
	var ts []*Template
	for i := range 16 {
		tpl, err := NewTemplate(exchange.Request{Host: "127.0.0.1:8080", Target: "/t/" + strconv.Itoa(i)}, []byte("ok"), true)
		if err != nil {
			b.Fatal(err)
		}
		ts = append(ts, tpl)
	}
	s := NewSession(ts...)
	const depth = 16
	tok := uint32(0)
	for ; tok < depth; tok++ {
		s.Queue(tok, int(tok)%16, false)
	}
	s.Wrote(len(s.Output()))
	resp := []byte(smallResp)
	done := make([]exchange.Completion, 0, 4)
	b.ReportAllocs()
	for b.Loop() {
		n, c, err := s.Parse(resp, done[:0])
		if err != nil || n != len(resp) || len(c) != 1 || !c[0].BodyOK {
			b.Fatalf("parse: %d %v %v", n, c, err)
		}
		s.Queue(tok, int(tok)%16, false)
		tok++
		if n, _ := s.Wrote(len(s.Output())); n != 1 {
			b.Fatal("not written")
		}
	}
}

// TestSessionRunsFromTheTemplate: a run of queued small requests of one
// target is written from that template's shared buffer, without a copy,
// whether the session has one target or a mix: when the run is all that
// is queued, or is followed by the closing request. Only requests of
// different targets back to back are copied into the session's own
// buffer, which a session of one target therefore never allocates (its
// memory per connection stays that of the template's shared bytes).
func TestSessionRunsFromTheTemplate(t *testing.T) {
	ts, one, closing := mixTemplates(t)
	shared := func(b []byte, tpl *Template) bool {
		return len(b) > 0 && &b[0] == &tpl.repeated[0]
	}
	single := NewSession(ts[0])
	for i := range 5 {
		single.Queue(uint32(i), 0, i == 4)
	}
	if b := single.Output(); !shared(b, ts[0]) || string(b) != strings.Repeat(one[0], 4) {
		t.Fatalf("one target: %d bytes, shared %v; want its 4 requests from the template", len(b), shared(b, ts[0]))
	}
	if out, _ := drainMix(single, 1<<20); out != strings.Repeat(one[0], 4)+closing[0] {
		t.Fatalf("one target wrote %q", out)
	}
	if single.buf != nil {
		t.Errorf("a session of one target allocated %d bytes of its own", cap(single.buf))
	}

	mixed := NewSession(ts...)
	for i, tg := range []int{2, 2, 2, 0, 0} {
		mixed.Queue(uint32(i), tg, false)
	}
	b := mixed.Output() // 2,2,2 then 0: copied, one write
	if shared(b, ts[2]) || string(b) != strings.Repeat(one[2], 3)+strings.Repeat(one[0], 2) {
		t.Fatalf("a mix: %q", b)
	}
	mixed.Wrote(3 * len(one[2]))
	if b := mixed.Output(); !shared(b, ts[0]) || string(b) != strings.Repeat(one[0], 2) {
		t.Fatalf("a mix's run of target 0: %q, shared %v", b, shared(b, ts[0]))
	}
}
