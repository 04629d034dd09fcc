package brk_test

import (
	"strings"
	"testing"
	"time"

	"brk"
	"brk/internal/hostile"
)

const okResp = hostile.OKResponse

// TestPipeliningIsReal checks on the server side that a depth-8 connection
// really has 8 requests on the wire at once.
func TestPipeliningIsReal(t *testing.T) {
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

// framingCase is one response framing sent through a real socket.
type framingCase struct {
	name   string
	script hostile.Script // nil: hostile.Fixed(resp)
	resp   string
	depth  int // outstanding per connection; 0 = 4
	target func(*brk.Target)
}

func (fc framingCase) run(t *testing.T) (*brk.Result, *hostile.Server) {
	t.Helper()
	script := fc.script
	if script == nil {
		script = hostile.Fixed([]byte(fc.resp))
	}
	srv := hostile.Start(t, script)
	target := hostileTarget(srv)
	if fc.target != nil {
		fc.target(&target)
	}
	depth := fc.depth
	if depth == 0 {
		depth = 4
	}
	res := runBrk(t, target, shortPlan(1, depth, 250*time.Millisecond))
	t.Log(describe(res))
	checkAccounting(t, res)
	checkServer(t, res, srv)
	return res, srv
}

func expectBody(b string) func(*brk.Target) {
	return func(t *brk.Target) { t.ExpectBody = []byte(b) }
}

// TestFramingAccepted: every valid framing of SPEC §4 is parsed to a
// success, with the body as the server meant it.
func TestFramingAccepted(t *testing.T) {
	cases := []framingCase{
		{name: "content-length", resp: okResp, target: expectBody("ok")},
		{name: "content-length-zero", resp: "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", target: expectBody("")},
		{name: "repeated-equal-content-length",
			resp: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok", target: expectBody("ok")},
		{name: "chunked-extensions-trailers",
			resp:   "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2;name=value;q=\"x\"\r\nhe\r\n3\r\nllo\r\n0;last\r\nX-Trailer: t\r\nX-Other: u\r\n\r\n",
			target: expectBody("hello")},
		{name: "chunked-hex-size",
			resp:   "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nA\r\n0123456789\r\n0\r\n\r\n",
			target: expectBody("0123456789")},
		{name: "close-delimited",
			script: respondThenClose([]byte("HTTP/1.1 200 OK\r\n\r\nclose-delimited body")),
			depth:  1, target: expectBody("close-delimited body")},
		{name: "close-delimited-pipelined",
			script: respondThenClose([]byte("HTTP/1.1 200 OK\r\n\r\nbody")),
			depth:  4, target: expectBody("body")},
		{name: "100-continue-then-200",
			resp: "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", target: expectBody("ok")},
		{name: "103-early-hints-then-200",
			resp:   "HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\nHTTP/1.1 102 Processing\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
			target: expectBody("ok")},
		{name: "204-no-body", resp: "HTTP/1.1 204 No Content\r\n\r\n"},
		{name: "204-with-content-length-header", resp: "HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n"},
		{name: "304-no-body", resp: "HTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\n\r\n",
			target: func(t *brk.Target) { t.ExpectStatus = []int{304} }},
		{name: "head-content-length-no-body", resp: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n",
			target: func(t *brk.Target) { t.Method = "HEAD" }},
		{name: "head-chunked-no-body", resp: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
			target: func(t *brk.Target) { t.Method = "HEAD" }},
		{name: "http10-keep-alive",
			resp: "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok", target: expectBody("ok")},
		{name: "expect-status-500", resp: "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 2\r\n\r\nok",
			target: func(t *brk.Target) { t.ExpectStatus = []int{500} }},
		{name: "expect-status-200-listed", resp: okResp,
			target: func(t *brk.Target) { t.ExpectStatus = []int{200} }},
	}
	for _, fc := range cases {
		t.Run(fc.name, func(t *testing.T) {
			res, srv := fc.run(t)
			if res.Verdict != brk.VerdictDone {
				t.Errorf("verdict %s, want done: %s", res.Verdict, describe(res))
			}
			tc := total(res)
			if tc.Attempted == 0 || tc.Succeeded != tc.Attempted {
				t.Errorf("counts %+v: want succeeded == attempted > 0", tc)
			}
			if f := protocolFault(res); f != "" {
				t.Errorf("protocol fault %q on a valid framing", f)
			}
			if fc.script == nil {
				// Fixed answers each request once on a connection that stays
				// open: one response per success, no more.
				if st := serverStats(srv, tc.Succeeded); uint64(st.Responses) != tc.Succeeded || st.Conns != 1 {
					t.Errorf("server: %d responses on %d conns; client: %d successes", st.Responses, st.Conns, tc.Succeeded)
				}
			}
		})
	}
}

// TestFramingRejected: invalid or ambiguous framing is a protocol fault:
// the phase is broken and the fault is named.
func TestFramingRejected(t *testing.T) {
	cases := []struct {
		framingCase
		fault string // expected ProtocolFault substring
	}{
		{framingCase{name: "conflicting-content-length",
			resp: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok"}, "conflicting_content_length"},
		{framingCase{name: "conflicting-content-length-list",
			resp: "HTTP/1.1 200 OK\r\nContent-Length: 2, 3\r\n\r\nok"}, "content_length"},
		{framingCase{name: "content-length-and-transfer-encoding",
			resp: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n"}, "content_length_with_transfer_encoding"},
		{framingCase{name: "bad-chunk-size",
			resp: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nok\r\n0\r\n\r\n"}, "bad_chunk_size"},
		{framingCase{name: "negative-chunk-size",
			resp: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-2\r\nok\r\n0\r\n\r\n"}, "bad_chunk_size"},
		{framingCase{name: "header-block-over-64KiB", script: hostile.HugeHeaders(70 << 10)}, "header_too_large"},
		{framingCase{name: "obs-fold",
			resp: "HTTP/1.1 200 OK\r\nX-A: a\r\n folded\r\nContent-Length: 2\r\n\r\nok"}, "obs_fold"},
		{framingCase{name: "bad-status-line", resp: "HTTP/1.1 2x0 OK\r\nContent-Length: 2\r\n\r\nok"}, "bad_status_line"},
		{framingCase{name: "not-http", resp: "SSH-2.0-OpenSSH_9.6\r\n"}, "bad_status_line"},
		{framingCase{name: "unsupported-transfer-encoding",
			resp: "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nok"}, "unsupported_transfer_encoding"},
		{framingCase{name: "gzip-then-chunked",
			resp: "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n"}, "unsupported_transfer_encoding"},
		{framingCase{name: "bad-content-length", resp: "HTTP/1.1 200 OK\r\nContent-Length: +2\r\n\r\nok"}, "bad_content_length"},
		{framingCase{name: "101-switching-protocols",
			resp: "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: upgrade\r\n\r\n"}, "unexpected_101"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, _ := tc.run(t)
			if res.Verdict != brk.VerdictBroken {
				t.Errorf("verdict %s, want broken: %s", res.Verdict, describe(res))
			}
			if !strings.Contains(res.Reason, "invalid protocol data") {
				t.Errorf("reason %q: want invalid protocol data", res.Reason)
			}
			c := total(res)
			if c.Protocol < 1 {
				t.Errorf("counts %+v: want protocol >= 1", c)
			}
			f := protocolFault(res)
			if f == "" || !strings.Contains(f, tc.fault) {
				t.Errorf("protocol fault %q, want it to name %q", f, tc.fault)
			}
			if c.Timeout != 0 || c.Status != 0 || c.Body != 0 {
				t.Errorf("counts %+v: a protocol fault must not be counted as timeout, status or body", c)
			}
		})
	}
}

// TestStatusAndBodyChecks: a wrong status or body is its own category,
// not a protocol fault, and the connection stays open.
func TestStatusAndBodyChecks(t *testing.T) {
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
		if !strings.Contains(res.Reason, "below --accept") {
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

// closeLast is a keep-alive OK response that ends the connection.
const closeLast = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"

// TestConnectionCloseReplaysGET: the server ends every connection after 3
// responses while 8 are pipelined: the GET followers it never answered are
// replayed on the next connection, none is lost or counted twice.
func TestConnectionCloseReplaysGET(t *testing.T) {
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

// TestGreeting: a response before any request is a protocol fault.
func TestGreeting(t *testing.T) {
	srv := hostile.Start(t, hostile.Greeting([]byte(okResp)))
	res := runBrk(t, hostileTarget(srv), shortPlan(1, 4, 300*time.Millisecond))
	t.Log(describe(res))
	checkAccounting(t, res)
	c := total(res)
	if res.Verdict != brk.VerdictBroken || !strings.Contains(res.Reason, "invalid protocol data") {
		t.Errorf("want broken for invalid protocol data: %s", describe(res))
	}
	if c.Protocol < 1 || protocolFault(res) == "" {
		t.Errorf("counts %+v fault %q: want a protocol fault", c, protocolFault(res))
	}
	// The greeting itself is not counted by the server, at most one per
	// connection may have been taken for a response.
	if st := serverStats(srv, c.Succeeded); uint64(st.Responses+st.Conns) < c.Succeeded {
		t.Errorf("server sent %d responses + %d greetings, client counted %d successes", st.Responses, st.Conns, c.Succeeded)
	}
}

// TestExtraResponses: more responses than requests is a protocol fault.
func TestExtraResponses(t *testing.T) {
	for _, depth := range []int{1, 4} {
		t.Run(map[int]string{1: "depth1", 4: "depth4"}[depth], func(t *testing.T) {
			srv := hostile.Start(t, hostile.ExtraResponses(1))
			res := runBrk(t, hostileTarget(srv), shortPlan(1, depth, 300*time.Millisecond))
			t.Log(describe(res))
			checkAccounting(t, res)
			checkServer(t, res, srv)
			c := total(res)
			if res.Verdict != brk.VerdictBroken || !strings.Contains(res.Reason, "invalid protocol data") {
				t.Errorf("want broken for invalid protocol data: %s", describe(res))
			}
			if c.Protocol < 1 || !strings.Contains(protocolFault(res), "unsolicited") {
				t.Errorf("counts %+v fault %q: want an unsolicited-response protocol fault", c, protocolFault(res))
			}
		})
	}
}

// TestHTTP10WithoutKeepAliveCloses: an HTTP/1.0 response without
// keep-alive ends the connection (RFC 9112 §9.3) even though this server
// would keep it open: the client replaces the connection for every
// response and replays the GET followers, losing none.
func TestHTTP10WithoutKeepAliveCloses(t *testing.T) {
	srv := hostile.Start(t, hostile.Fixed([]byte("HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok")))
	target := hostileTarget(srv)
	target.ExpectBody = []byte("ok")
	res := runBrk(t, target, shortPlan(1, 4, 250*time.Millisecond))
	t.Log(describe(res))
	checkAccounting(t, res)
	checkServer(t, res, srv)
	c := total(res)
	if res.Verdict != brk.VerdictDone || c.Attempted == 0 || c.Succeeded != c.Attempted {
		t.Errorf("want done with every request a success: %s", describe(res))
	}
	if su := totalSetups(res); su.Established != c.Succeeded {
		t.Errorf("established %d connections for %d responses: want one connection per response", su.Established, c.Succeeded)
	}
}

// TestPhasesRaiseDepth: a three-phase run (depth 1, 2, 3 on two
// connections and two threads) keeps each phase's accounting exact and its
// counters separate, and really pipelines the last depth.
func TestPhasesRaiseDepth(t *testing.T) {
	srv := hostile.Start(t, hostile.PipelineObserver([]byte(okResp)))
	plan := brk.Plan{Conns: 2, Start: 1, Pace: 1, Max: 3, Phase: 200 * time.Millisecond,
		Timeout: time.Second, Accept: "99.99", Threads: 2}
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
