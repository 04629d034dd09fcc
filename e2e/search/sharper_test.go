package search

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/brk-bench/brk"
	"github.com/brk-bench/brk/bench"
	"github.com/brk-bench/brk/internal/e2ekit"
	"github.com/brk-bench/brk/internal/testenv"
)

// The capacity model (M/D/K with a FIFO queue): K requests in service at
// once, each for D; with n requests outstanding the last in line waits
// ceil(n/K)·D. The requests test at depth d on C connections holds n = C·d
// requests, so a phase passes while ceil(C·d/K)·D stays within the timeout.

// TestRefineLandsOnThePredictedPair: K=4, D=20 ms, 8 connections, 140 ms
// timeout. Depth 3 (24 outstanding) waits at most 6·20 = 120 ms; a 25th
// request waits 7·20 = 140 ms, the timeout: the break lies between 24 and
// 25 concurrent requests. A pace of 2 jumps from depth 3 (24) to depth 5
// (40); --refine bisects in single units of the level (32, 28, 26, 25)
// and lands on 24/25, five runs in a row.
func TestRefineLandsOnThePredictedPair(t *testing.T) {
	testenv.ParallelFirst(t, testenv.InProcess)
	fx := startFixtureT(t, bench.FixtureConfig{Capacity: 4, Service: 20 * time.Millisecond})
	plan := brk.Plan{Conns: 8, Start: 1, Pace: 2, Phase: 400 * time.Millisecond, Timeout: 140 * time.Millisecond,
		Threads: 1, Refine: true}
	stalls, busyRuns := 0, 1
	for run := 0; run < 5; run++ {
		res := runBrk(t, brk.Target{URL: fx.URL("/plain"), ExpectBody: []byte("ok")}, plan)
		checkAccounting(t, res)
		if res.Verdict == brk.VerdictBroken && deref(res.LastAccepted) == 24 && deref(res.FirstRejected) == 25 {
			continue
		}
		if skipBusy(t, busyRuns, res) {
			busyRuns++
			run--
			continue
		}
		// A stalled machine only makes latency worse: it can break a
		// run early, with nothing but timeouts, never late.
		if res.FirstRejected != nil && *res.FirstRejected < 25 && onlyTimeouts(res) && stalls < 2 {
			stalls++
			t.Logf("run %d broke early on a stall (%s); again", run, res.Reason)
			run--
			continue
		}
		t.Fatalf("run %d: %s %v/%v (%s), want broken between 24 and 25", run, res.Verdict, deref(res.LastAccepted), deref(res.FirstRejected), describe(res))
	}
}

// TestMaxP99RejectsWhereTheTailCrosses: the same capacity with a 1 s
// timeout keeps every request successful, while the tail grows 40 ms per
// depth (p99 ≈ 40·d ms): --max-p99 100ms rejects depth 3 (≈120 ms) after
// depth 2 (≈80 ms); without it the run goes on to --max.
func TestMaxP99RejectsWhereTheTailCrosses(t *testing.T) {
	testenv.Parallel(t, testenv.InProcess)
	fx := startFixtureT(t, bench.FixtureConfig{Capacity: 4, Service: 20 * time.Millisecond})
	target := brk.Target{URL: fx.URL("/plain"), ExpectBody: []byte("ok")}
	plan := brk.Plan{Conns: 8, Start: 1, Pace: 1, Max: 4, Phase: 400 * time.Millisecond, Timeout: time.Second, Threads: 1}
	res := runBrk(t, target, plan)
	if res.Verdict != brk.VerdictDone {
		t.Fatalf("without --max-p99: %s", describe(res))
	}
	plan.MaxP99 = 100 * time.Millisecond
	for attempt := 0; ; attempt++ {
		res = runBrk(t, target, plan)
		if res.Verdict == brk.VerdictBroken && deref(res.FirstRejected) == 24 && strings.Contains(res.Reason, "above Plan.MaxP99 100ms") {
			last := res.Phases[len(res.Phases)-1]
			if last.Counts.Succeeded != last.Counts.Attempted {
				t.Fatalf("the rejected phase lost requests: %+v", last.Counts)
			}
			return
		}
		if attempt < 2 && res.FirstRejected != nil && *res.FirstRejected < 24 {
			t.Logf("broke early (%s), again", res.Reason)
			continue
		}
		// On a busy box brk may say it cannot tell (the runs of a level
		// disagreed): again, then nothing to check.
		if attempt < 2 && res.Verdict == brk.VerdictInconclusive && 2*e2ekit.BusyPhases(res) > len(res.Phases) {
			t.Logf("inconclusive on a busy box (%s), again", res.Reason)
			continue
		}
		e2ekit.SkipOnNoise(t, res)
		t.Fatalf("with --max-p99 100ms: %s", describe(res))
	}
}

// TestServerPIDAgreesWithProc: --server-pid on nginx's worker reports CPU
// that agrees with /proc/PID/stat read around the run: never more than
// /proc's (10 % and a clock tick for each reading over), and no less than
// /proc's but for what nginx did outside the phases (its set-ups and
// closes between them: the run's time outside its phases at the phases'
// CPU rate, 10 % over) and a tick for each reading.
func TestServerPIDAgreesWithProc(t *testing.T) {
	testenv.Parallel(t, testenv.InProcess)
	ngx := testenv.StartNginx(t, testenv.NginxOptions{})
	workers := ngx.WorkerPIDs(t)
	if len(workers) != 1 {
		t.Fatalf("nginx workers %v", workers)
	}
	pid := workers[0]
	before, t0 := procCPUTicks(t, pid), time.Now()
	res := runBrk(t, brk.Target{URL: "http://" + ngx.Addr + "/"},
		brk.Plan{Conns: 16, Start: 4, Pace: 4, Max: 8, Phase: time.Second, Timeout: time.Second, Threads: 1, ServerPIDs: []int{pid}})
	after, wall := procCPUTicks(t, pid), time.Since(t0).Seconds()
	if res.Verdict != brk.VerdictDone {
		t.Fatalf("%s", describe(res))
	}
	var reported, phases float64
	for _, ph := range res.Phases {
		phases += ph.DurationS
		if len(ph.Server) != 1 || ph.Server[0].PID != pid || ph.Server[0].Gone || ph.Server[0].UsPerResponse <= 0 || ph.Server[0].RSSBytes == 0 {
			t.Fatalf("phase %d: server %+v", ph.Index, ph.Server)
		}
		reported += ph.Server[0].UserS + ph.Server[0].SystemS
	}
	read := float64(after-before) / 100
	const tick = 0.01 // s: /proc/PID/stat's clock tick, one per reading
	outside := 1.1 * max(wall-phases, 0) * reported / phases
	t.Logf("brk reported %.2f s of nginx CPU in %.2f s of phases; /proc read around the run (%.2f s) %.2f s; outside the phases at most %.3f s",
		reported, phases, wall, read, outside)
	if read <= 0.1 || reported < read-outside-2*tick || reported > 1.1*read+2*tick {
		t.Fatalf("brk reported %.2f s, /proc says %.2f s", reported, read)
	}
	// A process that exits mid-run is reported gone, never fatal.
	short := exec.Command("sleep", "0.4")
	if err := short.Start(); err != nil {
		t.Fatal(err)
	}
	go short.Wait()
	res = runBrk(t, brk.Target{URL: "http://" + ngx.Addr + "/"},
		brk.Plan{Conns: 4, Start: 1, Max: 3, Phase: 300 * time.Millisecond, Threads: 1, ServerPIDs: []int{short.Process.Pid}})
	last := res.Phases[len(res.Phases)-1]
	if res.Verdict != brk.VerdictDone || len(last.Server) != 1 || !last.Server[0].Gone {
		t.Fatalf("a server that exited: %s; last phase server %+v", describe(res), last.Server)
	}
}

// procCPUTicks reads utime+stime of pid in clock ticks.
func procCPUTicks(t *testing.T, pid int) uint64 {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	f := bytes.Fields(b[bytes.LastIndexByte(b, ')')+1:])
	u, _ := strconv.ParseUint(string(f[11]), 10, 64)
	s, _ := strconv.ParseUint(string(f[12]), 10, 64)
	return u + s
}

// TestABFindsEachSidesBreak: two fixtures of capacity 4 and 8 (D = 20 ms,
// 16 connections, 140 ms timeout), phases in turns. A: depth 1 (16
// outstanding) waits 80 ms, depth 2 (32) 160 ms: broken at 32. B: depth 3
// (48) waits 120 ms, depth 4 (64) 160 ms: broken at 64.
func TestABFindsEachSidesBreak(t *testing.T) {
	testenv.Parallel(t, testenv.InProcess)
	a := startFixtureT(t, bench.FixtureConfig{Capacity: 4, Service: 20 * time.Millisecond})
	b := startFixtureT(t, bench.FixtureConfig{Capacity: 8, Service: 20 * time.Millisecond})
	plan := brk.Plan{Load: brk.Requests{Conns: 16}, Start: 1, Pace: 1, Phase: 400 * time.Millisecond, Timeout: 140 * time.Millisecond, Threads: 1}
	for attempt := 0; ; attempt++ {
		var order []string
		ctx, cancel := context.WithTimeout(context.Background(), e2ekit.RunTimeout)
		res, err := brk.AB(ctx,
			brk.Target{URL: a.URL("/plain"), ExpectBody: []byte("ok")}, brk.Target{URL: b.URL("/plain"), ExpectBody: []byte("ok")},
			plan, orderObserver{side: "A", order: &order}, orderObserver{side: "B", order: &order})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		checkAccounting(t, res.A)
		checkAccounting(t, res.B)
		if skipBusy(t, attempt+1, res.A, res.B) {
			continue
		}
		if got := strings.Join(order, " "); !strings.HasPrefix(got, "A0 B0 A1 B1") {
			t.Fatalf("phases ran in the order %s, want turns", got)
		}
		okA := res.A.Verdict == brk.VerdictBroken && deref(res.A.FirstRejected) == 32
		okB := res.B.Verdict == brk.VerdictBroken && deref(res.B.FirstRejected) == 64
		if okA && okB {
			if res.ExitCode() != 1 {
				t.Fatalf("exit code %d for two broken ramps", res.ExitCode())
			}
			return
		}
		early := res.A.FirstRejected != nil && *res.A.FirstRejected < 32 || res.B.FirstRejected != nil && *res.B.FirstRejected < 64
		if attempt < 2 && early && onlyTimeouts(res.A) && onlyTimeouts(res.B) {
			t.Logf("a side broke early on a stall; again")
			continue
		}
		t.Fatalf("A: %s\nB: %s", describe(res.A), describe(res.B))
	}
}

type orderObserver struct {
	brk.NopObserver
	side  string
	order *[]string
}

func (o orderObserver) PhaseStarted(p brk.PhaseStart) {
	*o.order = append(*o.order, o.side+strconv.Itoa(p.Index))
}

// onlyTimeouts reports whether every failure of res is a timeout or an
// abandoned follower of one.
func onlyTimeouts(res *brk.Result) bool {
	c := total(res)
	return failures(c) == c.Timeout+c.Abandoned
}
