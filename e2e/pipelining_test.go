package e2e

import (
	"testing"
	"time"

	"github.com/brk-bench/brk"
	"github.com/brk-bench/brk/internal/hostile"
	"github.com/brk-bench/brk/internal/testenv"
)

// TestPipeliningIsReal checks on the server side that a depth-8 connection
// really has 8 requests on the wire at once.
func TestPipeliningIsReal(t *testing.T) {
	testenv.Parallel(t, testenv.Busy)
	srv := hostile.Start(t, hostile.PipelineObserver([]byte(okResp)))
	res := runBrk(t, hostileTarget(srv), shortPlan(1, 8, 300*time.Millisecond))
	t.Log(describe(res))
	checkAccounting(t, res)
	checkServer(t, res, srv)
	if res.Verdict != brk.VerdictDone {
		t.Errorf("verdict %s, want done: %s", res.Verdict, describe(res))
	}
	tc := total(res)
	st := serverStats(srv, tc.Succeeded)
	if st.MaxPipelined < 8 {
		t.Errorf("server saw at most %d requests pipelined, want >= 8", st.MaxPipelined)
	}
	if tc.Attempted == 0 || tc.Succeeded != tc.Attempted {
		t.Errorf("counts %+v: want every request to succeed", tc)
	}
	if uint64(st.Responses) != tc.Succeeded {
		t.Errorf("server answered %d requests, client counted %d successes", st.Responses, tc.Succeeded)
	}
}

// closeLast is a keep-alive OK response that ends the connection.
const closeLast = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"

// TestConnectionCloseReplaysGET: the server ends every connection after 3
// responses while 8 are pipelined: the GET followers it never answered are
// replayed on the next connection, none is lost or counted twice.
func TestConnectionCloseReplaysGET(t *testing.T) {
	testenv.Parallel(t, testenv.Busy)
	const n, depth = 3, 8
	srv := hostile.Start(t, hostile.CloseAfter(n, []byte(okResp), []byte(closeLast)))
	target := hostileTarget(srv)
	target.ExpectBody = []byte("ok")
	res := runBrk(t, target, shortPlan(1, depth, 300*time.Millisecond))
	t.Log(describe(res))
	checkAccounting(t, res)
	checkServer(t, res, srv)
	c := total(res)
	if res.Verdict != brk.VerdictDone {
		t.Errorf("verdict %s, want done: %s", res.Verdict, describe(res))
	}
	if c.Abandoned != 0 || c.Attempted == 0 || c.Succeeded != c.Attempted {
		t.Errorf("counts %+v: want every GET to succeed, none abandoned", c)
	}
	st := serverStats(srv, c.Succeeded)
	// Every response the server sent is one success: nothing answered was
	// replayed, nothing replayed was lost.
	if uint64(st.Responses) != c.Succeeded {
		t.Errorf("server sent %d responses, client counted %d successes", st.Responses, c.Succeeded)
	}
	if st.Conns < 3 {
		t.Errorf("server saw %d connections: want several replacements", st.Conns)
	}
	if max := int64(n) * st.Conns; st.Responses > max {
		t.Errorf("server sent %d responses on %d connections of %d each", st.Responses, st.Conns, n)
	}
	if su := totalSetups(res); su.Established != uint64(st.Conns) {
		t.Errorf("client established %d connections, server accepted %d", su.Established, st.Conns)
	}
}

// TestConnectionCloseAbandonsPOST: the same server with a POST target:
// unanswered followers are abandoned, never replayed.
func TestConnectionCloseAbandonsPOST(t *testing.T) {
	testenv.Parallel(t, testenv.Busy)
	const n, depth = 3, 8
	srv := hostile.Start(t, hostile.CloseAfter(n, []byte(okResp), []byte(closeLast)))
	target := hostileTarget(srv)
	target.Body = []byte("payload")
	res := runBrk(t, target, shortPlan(1, depth, 300*time.Millisecond))
	t.Log(describe(res))
	checkAccounting(t, res)
	checkServer(t, res, srv)
	c := total(res)
	if c.Abandoned == 0 {
		t.Errorf("counts %+v: want abandoned POST followers", c)
	}
	if c.Attempted != c.Succeeded+c.Abandoned {
		t.Errorf("counts %+v: want only successes and abandoned", c)
	}
	st := serverStats(srv, c.Succeeded)
	// Every request the server read was answered and is one success; an
	// abandoned POST that had been replayed would be read (and answered)
	// a second time and break attempted == succeeded + abandoned.
	if uint64(st.Responses) != c.Succeeded || st.Requests != st.Responses {
		t.Errorf("server read %d requests and sent %d responses; client: %+v", st.Requests, st.Responses, c)
	}
	// Each connection starts with depth POSTs written at once and the
	// server answers n of them: exactly n successes per connection.
	if c.Succeeded != uint64(n)*uint64(st.Conns) {
		t.Errorf("server conns %d × %d responses vs %d successes", st.Conns, n, c.Succeeded)
	}
	if res.Verdict != brk.VerdictBroken {
		t.Errorf("verdict %s, want broken (abandoned requests are failures): %s", res.Verdict, describe(res))
	}
}

// TestPhasesRaiseDepth: a three-phase run (depth 1, 2, 3 on two
// connections and two threads) keeps each phase's accounting exact and its
// counters separate, and really pipelines the last depth.
func TestPhasesRaiseDepth(t *testing.T) {
	testenv.Parallel(t, testenv.Busy)
	srv := hostile.Start(t, hostile.PipelineObserver([]byte(okResp)))
	plan := brk.Plan{Conns: 2, Start: 1, Pace: 1, Max: 3, Phase: 200 * time.Millisecond,
		Timeout: time.Second, Accept: 99.99, Threads: 2}
	res := runBrk(t, hostileTarget(srv), plan)
	t.Log(describe(res))
	checkAccounting(t, res)
	checkServer(t, res, srv)
	if res.Verdict != brk.VerdictDone || len(res.Phases) != 3 {
		t.Fatalf("want done after 3 phases: %s", describe(res))
	}
	if res.LastAccepted == nil || *res.LastAccepted != 6 || res.FirstRejected != nil {
		t.Errorf("last_accepted %v first_rejected %v, want 6 and none", res.LastAccepted, res.FirstRejected)
	}
	for i, p := range res.Phases {
		if p.Index != i || p.Depth != i+1 || p.Level != 2*(i+1) || !p.Accepted {
			t.Errorf("phase %d: index %d depth %d level %d accepted %v", i, p.Index, p.Depth, p.Level, p.Accepted)
		}
		if p.Counts.Attempted == 0 || p.Counts.Succeeded != p.Counts.Attempted {
			t.Errorf("phase %d counts %+v", i, p.Counts)
		}
	}
	// Connections are opened once and kept across phases.
	if su := totalSetups(res); su.Established != 2 {
		t.Errorf("setups %+v: want the 2 connections opened once", su)
	}
	tc := total(res)
	st := serverStats(srv, tc.Succeeded)
	if uint64(st.Responses) != tc.Succeeded {
		t.Errorf("server answered %d, client counted %d successes over all phases", st.Responses, tc.Succeeded)
	}
	if st.MaxPipelined < 3 {
		t.Errorf("server saw at most %d pipelined, want >= 3", st.MaxPipelined)
	}
}
