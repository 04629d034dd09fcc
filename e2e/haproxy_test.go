package e2e

import (
	"testing"
	"time"

	"github.com/brk-bench/brk"
	"github.com/brk-bench/brk/internal/e2ekit"
	"github.com/brk-bench/brk/internal/testenv"
)

// TestHAProxyIdleTimeoutSearch: haproxy with `timeout http-request 1s`
// answers a connection that carried nothing for 1 s with 408 Request
// Time-out and Connection: close, then closes it. A rate search whose
// connections sit idle longer than that (32 connections, set up before
// the first phase, at 10 requests/s: each carries a request every 3.2 s)
// meets those 408s in its low phases. Each is the server's farewell: an
// idle close, the connection replaced, no request failed, no protocol
// fault; so the search holds every level up to its cap (it was rejected
// down to "no level held; broke at 1" when they were read as unsolicited
// responses).
func TestHAProxyIdleTimeoutSearch(t *testing.T) {
	testenv.Parallel(t, testenv.Waits)
	hp := testenv.StartHAProxy(t, testenv.HAProxyOptions{RequestTimeout: time.Second})
	plan := brk.Plan{Load: brk.Rate{Conns: 32}, Start: 10, Max: 160, Search: &brk.Search{}, Phase: 2 * time.Second, Timeout: time.Second, Threads: 1}
	target := brk.Target{URL: "http://" + hp.Addr + "/", ExpectBody: []byte("ok")}
	res := runRateRetry(t, target, plan, time.Minute, nil)
	checkRateAccounting(t, res)
	checkAccounting(t, res)
	var closes uint64
	for _, p := range res.Phases {
		t.Logf("phase %d at %d/s: accepted %v, counts %+v, idle closes %d, replayed %d, setups %d",
			p.Index, p.Level, p.Accepted, p.Counts, p.IdleCloses, p.StreamsReplayed, p.Setups.Established)
		closes += p.IdleCloses
	}
	if res.Verdict != brk.VerdictDone || res.LastAccepted == nil || *res.LastAccepted != 160 {
		// On a loaded box brk may say it cannot tell (its runs of a
		// level disagreed on a busy box): not the false break this
		// test is about.
		e2ekit.SkipOnNoise(t, res)
		t.Fatalf("want every level held up to the cap of 160/s: %s", describe(res))
	}
	if tc := total(res); failures(tc) != 0 || tc.Succeeded == 0 {
		t.Errorf("failures against haproxy: %+v", tc)
	}
	if closes == 0 {
		t.Errorf("haproxy closed no idle connection with its 408: the test did not meet the idle timeout")
	}
}
