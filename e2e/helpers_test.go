package e2e

import (
	"testing"
	"time"

	"github.com/brk-bench/brk"
	"github.com/brk-bench/brk/internal/e2ekit"
	"github.com/brk-bench/brk/internal/hostile"

	"github.com/brk-bench/brk/internal/testenv"
)

// okResp is a keep-alive OK response with the body "ok".
const okResp = hostile.OKResponse

// runTimeout bounds every brk.Run in these tests.
const runTimeout = e2ekit.RunTimeout

// shortPlan is one phase (Start == Max) of d outstanding requests on each
// of conns connections, on one thread, admitting for phase.
func shortPlan(conns, d int, phase time.Duration) brk.Plan {
	return brk.Plan{
		Conns: conns, Start: d, Max: d, Phase: phase,
		Timeout: time.Second, Accept: 99.99, Threads: 1,
	}
}

// The helpers e2e shares with e2e/search (internal/e2ekit).
var (
	runBrk          = e2ekit.RunBrk
	skipOnNoise     = e2ekit.SkipOnNoise
	failures        = e2ekit.Failures
	total           = e2ekit.Total
	describe        = e2ekit.Describe
	checkAccounting = e2ekit.CheckAccounting
	deref           = e2ekit.Deref
	startFixtureT   = e2ekit.StartFixture
)

// buildBrk builds the brk command for a child process.
func buildBrk(t *testing.T) string { return e2ekit.BuildBrk(t, "../cmd/brk") }

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
