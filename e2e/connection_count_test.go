package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/brk-bench/brk"
	"github.com/brk-bench/brk/internal/hostile"
	"github.com/brk-bench/brk/internal/testenv"
)

// accepted waits until srv has accepted want connections (a connect
// completes in the kernel before the server's accept), or a second has
// passed, and returns its count.
func accepted(srv *hostile.Server, want uint64) uint64 {
	deadline := time.Now().Add(time.Second)
	for {
		n := uint64(srv.Stats().Conns)
		if n >= want || time.Now().After(deadline) {
			return n
		}
		time.Sleep(time.Millisecond)
	}
}

// opened is every connection res reports it opened to the target: the
// setups of every phase, the TLS probe's, and those set up before a run
// that ended without any phase.
func opened(res *brk.Result) uint64 {
	n := res.UnphasedSetups
	for _, p := range res.Phases {
		n += p.Setups.Attempted + p.TLSProbes
	}
	return n
}

// TestEveryConnectionCounted: the connections a server accepted are the
// setups brk reports plus its TLS probe, exactly, for servers that never
// answer, hang up, or close at accept (each probed after a first phase
// that heard not a byte). Before, the probe was counted nowhere: the
// server counted one connection more than the report.
func TestEveryConnectionCounted(t *testing.T) {
	testenv.Parallel(t, testenv.Waits)
	for name, script := range map[string]hostile.Script{
		"never answers":           func(c *hostile.Conn, _ int) { c.Discard() },
		"hangs up on the request": func(c *hostile.Conn, _ int) { c.ReadRequest() },
		"closes at accept":        func(*hostile.Conn, int) {},
	} {
		t.Run(name, func(t *testing.T) {
			srv := hostile.Start(t, script)
			plan := shortPlan(2, 1, 300*time.Millisecond)
			plan.Timeout = 200 * time.Millisecond
			res := runBrk(t, hostileTarget(srv), plan)
			checkAccounting(t, res)
			want := opened(res)
			if got := accepted(srv, want); got != want || res.Phases[0].TLSProbes != 1 {
				t.Fatalf("the server accepted %d connections, the report counts %d (tls probes %d): %s", got, want, res.Phases[0].TLSProbes, describe(res))
			}
		})
	}
}

// TestFailedJoinCountsItsConnections: a rate test's shard sets its share
// of the connections up before phase 0, then waits for its partners; when
// the join fails, the run has no phase to count them in, and the report
// (unphased_setups, and the reason) still counts every one the server
// accepted. Before, none was counted.
func TestFailedJoinCountsItsConnections(t *testing.T) {
	srv := hostile.Start(t, hostile.Fixed([]byte(okResp)))
	plan := brk.Plan{Load: brk.Rate{Conns: 4}, Start: 100, Max: 100, Phase: time.Second, Timeout: 200 * time.Millisecond, Threads: 1,
		Shard: &brk.Sharding{Index: 0, Count: 2, Coordinator: "127.0.0.1:0", Token: "t", JoinTimeout: 300 * time.Millisecond},
	}
	ctx, cancel := contextWithTimeout()
	defer cancel()
	res, err := brk.Run(ctx, hostileTarget(srv), plan, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s (unphased setups %d)", describe(res), res.UnphasedSetups)
	if res.Verdict != brk.VerdictInconclusive || len(res.Phases) != 0 || !strings.Contains(res.Reason, "did not join") {
		t.Fatalf("verdict %s (%s), %d phases: want inconclusive before any phase", res.Verdict, res.Reason, len(res.Phases))
	}
	if got := accepted(srv, res.UnphasedSetups); got == 0 || got != res.UnphasedSetups {
		t.Fatalf("the server accepted %d connections, the report counts %d", got, res.UnphasedSetups)
	}
	if !strings.Contains(res.Reason, "connections to the target had been set up before the end") {
		t.Fatalf("the reason does not count them: %s", res.Reason)
	}
}
