package h1

import (
	"strings"
	"testing"
)

func testTemplate(t *testing.T) *Template {
	t.Helper()
	tpl, err := NewTemplate(Request{Host: "h", Target: "/x"}, []byte("ok"), true)
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
		done = append(done, s.Wrote(len(b)))
	}
}

func TestSessionWritesQueuedRequestsAtAnySplit(t *testing.T) {
	tpl := testTemplate(t)
	for k := 1; k <= 3*len(wantReq)+len(wantClose); k++ {
		s := NewSession(tpl)
		s.Queue(false)
		s.Queue(false)
		s.Queue(false)
		s.Queue(true)
		out, done := drain(s, k)
		if want := strings.Repeat(wantReq, 3) + wantClose; out != want {
			t.Fatalf("k=%d: wrote %q, want %q", k, out, want)
		}
		total := 0
		for _, d := range done {
			total += d
		}
		if total != 4 {
			t.Fatalf("k=%d: %v requests completed, want 4 in all", k, done)
		}
	}
}

func TestSessionResetForgetsQueueAndPartial(t *testing.T) {
	s := NewSession(testTemplate(t))
	s.Queue(false)
	s.Queue(false)
	if got := s.Wrote(5); got != 0 {
		t.Fatalf("5 bytes completed %d requests", got)
	}
	s.Parse([]byte("HTTP/1.1 200 OK\r\nContent-Le"))
	s.Reset()
	if len(s.Output()) != 0 {
		t.Fatal("output after Reset")
	}
	s.Queue(false)
	if out, _ := drain(s, 1<<20); out != wantReq {
		t.Fatalf("after Reset wrote %q", out)
	}
	n, done, err := s.Parse([]byte("HTTP/1.1 204 No Content\r\n\r\n"))
	if err != nil || !done || n != 27 || s.Status() != 204 {
		t.Fatalf("parse after Reset: n=%d done=%v err=%v status=%d", n, done, err, s.Status())
	}
}

func TestSessionResponses(t *testing.T) {
	s := NewSession(testTemplate(t))
	in := []byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok" +
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nno" +
		"HTTP/1.1 500 Oops\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok")
	type got struct {
		status          int
		body, closeConn bool
	}
	var all []got
	for len(in) > 0 {
		n, done, err := s.Parse(in)
		if err != nil {
			t.Fatal(err)
		}
		in = in[n:]
		if done {
			all = append(all, got{s.Status(), s.BodyOK(), s.Closing()})
		}
	}
	want := []got{{200, true, false}, {200, false, false}, {500, true, true}}
	if len(all) != 3 || all[0] != want[0] || all[1] != want[1] || all[2] != want[2] {
		t.Fatalf("responses %+v, want %+v", all, want)
	}
	// A close-delimited body ends at EOF; EOF before any byte is no response.
	if done, err := s.EOF(); done || err != nil {
		t.Fatalf("EOF between responses: %v %v", done, err)
	}
	s.Parse([]byte("HTTP/1.1 200 OK\r\n\r\no"))
	s.Parse([]byte("k"))
	if done, err := s.EOF(); !done || err != nil || !s.BodyOK() || !s.Closing() {
		t.Fatalf("close-delimited: %v %v body %v closing %v", done, err, s.BodyOK(), s.Closing())
	}
	s.Parse([]byte("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nok"))
	if _, err := s.EOF(); err != ErrTruncated {
		t.Fatalf("truncated: %v", err)
	}
}

func TestSessionZeroAllocs(t *testing.T) {
	s := NewSession(testTemplate(t))
	resp := []byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
	allocs := testing.AllocsPerRun(1000, func() {
		s.Queue(false)
		s.Wrote(len(s.Output()))
		s.Parse(resp)
	})
	if allocs != 0 {
		t.Fatalf("%v allocs per request", allocs)
	}
}
