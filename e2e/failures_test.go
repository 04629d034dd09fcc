package e2e

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/brk-bench/brk"
	"github.com/brk-bench/brk/internal/hostile"
	"github.com/brk-bench/brk/internal/testenv"
)

// TestStatusAndBodyChecks: a wrong status or body is its own category,
// not a protocol fault, and the connection stays open.
func TestStatusAndBodyChecks(t *testing.T) {
	testenv.Parallel(t, testenv.Busy)
	t.Run("expect-body-mismatch", func(t *testing.T) {
		res, srv := framingCase{resp: okResp, target: expectBody("ko")}.run(t)
		c := total(res)
		if res.Verdict != brk.VerdictBroken || c.Body == 0 || c.Body != c.Attempted || c.Protocol != 0 {
			t.Errorf("want broken with every request a body failure: %s", describe(res))
		}
		if st := serverStats(srv, c.Attempted); st.Conns != 1 || uint64(st.Responses) != c.Attempted {
			t.Errorf("server %+v: a body mismatch must not end the connection", st)
		}
	})
	t.Run("expect-body-longer", func(t *testing.T) {
		res, _ := framingCase{resp: okResp, target: expectBody("okay")}.run(t)
		if c := total(res); res.Verdict != brk.VerdictBroken || c.Body == 0 || c.Body != c.Attempted {
			t.Errorf("want broken with body failures: %s", describe(res))
		}
	})
	t.Run("status-500", func(t *testing.T) {
		res, srv := framingCase{resp: "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 2\r\n\r\nok"}.run(t)
		c := total(res)
		if res.Verdict != brk.VerdictBroken || c.Status == 0 || c.Status != c.Attempted || c.Protocol != 0 {
			t.Errorf("want broken with every request a status failure: %s", describe(res))
		}
		if !strings.Contains(res.Reason, "below Plan.Accept") {
			t.Errorf("reason %q", res.Reason)
		}
		if st := srv.Stats(); st.Conns != 1 {
			t.Errorf("server %+v: a status failure must not end the connection", st)
		}
	})
	t.Run("expect-status-500-given-200", func(t *testing.T) {
		res, _ := framingCase{resp: okResp, target: func(t *brk.Target) { t.ExpectStatus = []int{500} }}.run(t)
		if c := total(res); res.Verdict != brk.VerdictBroken || c.Status != c.Attempted || c.Attempted == 0 {
			t.Errorf("want broken with status failures: %s", describe(res))
		}
	})
}

// TestStallMidBody: a server that stops mid-body leaves the request to its
// deadline; the connection is retired and replaced.
func TestStallMidBody(t *testing.T) {
	testenv.Parallel(t, testenv.Busy)
	for _, depth := range []int{1, 4} {
		t.Run(map[int]string{1: "depth1", 4: "depth4"}[depth], func(t *testing.T) {
			srv := hostile.Start(t, hostile.StallMidBody())
			plan := shortPlan(1, depth, 300*time.Millisecond)
			plan.Timeout = 100 * time.Millisecond
			res := runBrk(t, hostileTarget(srv), plan)
			t.Log(describe(res))
			checkAccounting(t, res)
			checkServer(t, res, srv)
			c := total(res)
			if res.Verdict != brk.VerdictBroken || c.Timeout < 1 {
				t.Errorf("want broken with timeouts: %s", describe(res))
			}
			if c.Succeeded != 0 || c.Transport != 0 || c.Protocol != 0 {
				t.Errorf("counts %+v: a stall is only timeouts (and abandoned followers)", c)
			}
			// Every connection stalls its first request; each timeout retires
			// the connection, so there are as many connections as incidents.
			st := srv.Stats()
			if st.Conns < 2 {
				t.Errorf("server saw %d connections: timed-out connections were not replaced", st.Conns)
			}
		})
	}
}

// TestResetMidBody: a reset in the middle of a body is one transport
// incident per connection: the first request transport, its written
// followers abandoned.
func TestResetMidBody(t *testing.T) {
	testenv.Parallel(t, testenv.Busy)
	for _, depth := range []int{1, 4} {
		t.Run(map[int]string{1: "depth1", 4: "depth4"}[depth], func(t *testing.T) {
			srv := hostile.Start(t, hostile.ResetMidBody())
			res := runBrk(t, hostileTarget(srv), shortPlan(1, depth, 250*time.Millisecond))
			t.Log(describe(res))
			checkAccounting(t, res)
			checkServer(t, res, srv)
			c := total(res)
			if res.Verdict != brk.VerdictBroken || c.Transport < 1 {
				t.Errorf("want broken with transport failures: %s", describe(res))
			}
			if c.Succeeded != 0 || c.Timeout != 0 || c.Protocol != 0 {
				t.Errorf("counts %+v: a reset is only transport (and abandoned followers)", c)
			}
			if c.Abandoned != uint64(depth-1)*c.Transport {
				t.Errorf("counts %+v: want %d abandoned followers per transport incident", c, depth-1)
			}
			if st := srv.Stats(); uint64(st.Conns) < c.Transport {
				t.Errorf("server saw %d connections for %d transport incidents", st.Conns, c.Transport)
			}
		})
	}
}

// TestTimeoutSplitsExpiredAndUnexpired: each connection gets 4 requests
// at once; the server answers the first at once and the second after
// 50 ms, then answers nothing. The client refills after each response, so
// at the 100 ms deadline of the first batch the connection holds two
// expired requests and two newer ones, one of them admitted 50 ms later.
// Expired ones count as timeout, unexpired followers as abandoned, and the
// connection is replaced.
func TestTimeoutSplitsExpiredAndUnexpired(t *testing.T) {
	const late = 50 * time.Millisecond
	srv := hostile.Start(t, func(c *hostile.Conn, _ int) {
		for i := 0; ; i++ {
			if _, err := c.ReadRequest(); err != nil {
				return
			}
			switch i {
			case 0:
			case 1:
				select {
				case <-time.After(late):
				case <-c.Done():
					return
				}
			default:
				continue // read, never answer
			}
			if err := c.Respond([]byte(okResp)); err != nil {
				return
			}
		}
	})
	plan := shortPlan(1, 4, 300*time.Millisecond)
	plan.Timeout = 100 * time.Millisecond
	res := runBrk(t, hostileTarget(srv), plan)
	t.Log(describe(res))
	checkAccounting(t, res)
	checkServer(t, res, srv)
	c := total(res)
	st := serverStats(srv, c.Succeeded)
	conns := uint64(st.Conns)
	if res.Verdict != brk.VerdictBroken || conns < 2 {
		t.Fatalf("want broken over several connections (server saw %d): %s", conns, describe(res))
	}
	// Per connection: the 4 requests admitted at connect are 2 successes
	// and 2 timeouts (admitted with the head, they share its deadline).
	// The up to 2 refills, admitted after a response, are timeout or
	// abandoned depending on whether their own deadline had passed when
	// the timer fired; the one admitted 50 ms later is abandoned unless
	// the timer was 50 ms late.
	if c.Succeeded != 2*conns || c.Timeout < 2*conns || c.Attempted > 6*conns {
		t.Errorf("counts %+v over %d connections: want 2 successes, >= 2 timeouts, <= 6 requests each", c, conns)
	}
	if c.Abandoned == 0 {
		t.Errorf("counts %+v: want unexpired followers abandoned", c)
	}
	if c.Transport != 0 || c.Protocol != 0 {
		t.Errorf("counts %+v: only timeouts and abandoned expected", c)
	}
}

// TestServerNeverReads: a server that accepts and never reads fills the
// socket buffers with a large POST; the writes block, the requests time
// out, the connection is replaced, and the run ends (no hang): not a byte
// came back in the first phase, so inconclusive.
func TestServerNeverReads(t *testing.T) {
	testenv.Parallel(t, testenv.Busy)
	srv := hostile.Start(t, hostile.NoRead())
	target := hostileTarget(srv)
	target.Body = bytes.Repeat([]byte("x"), 4<<20)
	plan := shortPlan(1, 2, 300*time.Millisecond)
	plan.Timeout = 150 * time.Millisecond
	res := runBrk(t, target, plan)
	checkAccounting(t, res)
	c := total(res)
	if res.Verdict != brk.VerdictInconclusive || !strings.Contains(res.Reason, "not a byte came back") || c.Timeout == 0 || c.Succeeded != 0 {
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
	testenv.Parallel(t, testenv.Busy)
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
