package h1

import (
	"strings"
	"testing"

	"github.com/brk-bench/brk/internal/exchange"
)

func testTemplate(t *testing.T) *Template {
	t.Helper()
	tpl, err := NewTemplate(exchange.Request{Host: "h", Target: "/x"}, []byte("ok"), true)
	if err != nil {
		t.Fatal(err)
	}
	return tpl
}

const (
	wantReq   = "GET /x HTTP/1.1\r\nHost: h\r\nUser-Agent: brk\r\n\r\n"
	wantClose = "GET /x HTTP/1.1\r\nHost: h\r\nUser-Agent: brk\r\nConnection: close\r\n\r\n"
)

// drain writes a session's output k bytes at a time, as a socket taking
// k bytes per write would, and returns what went out and how many requests
// each write completed.
func drain(s *Session, k int) (string, []int) {
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
		n, _ := s.Wrote(len(b))
		done = append(done, n)
	}
}

func TestSessionWritesQueuedRequestsAtAnySplit(t *testing.T) {
	tpl := testTemplate(t)
	for k := 1; k <= 3*len(wantReq)+len(wantClose); k++ {
		s := NewSession(tpl)
		s.Queue(10, 0, false)
		s.Queue(11, 0, false)
		s.Queue(12, 0, false)
		s.Queue(13, 0, true)
		out, done := drain(s, k)
		if want := strings.Repeat(wantReq, 3) + wantClose; out != want {
			t.Fatalf("k=%d: wrote %q, want %q", k, out, want)
		}
		// Each request completes exactly once.
		if total(done) != 4 {
			t.Fatalf("k=%d: writes completed %v requests, want 4 in all", k, done)
		}
	}
}

func TestSessionResetForgetsQueueAndPartial(t *testing.T) {
	s := NewSession(testTemplate(t))
	s.Queue(0, 0, false)
	s.Queue(1, 0, false)
	if n, _ := s.Wrote(5); n != 0 {
		t.Fatal("5 bytes completed a request")
	}
	s.Parse([]byte("HTTP/1.1 200 OK\r\nContent-Le"), nil)
	s.Reset()
	if len(s.Output()) != 0 {
		t.Fatal("output after Reset")
	}
	s.Queue(7, 0, false)
	if out, _ := drain(s, 1<<20); out != wantReq {
		t.Fatalf("after Reset wrote %q", out)
	}
	n, done, err := s.Parse([]byte("HTTP/1.1 204 No Content\r\n\r\n"), nil)
	if err != nil || len(done) != 1 || n != 27 || done[0].Status != 204 {
		t.Fatalf("parse after Reset: n=%d done=%+v err=%v", n, done, err)
	}
}

// parseAll feeds in to s and returns every completion.
func parseAll(t *testing.T, s *Session, in []byte) []exchange.Completion {
	t.Helper()
	var all []exchange.Completion
	for len(in) > 0 {
		n, done, err := s.Parse(in, nil)
		if err != nil {
			t.Fatal(err)
		}
		in = in[n:]
		all = append(all, done...)
	}
	return all
}

func TestSessionResponses(t *testing.T) {
	s := NewSession(testTemplate(t))
	for tok := uint32(0); tok < 5; tok++ {
		s.Queue(tok, 0, false)
	}
	drain(s, 1<<20)
	all := parseAll(t, s, []byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"+
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nno"+
		"HTTP/1.1 500 Oops\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok"))
	want := []exchange.Completion{{Status: 200, BodyOK: true, Closing: false}, {Status: 200, BodyOK: false, Closing: false}, {Status: 500, BodyOK: true, Closing: true}}
	if len(all) != 3 || !same(all[0], want[0]) || !same(all[1], want[1]) || !same(all[2], want[2]) {
		t.Fatalf("responses %+v, want %+v", all, want)
	}
	if string(all[1].Sample) != "no" || all[0].Sample != nil {
		t.Fatalf("samples %q %q: want the failed body's bytes only", all[0].Sample, all[1].Sample)
	}
	// A close-delimited body ends at EOF; EOF before any byte is no response.
	if done, err := s.EOF(nil); len(done) != 0 || err != nil {
		t.Fatalf("EOF between responses: %v %v", done, err)
	}
	s.Parse([]byte("HTTP/1.1 200 OK\r\n\r\no"), nil)
	s.Parse([]byte("k"), nil)
	if done, err := s.EOF(nil); len(done) != 1 || err != nil || !same(done[0], exchange.Completion{Status: 200, BodyOK: true, Closing: true}) {
		t.Fatalf("close-delimited: %+v %v", done, err)
	}
	s.Parse([]byte("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nok"), nil)
	if _, err := s.EOF(nil); err != ErrTruncated {
		t.Fatalf("truncated: %v", err)
	}
}

func TestSessionRefusesUnsolicitedResponses(t *testing.T) {
	resp := []byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
	s := NewSession(testTemplate(t))
	if _, _, err := s.Parse(resp, nil); err != ErrUnsolicited {
		t.Fatalf("a response before any request: %v", err)
	}
	s = NewSession(testTemplate(t))
	s.Queue(0, 0, false)
	if _, _, err := s.Parse(resp, nil); err != ErrUnsolicited {
		t.Fatalf("a response to a request not yet sent: %v", err)
	}
	// An error ends the connection: the next one starts afresh.
	s.Reset()
	s.Queue(0, 0, false)
	drain(s, 1<<20)
	if got := parseAll(t, s, resp); len(got) != 1 || got[0].Status != 200 {
		t.Fatalf("response: %+v", got)
	}
	if _, _, err := s.Parse(resp, nil); err != ErrUnsolicited {
		t.Fatalf("more responses than requests: %v", err)
	}
}

// A server may answer a request before it has read all of it (413 to a
// large upload): the response answers the request being written, its
// writing stops, and the connection ends after it.
func TestSessionEarlyResponse(t *testing.T) {
	tpl, err := NewTemplate(exchange.Request{Method: "POST", Host: "h", Target: "/up", Body: make([]byte, 1000)}, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	s := NewSession(tpl)
	s.Queue(4, 0, false)
	s.Queue(5, 0, false)
	if n, _ := s.Wrote(len(tpl.Request())); n != 1 {
		t.Fatalf("first request's bytes completed %d requests, want 1", n)
	}
	s.Wrote(100) // the second is half written
	got := parseAll(t, s, []byte("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"+
		"HTTP/1.1 413 Content Too Large\r\nContent-Length: 0\r\n\r\n"))
	want := []exchange.Completion{{Status: 200, BodyOK: true, Closing: false}, {Status: 413, BodyOK: true, Closing: true}}
	if len(got) != 2 || !same(got[0], want[0]) || !same(got[1], want[1]) {
		t.Fatalf("completions %+v, want %+v", got, want)
	}
	if out := s.Output(); len(out) != 0 {
		t.Fatalf("still writing %d bytes of an answered request", len(out))
	}
}

func TestSessionZeroAllocs(t *testing.T) {
	s := NewSession(testTemplate(t))
	resp := []byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
	done := make([]exchange.Completion, 0, 4)
	var tok uint32
	allocs := testing.AllocsPerRun(1000, func() {
		s.Queue(tok, 0, false)
		tok++
		s.Wrote(len(s.Output()))
		s.Parse(resp, done[:0])
	})
	if allocs != 0 {
		t.Fatalf("%v allocs per request", allocs)
	}
}

// A large body is written from the caller's one copy after each head: the
// bytes are the same as a whole encoding's, at any split, and no session
// holds a copy of the body.
func TestSessionLargeBodyFromOneCopy(t *testing.T) {
	body := []byte(strings.Repeat("0123456789abcdef", 2048)) // 32 KiB
	req := exchange.Request{Method: "PUT", Host: "h", Target: "/up", Body: body}
	tpl, err := NewTemplate(req, body, true)
	if err != nil {
		t.Fatal(err)
	}
	one, _ := Encode(&req, false)
	closing, _ := Encode(&req, true)
	want := strings.Repeat(string(one), 2) + string(closing)
	for _, k := range []int{1, 7, 1000, len(one) - 1, len(one), len(one) + 1, 1 << 20} {
		s := NewSession(tpl)
		s.Queue(0, 0, false)
		s.Queue(1, 0, false)
		s.Queue(2, 0, true)
		sawBody := false
		var out strings.Builder
		var counts []int
		for {
			b := s.Output()
			if len(b) == 0 {
				break
			}
			if len(b) > k {
				b = b[:k]
			}
			if &b[len(b)-1] == &body[len(body)-1] {
				sawBody = true // the slice is the caller's body itself
			}
			out.Write(b)
			if n, _ := s.Wrote(len(b)); n > 0 {
				counts = append(counts, n)
			}
		}
		if out.String() != want {
			t.Fatalf("k=%d: wrote %d bytes, want %d, or different bytes", k, out.Len(), len(want))
		}
		if total(counts) != 3 || !sawBody {
			t.Fatalf("k=%d: writes completed %v requests (want 3 in all), body aliased %v", k, counts, sawBody)
		}
	}
}

// same compares completions but for their body samples. A pipeline's
// completion names no request (exchange.Completion): its place in the
// order is what the tests check.
func same(a, b exchange.Completion) bool {
	return a.Token == b.Token && a.Status == b.Status && a.BodyOK == b.BodyOK && a.Closing == b.Closing
}

// total is the sum of ns.
func total(ns []int) int {
	n := 0
	for _, k := range ns {
		n += k
	}
	return n
}
