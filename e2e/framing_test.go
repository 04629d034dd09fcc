package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/brk-bench/brk"
	"github.com/brk-bench/brk/internal/hostile"
	"github.com/brk-bench/brk/internal/testenv"
)

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

// TestFramingAccepted: every valid framing of docs/semantics.md is parsed to a
// success, with the body as the server meant it.
func TestFramingAccepted(t *testing.T) {
	t.Parallel() // its subtests take the shares (testenv.Parallel)
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
			testenv.Parallel(t, testenv.Busy)
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
	t.Parallel() // its subtests take the shares (testenv.Parallel)
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
		{framingCase{name: "obs-fold of Content-Length",
			resp: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n 2\r\n\r\nok"}, "obs_fold"},
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
			testenv.Parallel(t, testenv.Busy)
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

// TestGreeting: a response before any request is a protocol fault.
func TestGreeting(t *testing.T) {
	testenv.Parallel(t, testenv.Busy)
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
	testenv.Parallel(t, testenv.Busy)
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
	testenv.Parallel(t, testenv.Busy)
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

// startDripping starts a server that answers every request "ok", one
// byte every 200 µs.
func startDripping(t *testing.T) *hostile.Server {
	resp := []byte("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok")
	return hostile.Start(t, func(c *hostile.Conn, _ int) {
		for {
			if _, err := c.ReadRequest(); err != nil {
				return
			}
			if err := c.Drip(resp, 200*time.Microsecond); err != nil {
				return
			}
		}
	})
}

// TestDrippedResponse: a response that arrives one byte at a time is
// parsed across every split and succeeds within its deadline.
func TestDrippedResponse(t *testing.T) {
	srv := startDripping(t)
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
