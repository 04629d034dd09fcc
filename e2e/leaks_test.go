package e2e

import (
	"context"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/brk-bench/brk"
	"github.com/brk-bench/brk/bench"
)

// openFDs counts the process's open descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	return len(ents)
}

// settle waits (bounded) for goroutines and descriptors to return to their
// baseline: exiting goroutines still count for a moment.
func settle(t *testing.T, goroutines, fds int) (int, int) {
	t.Helper()
	var g, f int
	for i := 0; i < 100; i++ {
		g, f = runtime.NumGoroutine(), openFDs(t)
		if g <= goroutines && f <= fds {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	return g, f
}

// TestRunLeavesNothingBehind checks that after Run returns — done, broken,
// cancelled, or failed at setup — no goroutine and no descriptor of the
// run is left (workers exit, which also releases their locked threads;
// pollers and sockets are closed; the progress reporter stops).
func TestRunLeavesNothingBehind(t *testing.T) {
	plain, err := bench.StartFixture(bench.FixtureConfig{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	// One request in service, 40 ms each: of 4 outstanding the first is
	// answered in 40 ms and the last after 160 ms, past a 100 ms timeout
	// (a server that answers nothing in time is the user's mistake, not a
	// break). The budget is wide so that the scheduler waits of a -race
	// test process on a busy box (10 ms at p99 in CI) stay below what
	// brk calls a starved client (half the 100 ms budget): a 20 ms
	// timeout left the verdict to the box.
	slow, err := bench.StartFixture(bench.FixtureConfig{Addr: "127.0.0.1:0", Capacity: 1, Service: 40 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	nothing := closedAddr(t)

	cases := []struct {
		name   string
		url    string
		plan   brk.Plan
		cancel time.Duration
		want   brk.Verdict
	}{
		{"done", plain.URL("/plain"), brk.Plan{Conns: 8, Max: 2, Phase: 150 * time.Millisecond, Threads: 2}, 0, brk.VerdictDone},
		{"broken", slow.URL("/plain"), brk.Plan{Conns: 4, Max: 2, Phase: 750 * time.Millisecond, Timeout: 100 * time.Millisecond, Threads: 2}, 0, brk.VerdictBroken},
		{"cancelled", plain.URL("/plain"), brk.Plan{Conns: 8, Phase: 5 * time.Second, Threads: 2}, 200 * time.Millisecond, brk.VerdictInterrupted},
		{"setup failed", "http://" + nothing + "/", brk.Plan{Conns: 4, Phase: time.Second, Threads: 2}, 0, brk.VerdictInconclusive},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// Let earlier runs' connections (fixture side) settle first.
			g0, f0 := settle(t, runtime.NumGoroutine(), openFDs(t))
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if c.cancel > 0 {
				time.AfterFunc(c.cancel, cancel)
			}
			obs := &countingProgress{}
			r, err := brk.Run(ctx, brk.Target{URL: c.url}, c.plan, obs)
			if err != nil {
				t.Fatal(err)
			}
			if r.Verdict != c.want {
				t.Fatalf("verdict %s (%s), want %s", r.Verdict, r.Reason, c.want)
			}
			// The fixture closes its side of the connections too; give
			// its goroutines the same bounded settle.
			g1, f1 := settle(t, g0, f0)
			if g1 > g0 {
				buf := make([]byte, 1<<16)
				n := runtime.Stack(buf, true)
				t.Fatalf("goroutines %d after Run, %d before\n%s", g1, g0, buf[:n])
			}
			if f1 > f0 {
				t.Fatalf("descriptors %d after Run, %d before", f1, f0)
			}
		})
	}
}

// countingProgress is an observer with a progress reporter, so the test
// also covers the reporter goroutine's exit.
type countingProgress struct{ n int }

func (c *countingProgress) WorkersStarted(int)            {}
func (c *countingProgress) PhaseStarted(brk.PhaseStart)   {}
func (c *countingProgress) PhaseFinished(*brk.PhaseStats) {}
func (c *countingProgress) Progress(brk.Progress)         { c.n++ }
