package brk_test

import (
	"bytes"
	"testing"
	"time"

	"brk"
	"brk/internal/hostile"
)

// TestDrippedResponse: a response that arrives one byte at a time is
// parsed across every split and succeeds within its deadline.
func TestDrippedResponse(t *testing.T) {
	resp := []byte("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok")
	srv := hostile.Start(t, func(c *hostile.Conn, _ int) {
		for {
			if _, err := c.ReadRequest(); err != nil {
				return
			}
			if err := c.Drip(resp, 200*time.Microsecond); err != nil {
				return
			}
		}
	})
	target := hostileTarget(srv)
	target.ExpectBody = []byte("ok")
	res := runBrk(t, target, shortPlan(2, 1, 300*time.Millisecond))
	checkAccounting(t, res)
	c := total(res)
	if res.Verdict != brk.VerdictDone || c.Succeeded == 0 || c.Succeeded != c.Attempted {
		t.Fatalf("dripped: %s", describe(res))
	}
	if st := serverStats(srv, c.Succeeded); uint64(st.Requests) < c.Succeeded {
		t.Fatalf("server read %d requests, brk succeeded %d", st.Requests, c.Succeeded)
	}
}

// TestServerNeverReads: a server that accepts and never reads fills the
// socket buffers with a large POST; the writes block, the requests time
// out, the connection is replaced, and the run ends (no hang).
func TestServerNeverReads(t *testing.T) {
	srv := hostile.Start(t, hostile.NoRead())
	target := hostileTarget(srv)
	target.Body = bytes.Repeat([]byte("x"), 4<<20)
	plan := shortPlan(1, 2, 300*time.Millisecond)
	plan.Timeout = 150 * time.Millisecond
	res := runBrk(t, target, plan)
	checkAccounting(t, res)
	c := total(res)
	if res.Verdict != brk.VerdictBroken || c.Timeout == 0 || c.Succeeded != 0 {
		t.Fatalf("never reads: %s", describe(res))
	}
	if res.Phases[0].BlockedWrites == 0 {
		t.Fatalf("no blocked write reported with a server that never reads: %s", describe(res))
	}
	if totalSetups(res).Established < 2 {
		t.Fatalf("timed-out connections were not replaced: %+v", totalSetups(res))
	}
}

// TestCorruptedEcho: an echo server that corrupts one body in four: with
// --expect-echo every corrupted body is a body failure and every other
// response a success, one for one with what the server sent.
func TestCorruptedEcho(t *testing.T) {
	srv := hostile.Start(t, hostile.CorruptEvery(4))
	target := hostileTarget(srv)
	target.Body = []byte("the same bytes every time")
	target.ExpectEcho = true
	res := runBrk(t, target, shortPlan(2, 2, 300*time.Millisecond))
	checkAccounting(t, res)
	c := total(res)
	st := serverStats(srv, c.Succeeded+c.Body)
	if c.Body == 0 || c.Body != uint64(st.Corrupted) || c.Succeeded+c.Body != uint64(st.Responses) {
		t.Fatalf("body failures %d, server corrupted %d; successes %d + body %d vs server responses %d\n%s",
			c.Body, st.Corrupted, c.Succeeded, c.Body, st.Responses, describe(res))
	}
	if c.Succeeded+c.Body != c.Attempted || res.Verdict != brk.VerdictBroken {
		t.Fatalf("corrupt echo: %s", describe(res))
	}
}
