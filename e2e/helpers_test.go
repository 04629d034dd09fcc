package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/brk-bench/brk"
	"github.com/brk-bench/brk/internal/hostile"

	"github.com/brk-bench/brk/internal/testenv"
)

// okResp is a keep-alive OK response with the body "ok".
const okResp = hostile.OKResponse

// runTimeout bounds every brk.Run in these tests.
const runTimeout = 20 * time.Second

// shortPlan is one phase (Start == Max) of d outstanding requests on each
// of conns connections, on one thread, admitting for phase.
func shortPlan(conns, d int, phase time.Duration) brk.Plan {
	return brk.Plan{
		Conns: conns, Start: d, Max: d, Phase: phase,
		Timeout: time.Second, Accept: 99.99, Threads: 1,
	}
}

// runBrk runs brk against target under a context timeout and fails the
// test on a usage error or a run that outlived the context.
func runBrk(t *testing.T, target brk.Target, plan brk.Plan) *brk.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	res, err := brk.Run(ctx, target, plan, nil)
	if err != nil {
		t.Fatalf("brk.Run: %v", err)
	}
	if ctx.Err() != nil {
		t.Fatalf("brk.Run outlived its %v context: verdict %s (%s)", runTimeout, res.Verdict, res.Reason)
	}
	return res
}

// failures is the sum of every failure category of c.
func failures(c brk.Counts) uint64 {
	var n uint64
	for _, name := range brk.FailureCategories() {
		n += c.Failure(name)
	}
	return n
}

// total sums the counts of every phase of res.
func total(res *brk.Result) brk.Counts {
	var t brk.Counts
	for _, p := range res.Phases {
		c := p.Counts
		t.Attempted += c.Attempted
		t.Succeeded += c.Succeeded
		t.Timeout += c.Timeout
		t.Transport += c.Transport
		t.Abandoned += c.Abandoned
		t.Connect += c.Connect
		t.ConnectTimeout += c.ConnectTimeout
		t.Status += c.Status
		t.Body += c.Body
		t.Protocol += c.Protocol
	}
	return t
}

// totalSetups sums the setup counts of every phase of res.
func totalSetups(res *brk.Result) brk.Setups {
	var s brk.Setups
	for _, p := range res.Phases {
		s.Attempted += p.Setups.Attempted
		s.Established += p.Setups.Established
		s.Failed += p.Setups.Failed
		s.TimedOut += p.Setups.TimedOut
		s.Abandoned += p.Setups.Abandoned
		s.Resumed += p.Setups.Resumed
	}
	return s
}

// protocolFault is the first phase's protocol fault text, if any.
func protocolFault(res *brk.Result) string {
	for _, p := range res.Phases {
		if p.ProtocolFault != "" {
			return p.ProtocolFault
		}
	}
	return ""
}

// describe renders a result for failure messages.
func describe(res *brk.Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "verdict %s (%s)", res.Verdict, res.Reason)
	for _, p := range res.Phases {
		fmt.Fprintf(&b, "\n  phase %d level %d accepted=%v counts %+v setups %+v fault %q setup_err %q",
			p.Index, p.Level, p.Accepted, p.Counts, p.Setups, p.ProtocolFault, p.SetupError)
	}
	return b.String()
}

// checkAccounting asserts, for every phase, that each attempted request
// has exactly one outcome (Attempted = Succeeded + every failure), and so
// has each setup started in the phase.
func checkAccounting(t *testing.T, res *brk.Result) {
	t.Helper()
	for _, p := range res.Phases {
		c := p.Counts
		if c.Attempted != c.Succeeded+failures(c) {
			t.Errorf("phase %d: attempted %d != succeeded %d + failures %d (%+v)",
				p.Index, c.Attempted, c.Succeeded, failures(c), c)
		}
		if s := p.Setups; s.Attempted != s.Established+s.Failed+s.TimedOut+s.Abandoned {
			t.Errorf("phase %d: setups %+v: some started setup has no outcome", p.Index, s)
		}
	}
	tc := total(res)
	if tc.Attempted != tc.Succeeded+failures(tc) {
		t.Errorf("run: attempted %d != succeeded %d + failures %d", tc.Attempted, tc.Succeeded, failures(tc))
	}
	checkTimelines(t, res)
}

// checkTimelines asserts that every phase's timeline accounts for each of
// its outcomes exactly once, spans the phase with at most
// brk.MaxTimelinePoints points, and starts after the previous phase's.
func checkTimelines(t *testing.T, res *brk.Result) {
	t.Helper()
	prevStart := -1.0
	for _, p := range res.Phases {
		tl := p.Timeline
		if tl == nil {
			if p.Counts.Attempted > 0 {
				t.Errorf("phase %d: %d outcomes and no timeline", p.Index, p.Counts.Attempted)
			}
			continue
		}
		var ok, failed uint64
		for _, pt := range tl.Points {
			ok += pt.Succeeded
			failed += pt.Failed
		}
		if ok != p.Counts.Succeeded || failed != failures(p.Counts) {
			t.Errorf("phase %d: timeline counts %d succeeded, %d failed; the phase %d, %d", p.Index, ok, failed, p.Counts.Succeeded, failures(p.Counts))
		}
		if n := len(tl.Points); n > brk.MaxTimelinePoints || tl.WidthS <= 0 || float64(n)*tl.WidthS < p.DurationS || float64(n-1)*tl.WidthS > p.DurationS+tl.WidthS {
			t.Errorf("phase %d: %d points of %g s for a phase of %.3f s", p.Index, n, tl.WidthS, p.DurationS)
		}
		if tl.StartS <= prevStart {
			t.Errorf("phase %d starts at %.3f s, not after the previous phase (%.3f s)", p.Index, tl.StartS, prevStart)
		}
		prevStart = tl.StartS
	}
}

// serverStats returns srv's stats once it has counted at least
// wantResponses responses, or after a second. The server counts a response
// only after its write returned, so a client may have read it a moment
// before it is counted.
func serverStats(srv *hostile.Server, wantResponses uint64) hostile.Stats {
	deadline := time.Now().Add(time.Second)
	for {
		st := srv.Stats()
		if uint64(st.Responses) >= wantResponses || time.Now().After(deadline) {
			return st
		}
		time.Sleep(time.Millisecond)
	}
}

// checkServer asserts the server-side bound: every success is a response
// the server sent.
func checkServer(t *testing.T, res *brk.Result, srv *hostile.Server) {
	t.Helper()
	tc := total(res)
	if st := serverStats(srv, tc.Succeeded); uint64(st.Responses) < tc.Succeeded {
		t.Errorf("server sent %d responses but the client counted %d successes", st.Responses, tc.Succeeded)
	}
}

// hostileTarget is a GET of / on srv.
func hostileTarget(srv *hostile.Server) brk.Target {
	return brk.Target{URL: "http://" + srv.Addr() + "/"}
}

// closedAddr returns an address where nothing listens, so connects are
// refused, for the whole test (testenv.RefusingAddr).
func closedAddr(t *testing.T) string {
	t.Helper()
	return testenv.RefusingAddr(t)
}

// respondThenClose answers one request with resp, then half-closes (FIN)
// and discards whatever the client still sends, so that unread pipelined
// requests never turn the close into an RST.
func respondThenClose(resp []byte) hostile.Script {
	return func(c *hostile.Conn, _ int) {
		if _, err := c.ReadRequest(); err != nil {
			return
		}
		if err := c.Respond(resp); err != nil {
			return
		}
		c.CloseWrite()
		c.Discard()
	}
}
