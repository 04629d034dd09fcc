package e2e

import (
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brk-bench/brk"
	"github.com/brk-bench/brk/internal/testenv"
)

// TestStarvedClientIsNotABreak: a program runs brk beside goroutines of
// its own that keep every P busy (eight per P, spinning), against an nginx
// that answers at once. brk's workers, back from their poller, wait for a
// P behind them and read responses late: before the starved-client rule a
// 100 ms budget failed 31 to 64 requests of 12,204 by timeout and the
// phase was judged broken, the workers 14–18 % busy. Now the process's
// scheduler wait (84–101 ms at p99 in those runs; 117–134 ms with eight
// per P) marks the phase
// client-bound, and a rejection is the client's, never a break. Not
// parallel: the spinners would starve the package's other tests.
func TestStarvedClientIsNotABreak(t *testing.T) {
	ngx := testenv.StartNginx(t, testenv.NginxOptions{})
	var stop atomic.Bool
	defer stop.Store(true)
	for range 8 * runtime.GOMAXPROCS(0) {
		go func() {
			for !stop.Load() {
			}
		}()
	}
	res := runBrk(t, brk.Target{URL: "http://" + ngx.Addr + "/"},
		brk.Plan{Load: brk.Requests{Conns: 16}, Start: 4, Max: 4, Phase: time.Second, Timeout: 100 * time.Millisecond, Threads: 1, Repeat: 1})
	stop.Store(true)
	t.Log(describe(res))
	p := res.Phases[0]
	if p.ProcessWaitP99Ms == nil || *p.ProcessWaitP99Ms < 50 {
		t.Fatalf("the process's p99 wait for a CPU %v ms (nil: unmeasured) with %d goroutines spinning on %d Ps, want at least 50 (half the timeout)",
			p.ProcessWaitP99Ms, 8*runtime.GOMAXPROCS(0), runtime.GOMAXPROCS(0))
	}
	if !p.ClientBound {
		t.Fatalf("phase 0 not client-bound with the process waiting %.1f ms (p99) for a CPU", *p.ProcessWaitP99Ms)
	}
	switch {
	case res.Verdict == brk.VerdictBroken:
		t.Fatalf("a starved client judged the server: %s (%s)", res.Verdict, res.Reason)
	case res.Verdict == brk.VerdictInconclusive && !strings.Contains(res.Reason, "the client was starved: this process's goroutines waited up to"):
		t.Fatalf("inconclusive for another reason: %s", res.Reason)
	}
	t.Logf("%s (%s): %d of %d timed out, the process waiting %.1f ms (p99)", res.Verdict, res.Reason, p.Counts.Timeout, p.Counts.Attempted, *p.ProcessWaitP99Ms)
}
