package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/brk-bench/brk"
	"github.com/brk-bench/brk/internal/hostile"
	"github.com/brk-bench/brk/internal/testenv"
)

// TestHangupsAreTheServers: a server that closes every connection at
// accept, or after reading one request head, is a server that broke
// (exit 1), however busy its hang-ups keep the client's workers: one
// thread reconnecting for many connections is saturated by the reconnect
// loop the server causes, and a connection the server closed is the
// server's doing whatever the client's load. Before, such a phase read
// "the client was saturated" (exit 3) whenever the workers were ≥ 90 %
// busy. The first connection is answered once, so that the phase heard
// the server: one that never sends a byte is the user's mistake
// (TestNotAByteFromAnyConnection).
func TestHangupsAreTheServers(t *testing.T) {
	testenv.Parallel(t, testenv.Busy)
	for _, c := range []struct {
		name   string
		script hostile.Script
	}{
		{"close at accept", func(*hostile.Conn, int) {}},
		{"close after one head", func(c *hostile.Conn, _ int) { c.ReadRequest() }},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := hostile.Start(t, func(conn *hostile.Conn, i int) {
				if i == 0 {
					if _, err := conn.ReadRequest(); err == nil {
						conn.Respond([]byte(okResp))
					}
				}
				c.script(conn, i)
			})
			plan := shortPlan(200, 1, 500*time.Millisecond) // one thread
			res := runBrk(t, hostileTarget(srv), plan)
			checkAccounting(t, res)
			p := res.Phases[len(res.Phases)-1]
			busy := -1.0
			if p.WorkerBusyPct != nil {
				busy = *p.WorkerBusyPct
			}
			tc := total(res)
			t.Logf("worker busy %.0f %%, client_bound %v, %d transport, %d abandoned, %d setups: %s (%s)",
				busy, p.ClientBound, tc.Transport, tc.Abandoned, totalSetups(res).Attempted, res.Verdict, res.Reason)
			if res.Verdict != brk.VerdictBroken || strings.Contains(res.Reason, "saturated") {
				t.Fatalf("hang-ups judged %s (%s), want broken: %s", res.Verdict, res.Reason, describe(res))
			}
			if tc.Succeeded != 1 || tc.Transport == 0 || tc.Timeout != 0 {
				t.Fatalf("counts %+v", tc)
			}
		})
	}
}
