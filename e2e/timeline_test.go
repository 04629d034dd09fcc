package e2e

import (
	"slices"
	"testing"
	"time"

	"github.com/brk-bench/brk"
	"github.com/brk-bench/brk/internal/testenv"
)

// TestTimelineShowsStall: a server that stops answering for 1 s of every
// 2 s shows in a phase's timeline. The requests test (closed loop, 16
// connections) gets almost nothing answered while the server stalls; a
// one-second span overlaps a 1 s stall by at least half, so some whole
// span inside the phase has at most about half the successes of the
// busiest. A span's p99 is 0 when it had no complete response (the
// 16 responses a stall delays are too few to move the next span's p99).
func TestTimelineShowsStall(t *testing.T) {
	testenv.Parallel(t, testenv.Waits) // a 2 s stall shows beside other tests too
	addr := stallServer(t, 2*time.Second, time.Second)
	target := brk.Target{URL: "http://" + addr + "/", ExpectBody: []byte("ok")}
	res := runBrk(t, target, brk.Plan{Conns: 16, Start: 1, Max: 1, Phase: 5 * time.Second,
		Timeout: 3 * time.Second, Threads: 1})
	checkAccounting(t, res)
	if len(res.Phases) != 1 || res.Phases[0].Timeline == nil {
		t.Fatalf("want one phase with a timeline: %s", describe(res))
	}
	tl := res.Phases[0].Timeline
	pts := tl.Points
	if tl.WidthS != 0.1 || len(pts) < 50 {
		t.Fatalf("timeline of %d points of %g s for a 5 s phase", len(pts), tl.WidthS)
	}
	for i, p := range pts {
		if p.Succeeded > 0 && p.P99Ms == 0 || p.Succeeded+p.Failed == 0 && p.P99Ms != 0 {
			t.Errorf("point %d: p99 %.1f ms with %d outcomes", i, p.P99Ms, p.Succeeded+p.Failed)
		}
	}
	// The admission window's five seconds, ten 100 ms points each.
	ok := make([]uint64, 5)
	for i := range ok {
		var failed uint64
		for _, p := range pts[i*10 : (i+1)*10] {
			ok[i] += p.Succeeded
			failed += p.Failed
		}
		t.Logf("second %d: %d succeeded, %d failed", i, ok[i], failed)
	}
	busiest, quietest := slices.Max(ok), slices.Min(ok)
	if busiest == 0 || float64(quietest) > 0.6*float64(busiest) {
		t.Errorf("successes per second %v: no stall visible (quietest %d, busiest %d)", ok, quietest, busiest)
	}
}
