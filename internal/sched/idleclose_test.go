package sched

import (
	"context"
	"testing"
	"time"

	"github.com/brk-bench/brk/internal/conn"
	"github.com/brk-bench/brk/internal/exchange"
	"github.com/brk-bench/brk/internal/h1"
	"github.com/brk-bench/brk/internal/hostile"
	"github.com/brk-bench/brk/internal/judge"
	"github.com/brk-bench/brk/internal/metrics"
)

// What haproxy 2.6 writes, then closes, when a connection sat idle past
// its `timeout http-request` (captured from it).
const idle408 = "HTTP/1.1 408 Request Time-out\r\nContent-length: 110\r\nCache-Control: no-cache\r\n" +
	"Connection: close\r\nContent-Type: text/html\r\n\r\n" +
	"<html><body><h1>408 Request Time-out</h1>\nYour browser didn't send a complete request in time.\n</body></html>\n"

// byeAfter is a connection script: read reqs requests, write out in one
// write, then end the connection as haproxy does (its side first, then
// whatever the client still sends is read and dropped).
func byeAfter(c *hostile.Conn, reqs int, out string) {
	for range reqs {
		if _, err := c.ReadRequest(); err != nil {
			return
		}
	}
	if err := c.Write([]byte(out)); err != nil {
		return
	}
	c.CloseWrite()
	c.Discard()
}

// firstConn runs first on the server's first connection and
// hostile.Fixed(OKResponse) on every later one.
func firstConn(first hostile.Script) hostile.Script {
	ok := hostile.Fixed([]byte(hostile.OKResponse))
	return func(c *hostile.Conn, i int) {
		if i == 0 {
			first(c, i)
			return
		}
		ok(c, i)
	}
}

// idlePhase runs one requests-test phase of depth requests on one
// connection against script; replay is whether the method may be replayed
// after a close (false: as a POST).
func idlePhase(t *testing.T, script hostile.Script, depth int, replay bool) *metrics.Phase {
	t.Helper()
	srv := hostile.Start(t, script)
	addrs, err := conn.Resolve(srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	tpl, err := h1.NewTemplate(exchange.Request{Host: "127.0.0.1", Target: "/plain"}, []byte("ok"), true)
	if err != nil {
		t.Fatal(err)
	}
	e, err := Start(Config{
		Threads: 1, Conns: 1, Addr: addrs[0], Replay: replay, Timeout: 2 * time.Second,
		NewSession: func() Session { return h1.NewSession(tpl) },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	m, err := e.RunPhase(ctx, judge.PhaseSpec{Level: depth, Duration: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	s := m.Stats
	t.Logf("counts %+v; idle closes %d, replayed %d, 408s %d, setups %+v, protocol unattributed %d (%s)",
		s.Counts, s.IdleCloses, s.Replayed, s.Statuses[408], s.Setups, s.ProtocolUnattributed, s.ProtocolReason)
	return s
}

// TestIdleFarewellReplacesTheConnection: a 408 with Connection: close on
// a connection with nothing outstanding (here right behind the answer to
// its only written request) is the server's farewell: counted as an idle
// close, the connection replaced, no request failed and no protocol fault.
func TestIdleFarewellReplacesTheConnection(t *testing.T) {
	s := idlePhase(t, firstConn(func(c *hostile.Conn, _ int) {
		byeAfter(c, 1, hostile.OKResponse+idle408)
	}), 1, false)
	if s.IdleCloses != 1 || s.Counts.FailedTotal() != 0 || s.ProtocolUnattributed != 0 ||
		s.Counts.Succeeded < 2 || s.Counts.Succeeded != s.Counts.Attempted || s.Setups.Established < 2 {
		t.Fatalf("want one idle close, a second connection and every request a success")
	}
}

// TestCrossing408ReplayedOnce: a 408 with Connection: close answering the
// request just written on an idle connection (the idle timeout's race) is
// the server's idle close too: the request is replayed once on a new
// connection, whatever its method, and succeeds there.
func TestCrossing408ReplayedOnce(t *testing.T) {
	s := idlePhase(t, firstConn(func(c *hostile.Conn, _ int) {
		byeAfter(c, 1, idle408)
	}), 1, false)
	if s.IdleCloses != 1 || s.Replayed != 1 || s.Counts.FailedTotal() != 0 || s.Statuses[408] != 0 ||
		s.Counts.Succeeded == 0 || s.Counts.Succeeded != s.Counts.Attempted {
		t.Fatalf("want one idle close, its request replayed and every request a success")
	}
}

// TestSecond408IsAStatus: a server that answers 408 and closes on every
// connection: each request's first 408 is taken for the idle race and
// replayed, the replay's 408 is its status outcome.
func TestSecond408IsAStatus(t *testing.T) {
	s := idlePhase(t, func(c *hostile.Conn, _ int) { byeAfter(c, 1, idle408) }, 1, true)
	f := &s.Counts.Failed
	if s.Counts.Attempted == 0 || f[metrics.Status] != s.Counts.Attempted || s.Statuses[408] != s.Counts.Attempted ||
		s.IdleCloses != s.Counts.Attempted || s.Replayed != s.Counts.Attempted {
		t.Fatalf("want every request replayed once and then a status outcome")
	}
}

// TestBusy408IsAStatus: a 408 with Connection: close answering a request
// written while another was outstanding (a connection busy answering) is
// that request's status outcome, no idle close.
func TestBusy408IsAStatus(t *testing.T) {
	s := idlePhase(t, firstConn(func(c *hostile.Conn, _ int) {
		byeAfter(c, 2, hostile.OKResponse+idle408)
	}), 2, true)
	f := &s.Counts.Failed
	if f[metrics.Status] != 1 || s.Counts.FailedTotal() != 1 || s.Statuses[408] != 1 || s.IdleCloses != 0 || s.Counts.Succeeded == 0 {
		t.Fatalf("want the one 408 a status outcome and no idle close")
	}
}

// hangUp reads a request and ends the connection without a byte of its
// response: reset, a RST; else a FIN.
func hangUp(c *hostile.Conn, reset bool) {
	if _, err := c.ReadRequest(); err != nil {
		return
	}
	if reset {
		c.Reset()
	} else {
		c.Close()
	}
}

// answerThenHangUp is a connection script: answer one request, then hang
// up on the next: the idle timeout's race as a server that closes an idle
// connection without a 408 leaves it.
func answerThenHangUp(reset bool) hostile.Script {
	return func(c *hostile.Conn, _ int) {
		if _, err := c.ReadRequest(); err != nil {
			return
		}
		if err := c.Respond([]byte(hostile.OKResponse)); err != nil {
			return
		}
		hangUp(c, reset)
	}
}

// TestIdleRaceReplayedOnce: a reused connection that ends without a byte
// of the response to a GET written on it idle (reset or closed) lost the
// idle timeout's race: an idle close, the request replayed once on a new
// connection, where it succeeds; no request fails. A POST is not
// replayed: its loss is a transport failure. On a fresh connection the
// same hang-up is the server's failure: nothing replayed.
func TestIdleRaceReplayedOnce(t *testing.T) {
	for _, reset := range []bool{true, false} {
		name := map[bool]string{true: "reset", false: "closed"}[reset]
		t.Run(name+"/GET", func(t *testing.T) {
			s := idlePhase(t, firstConn(answerThenHangUp(reset)), 1, true)
			if s.IdleCloses != 1 || s.Replayed != 1 || s.Counts.FailedTotal() != 0 ||
				s.Counts.Succeeded < 2 || s.Counts.Succeeded != s.Counts.Attempted || s.Setups.Established < 2 {
				t.Fatalf("want one idle close, its request replayed and every request a success")
			}
		})
		t.Run(name+"/POST", func(t *testing.T) {
			s := idlePhase(t, firstConn(answerThenHangUp(reset)), 1, false)
			if s.IdleCloses != 0 || s.Replayed != 0 || s.Counts.Failed[metrics.Transport] != 1 || s.Counts.FailedTotal() != 1 {
				t.Fatalf("want the POST a transport failure, nothing replayed")
			}
		})
		t.Run(name+"/fresh connection", func(t *testing.T) {
			s := idlePhase(t, func(c *hostile.Conn, _ int) { hangUp(c, reset) }, 1, true)
			f := s.Counts.Failed[metrics.Transport]
			if s.IdleCloses != 0 || s.Replayed != 0 || f == 0 || s.Counts.Succeeded != 0 {
				t.Fatalf("want every request a transport failure, nothing replayed")
			}
		})
	}
}
