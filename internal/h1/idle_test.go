package h1

import (
	"testing"

	"github.com/brk-bench/brk/internal/exchange"
)

// What haproxy 2.6 writes, then closes, when a connection sat idle past
// its `timeout http-request` (captured from it).
const haproxy408 = "HTTP/1.1 408 Request Time-out\r\nContent-length: 110\r\nCache-Control: no-cache\r\n" +
	"Connection: close\r\nContent-Type: text/html\r\n\r\n" +
	"<html><body><h1>408 Request Time-out</h1>\nYour browser didn't send a complete request in time.\n</body></html>\n"

// feedSplit parses in as two reads cut at split (a read that the parser
// leaves unconsumed is offered again), and returns the completions and the
// first error.
func feedSplit(s exchange.Session, in []byte, split int) ([]exchange.Completion, error) {
	var all []exchange.Completion
	for _, b := range [][]byte{in[:split], in[split:]} {
		for len(b) > 0 {
			n, done, err := s.Parse(b, nil)
			all = append(all, done...)
			if err != nil {
				return all, err
			}
			if n == 0 && len(done) == 0 {
				break
			}
			b = b[n:]
		}
	}
	return all, nil
}

// idleSessions are the two HTTP/1.1 sessions, each with one request
// answered (the connection idle since), then optionally one more queued
// and not yet written.
func idleSessions(t *testing.T, queued bool) map[string]exchange.Session {
	t.Helper()
	ts, _, _ := mixTemplates(t)
	ss := map[string]exchange.Session{"one target": NewSession(testTemplate(t)), "a mix": NewSession(ts...)}
	for name, s := range ss {
		s.Queue(1, 0, false)
		s.Wrote(len(s.Output()))
		if got, err := feedSplit(s, []byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"), 0); err != nil || len(got) != 1 {
			t.Fatalf("%s: the first response: %+v %v", name, got, err)
		}
		if queued {
			s.Queue(2, 0, false)
		}
	}
	return ss
}

// TestFarewellOnIdleConnection: a response that answers no request and
// announces the close (an idle timeout's 408) is the server's farewell,
// exchange.ErrClosedIdle, at every split point, whether or not a request is
// queued behind it; it answers no request.
func TestFarewellOnIdleConnection(t *testing.T) {
	in := []byte(haproxy408)
	for _, queued := range []bool{false, true} {
		for split := 0; split <= len(in); split++ {
			for name, s := range idleSessions(t, queued) {
				got, err := feedSplit(s, in, split)
				if err != exchange.ErrClosedIdle || len(got) != 0 {
					t.Fatalf("%s, queued %v, split %d: %+v %v, want the farewell and no completion", name, queued, split, got, err)
				}
			}
		}
	}
}

// TestFarewellBeforeAnyRequest: the same on a connection that never
// carried a request (haproxy's 408 to a connection set up and left idle).
func TestFarewellBeforeAnyRequest(t *testing.T) {
	ts, _, _ := mixTemplates(t)
	for name, s := range map[string]exchange.Session{"one target": NewSession(testTemplate(t)), "a mix": NewSession(ts...)} {
		if got, err := feedSplit(s, []byte(haproxy408), 17); err != exchange.ErrClosedIdle || len(got) != 0 {
			t.Fatalf("%s: %+v %v", name, got, err)
		}
	}
}

// TestFarewellAfterHEAD: a farewell after a HEAD request's response has
// its body parsed (it answers no HEAD request), not left as garbage.
func TestFarewellAfterHEAD(t *testing.T) {
	tpl, err := NewTemplate(exchange.Request{Method: "HEAD", Host: "h", Target: "/x"}, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	s := NewSession(tpl)
	s.Queue(0, 0, false)
	s.Wrote(len(s.Output()))
	if got := parseAll(t, s, []byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n")); len(got) != 1 {
		t.Fatalf("HEAD response: %+v", got)
	}
	n, _, err := s.Parse([]byte(haproxy408), nil)
	if err != exchange.ErrClosedIdle || n != len(haproxy408) {
		t.Fatalf("farewell after HEAD: %d of %d bytes, %v", n, len(haproxy408), err)
	}
}

// TestFarewellClosedByEOF: a close-delimited response to nothing ends at
// the close: a farewell too; one cut short is the parser's error.
func TestFarewellClosedByEOF(t *testing.T) {
	for name, s := range idleSessions(t, false) {
		if _, err := feedSplit(s, []byte("HTTP/1.1 408 Request Timeout\r\n\r\nbye"), 0); err != nil {
			t.Fatalf("%s: a close-delimited stray so far: %v", name, err)
		}
		if done, err := s.EOF(nil); err != exchange.ErrClosedIdle || len(done) != 0 {
			t.Fatalf("%s: EOF: %+v %v", name, done, err)
		}
	}
	for name, s := range idleSessions(t, false) {
		feedSplit(s, []byte("HTTP/1.1 408 Request Timeout\r\nContent-Length: 9\r\n\r\nby"), 0)
		if done, err := s.EOF(nil); err != ErrTruncated || len(done) != 0 {
			t.Fatalf("%s: truncated stray at EOF: %+v %v", name, done, err)
		}
	}
}

// TestStrayWithoutCloseIsUnsolicited: a whole response to nothing that
// keeps the connection, or bytes that are no response, are unsolicited,
// at every split point.
func TestStrayWithoutCloseIsUnsolicited(t *testing.T) {
	for _, in := range []string{
		"HTTP/1.1 408 Request Time-out\r\nContent-Length: 0\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
		"hello\r\n",
	} {
		for split := 0; split <= len(in); split++ {
			for name, s := range idleSessions(t, true) {
				if got, err := feedSplit(s, []byte(in), split); err != ErrUnsolicited || len(got) != 0 {
					t.Fatalf("%s, %q split %d: %+v %v, want unsolicited", name, in, split, got, err)
				}
			}
		}
	}
}

// TestCrossing408AnswersTheWrittenRequest: a 408 that arrives after a
// request was written on the idle connection (the idle timeout's race)
// answers that request, closing: the session reports it as the request's
// completion and the worker decides (it replays it once); the same holds
// for a 408 answering the second of two pipelined requests (a busy
// connection: the worker makes it a status outcome).
func TestCrossing408AnswersTheWrittenRequest(t *testing.T) {
	in := []byte(haproxy408)
	for split := 0; split <= len(in); split++ {
		for name, s := range idleSessions(t, true) {
			s.Wrote(len(s.Output()))
			got, err := feedSplit(s, in, split)
			want := exchange.Completion{Status: 408, BodyOK: true, Closing: true}
			if err != nil || len(got) != 1 || got[0].Status != 408 || !got[0].Closing {
				t.Fatalf("%s split %d: %+v %v, want %+v", name, split, got, err, want)
			}
		}
	}
	for name, s := range idleSessions(t, false) {
		s.Queue(2, 0, false)
		s.Queue(3, 0, false)
		s.Wrote(len(s.Output()))
		got, err := feedSplit(s, []byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"+haproxy408), 0)
		if err != nil || len(got) != 2 || got[0].Status != 200 || got[1].Status != 408 || !got[1].Closing {
			t.Fatalf("%s: busy connection: %+v %v", name, got, err)
		}
	}
}

// TestMixQueueDuringFarewell: a request queued while a farewell is half
// read does not restart its parse.
func TestMixQueueDuringFarewell(t *testing.T) {
	ts, _, _ := mixTemplates(t)
	s := NewSession(ts...)
	if n, _, err := s.Parse([]byte(haproxy408[:40]), nil); err != nil || n != 40 {
		t.Fatalf("half a farewell: %d %v", n, err)
	}
	s.Queue(0, 1, false) // a HEAD
	if _, _, err := s.Parse([]byte(haproxy408[40:]), nil); err != exchange.ErrClosedIdle {
		t.Fatalf("rest of the farewell: %v", err)
	}
}
