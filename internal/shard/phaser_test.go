package shard

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brk-bench/brk/internal/judge"
	"github.com/brk-bench/brk/internal/metrics"
	"github.com/brk-bench/brk/internal/testenv"
)

// fakeLocal stands in for one shard's engine: each phase lasts its
// duration and succeeds 10 × depth requests on one connection.
type fakeLocal struct {
	hang    bool // never ends a phase until cancelled
	workers int  // its worker threads (default 1)
	run     *shardRun
	onRun   func(n int)
	mu      sync.Mutex
	n       int
	starts  []time.Time
}

func (f *fakeLocal) RunPhase(ctx context.Context, spec judge.PhaseSpec) (*judge.Measurement, error) {
	f.mu.Lock()
	n := f.n
	f.n++
	f.starts = append(f.starts, time.Now())
	f.mu.Unlock()
	if f.onRun != nil {
		f.onRun(n)
	}
	f.mu.Lock()
	hang := f.hang
	f.mu.Unlock()
	m := &judge.Measurement{Boxes: 1, Stats: metrics.NewPhase()}
	d := spec.Duration
	if hang {
		d = time.Hour
	}
	select {
	case <-time.After(d):
	case <-ctx.Done():
		m.Interrupted = true
	}
	s := m.Stats
	s.Counts.Succeeded = uint64(10 * spec.Level)
	s.Counts.Attempted = s.Counts.Succeeded
	s.ReachedOnce = 1
	s.Workers = max(f.workers, 1)
	s.ActiveNs = uint64(spec.Duration)
	for i := 0; i < spec.Level; i++ {
		s.Latency.RecordValue(int64(1000 * (i + 1)))
	}
	m.Active, m.Elapsed = spec.Duration, spec.Duration
	return m, nil
}

func testPlan(t *testing.T, shards int) judge.Plan {
	acc, err := judge.ParseAccept("99")
	if err != nil {
		t.Fatal(err)
	}
	return judge.Plan{Mode: judge.Requests, Conns: shards, Levels: judge.Levels{Start: shards, Max: 3 * shards, Climb: judge.Linear{Pace: shards}}, Phase: 100 * time.Millisecond, Accept: acc, Addr: "test"}
}

type nopObserver struct{}

func (nopObserver) PhaseStarted(int, int, int, judge.Role, judge.Bracket, time.Duration) {}
func (nopObserver) PhaseFinished(*judge.Judged)                                          {}

type shardRun struct {
	out   *judge.Outcome
	err   error
	ph    *Lockstep
	local *fakeLocal
	took  time.Duration
}

// runShards runs n in-process shards over loopback; mod adjusts shard i's
// config and local engine before it joins.
func runShards(t *testing.T, n int, mod func(i int, c *Config, f *fakeLocal)) []*shardRun {
	t.Helper()
	plan := testPlan(t, n)
	// The coordinator waits for a phase's reports until the next slot's
	// start less a quarter of the allowance (at most 250 ms): with a 1 s
	// allowance and 100 ms phases, 850 ms after the phase's start. With
	// 300 ms it was 325 ms, and on a busy box (busy suite runs, a loop on
	// each core) a shard that ran its phase on time still reported after
	// that ("shard 2 did not report phase 0 in time").
	base := Config{Spec: Spec{Count: n}, Addr: "127.0.0.1:0", Token: "s3cret", PlanHash: "plan-1",
		Lead: 300 * time.Millisecond, Tolerance: 200 * time.Millisecond, Allowance: time.Second,
		JoinTimeout: 5 * time.Second, Plan: plan,
		// Each shard has one of the plan's connections: its share of a
		// level (a total) is the level ÷ the shards.
		LocalSpec: func(ps judge.PhaseSpec) judge.PhaseSpec { ps.Level /= n; return ps }}
	runs := make([]*shardRun, n)
	var wg sync.WaitGroup
	start := func(i int, cfg Config) {
		defer wg.Done()
		r := runs[i]
		t0 := time.Now()
		ph, err := Join(context.Background(), cfg)
		if err != nil {
			r.err = err
			r.took = time.Since(t0)
			return
		}
		r.ph = ph
		defer ph.Close()
		r.out = judge.NewRamp(ph, plan, nopObserver{}).Run(context.Background())
		r.took = time.Since(t0)
	}
	cfg0 := base
	runs[0] = &shardRun{local: &fakeLocal{}}
	runs[0].local.run = runs[0]
	cfg0.Local = runs[0].local
	if mod != nil {
		mod(0, &cfg0, runs[0].local)
	}
	ph0, err := Join(context.Background(), cfg0)
	if err != nil {
		t.Fatal(err)
	}
	addr := ph0.Addr()
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer ph0.Close()
		t0 := time.Now()
		runs[0].ph = ph0
		runs[0].out = judge.NewRamp(ph0, plan, nopObserver{}).Run(context.Background())
		runs[0].took = time.Since(t0)
	}()
	for i := 1; i < n; i++ {
		cfg := base
		cfg.Spec.Index = i
		cfg.Addr = addr
		runs[i] = &shardRun{local: &fakeLocal{}}
		runs[i].local.run = runs[i]
		cfg.Local = runs[i].local
		if mod != nil {
			mod(i, &cfg, runs[i].local)
		}
		wg.Add(1)
		go start(i, cfg)
	}
	wg.Wait()
	return runs
}

func TestShardsMergeInStep(t *testing.T) {
	testenv.Parallel(t, testenv.Waits)
	runs := runShards(t, 3, nil)
	for i, r := range runs {
		if r.err != nil {
			t.Fatalf("shard %d: %v", i, r.err)
		}
		if r.out.Verdict != judge.Done || len(r.out.Phases) != 3 {
			t.Fatalf("shard %d: verdict %v (%s), %d phases", i, r.out.Verdict, r.out.Reason, len(r.out.Phases))
		}
		for n, j := range r.out.Phases {
			c := j.Run.Stats.Counts
			if want := uint64(3 * 10 * (n + 1)); c.Succeeded != want || j.Run.Boxes != 3 {
				t.Errorf("shard %d phase %d: merged %d successes over %d boxes, want %d over 3", i, n, c.Succeeded, j.Run.Boxes, want)
			}
			if got := j.Run.Stats.Latency.TotalCount(); got != int64(3*(n+1)) {
				t.Errorf("shard %d phase %d: merged histogram holds %d, want %d", i, n, got, 3*(n+1))
			}
			if j.Target != 3*(n+1) {
				t.Errorf("shard %d phase %d: level %d, want the whole plan's %d", i, n, j.Target, 3*(n+1))
			}
		}
		if r.out.LastAccepted != 9 {
			t.Errorf("shard %d: last accepted %d, want 9", i, r.out.LastAccepted)
		}
	}
	// In step: every shard started each phase at the same boundary.
	for n := 0; n < 3; n++ {
		t0 := runs[0].local.starts[n]
		for i := 1; i < 3; i++ {
			if d := runs[i].local.starts[n].Sub(t0).Abs(); d > 50*time.Millisecond {
				t.Errorf("phase %d: shard %d started %s apart from shard 0", n, i, d)
			}
		}
	}
	if !runs[1].ph.StartAt().Equal(runs[0].ph.StartAt()) {
		t.Errorf("start times differ: %v vs %v", runs[1].ph.StartAt(), runs[0].ph.StartAt())
	}
	for _, l := range runs[0].ph.Shards() {
		if l.Max > 100*time.Millisecond {
			t.Errorf("shard %d lateness %s", l.Index, l.Max)
		}
	}
}

// The refusals wait for the coordinator's 5 s join timeout, and assert
// nothing about time: they wait beside each other.

// refusedJoinTimeout is how long a coordinator waits for a shard that was
// refused and never joins: the run's other shards join over loopback in
// milliseconds, so 2 s is ample (runShards' 5 s was the tests' wall time).
const refusedJoinTimeout = 2 * time.Second

func TestShardWrongTokenRefused(t *testing.T) {
	testenv.Parallel(t, testenv.Waits)
	runs := runShards(t, 2, func(i int, c *Config, f *fakeLocal) {
		c.JoinTimeout = refusedJoinTimeout
		if i == 1 {
			c.Token = "wrong"
		}
	})
	if runs[1].err == nil || !strings.Contains(runs[1].err.Error(), "authentication failed") {
		t.Fatalf("shard 1 with a wrong token: %v", runs[1].err)
	}
	if o := runs[0].out; o.Verdict != judge.Inconclusive || !strings.Contains(o.Reason, "did not join") {
		t.Fatalf("coordinator: %v %s", o.Verdict, o.Reason)
	}
	if len(runs[0].out.Phases) != 0 || runs[0].local.n != 0 {
		t.Fatalf("the coordinator ran phases without every shard")
	}
}

func TestShardDuplicateIndexRefused(t *testing.T) {
	testenv.Parallel(t, testenv.Waits)
	// Shard 2 claims index 1 too: exactly one of the two is refused, and
	// the run cannot start without shard 2.
	runs := runShards(t, 3, func(i int, c *Config, f *fakeLocal) {
		c.JoinTimeout = refusedJoinTimeout
		if i == 2 {
			c.Spec.Index = 1
		}
	})
	refused := 0
	for _, r := range runs[1:] {
		if r.err != nil && strings.Contains(r.err.Error(), "duplicate shard index 1") {
			refused++
		}
	}
	if refused != 1 {
		t.Fatalf("want one duplicate refused: %v / %v", runs[1].err, runs[2].err)
	}
	if o := runs[0].out; o.Verdict != judge.Inconclusive || !strings.Contains(o.Reason, "[2] did not join") {
		t.Fatalf("coordinator: %v %s", o.Verdict, o.Reason)
	}
}

func TestShardLostMidPhase(t *testing.T) {
	testenv.Parallel(t, testenv.Waits)
	// Shard 2 dies in phase 1 (its connection closes, as when its process
	// is killed); the coordinator stops every shard within a bounded time,
	// inconclusive.
	runs := runShards(t, 3, func(i int, c *Config, f *fakeLocal) {
		if i == 2 {
			f.onRun = func(n int) {
				if n == 1 {
					go func() { time.Sleep(30 * time.Millisecond); f.run.ph.conn.Close() }()
				}
			}
		}
		if i == 0 {
			f.onRun = func(n int) { f.mu.Lock(); f.hang = n == 1; f.mu.Unlock() } // only a stop ends its phase 1
		}
	})
	for i, r := range runs[:2] {
		if r.out == nil || r.out.Verdict != judge.Inconclusive || !strings.Contains(r.out.Reason, "shard 2 was lost") {
			t.Fatalf("shard %d: %+v %v", i, r.out, r.err)
		}
		// The phase in progress is in the outcome, inconclusive, its
		// reason naming the lost shard (it was left out).
		if len(r.out.Phases) != 2 {
			t.Errorf("shard %d: %d phases judged, want 2", i, len(r.out.Phases))
		} else if j := r.out.Phases[1]; j.Accepted || j.Verdict != judge.Inconclusive || !strings.Contains(j.Reason, "shard 2 was lost") {
			t.Errorf("shard %d: phase 1 accepted %v, verdict %v %q; want inconclusive, shard 2 lost", i, j.Accepted, j.Verdict, j.Reason)
		}
		if r.took > 4*time.Second {
			t.Errorf("shard %d took %s to stop", i, r.took)
		}
	}
}

func TestShardSilentIsInconclusive(t *testing.T) {
	testenv.Parallel(t, testenv.Waits)
	// Shard 1's phase 0 overruns its slot: it does not report in time.
	runs := runShards(t, 2, func(i int, c *Config, f *fakeLocal) {
		if i == 1 {
			f.onRun = func(n int) { time.Sleep(time.Second) }
		}
	})
	if o := runs[0].out; o.Verdict != judge.Inconclusive || !strings.Contains(o.Reason, "shard 1 did not report phase 0 in time") {
		t.Fatalf("coordinator: %v %q", o.Verdict, o.Reason)
	}
	if o := runs[1].out; o.Verdict != judge.Inconclusive || !strings.Contains(o.Reason, "did not report phase 0") {
		t.Fatalf("shard 1: %v %q", o.Verdict, o.Reason)
	}
}

func TestShardLateJoinFailsClosed(t *testing.T) {
	testenv.Parallel(t, testenv.Waits)
	runs := runShards(t, 2, func(i int, c *Config, f *fakeLocal) {
		c.StartAt = time.Now().Add(400 * time.Millisecond)
		if i == 1 {
			time.Sleep(800 * time.Millisecond) // past StartAt + tolerance
		}
	})
	if runs[1].err == nil || !strings.Contains(runs[1].err.Error(), "join deadline") {
		t.Fatalf("late shard: %v", runs[1].err)
	}
	// It never dialled: no dial error to quote (it said "…: <nil>").
	if msg := runs[1].err.Error(); strings.Contains(msg, "<nil>") || !strings.Contains(msg, "shard 1 is too late to join") ||
		!strings.Contains(msg, "before its first attempt") {
		t.Errorf("late shard: %q, want it too late before its first attempt, without a <nil> error", msg)
	}
	if o := runs[0].out; o.Verdict != judge.Inconclusive || !strings.Contains(o.Reason, "did not join") || runs[0].local.n != 0 {
		t.Fatalf("coordinator: %v %q, %d phases run", o.Verdict, o.Reason, runs[0].local.n)
	}
}

func TestShardLateStartFailsClosed(t *testing.T) {
	testenv.Parallel(t, testenv.Waits)
	// Shard 1 joined in time but its process stalls past the tolerance
	// before phase 0: it fails closed and says how late it was; the
	// coordinator stops.
	// Its word reaches the coordinator before phase 0's report deadline
	// (runShards: 850 ms after the start; with 325 ms it came after it on
	// a busy box).
	runs := runShards(t, 2, func(i int, c *Config, f *fakeLocal) {
		if i == 1 {
			c.stall = func(n int) { time.Sleep(250 * time.Millisecond) } // past the 200 ms tolerance
		}
	})
	if o := runs[1].out; o.Verdict != judge.Inconclusive || !strings.Contains(o.Reason, "shard 1 started phase 0") || !strings.Contains(o.Reason, "late") {
		t.Fatalf("late shard: %v %q", o.Verdict, o.Reason)
	}
	if runs[1].local.n != 0 {
		t.Fatalf("the late shard sent load")
	}
	if o := runs[0].out; o.Verdict != judge.Inconclusive || !strings.Contains(o.Reason, "shard 1 stopped: shard 1 started phase 0") {
		t.Fatalf("coordinator: %v %q", o.Verdict, o.Reason)
	}
}

// TestShardThreadsAtCoordinator: shard 0 knows every shard's worker
// threads (its "shards" entries carry them, as brk merge's do), from the
// measurements they report.
func TestShardThreadsAtCoordinator(t *testing.T) {
	testenv.Parallel(t, testenv.Waits)
	runs := runShards(t, 3, func(i int, c *Config, f *fakeLocal) { f.workers = i + 1 })
	if runs[0].out == nil || runs[0].out.Verdict != judge.Done {
		t.Fatalf("coordinator: %+v", runs[0].out)
	}
	for _, l := range runs[0].ph.Shards() {
		if l.Threads != l.Index+1 {
			t.Errorf("shard %d: %d threads, want %d", l.Index, l.Threads, l.Index+1)
		}
	}
}

// TestMergeNamesShardBehind: a rate phase merged from three shards, one of
// which took its arrivals up 30 ms late on average over a 1 s window (3 %
// of its share short, 1 % of the whole): the merge is judged unfulfilled
// on the merged shortfall and the reason names shard 2 alone; with that
// shard on time the merge is accepted.
func TestMergeNamesShardBehind(t *testing.T) {
	testenv.Parallel(t, testenv.Waits)
	acc, err := judge.ParseAccept("99")
	if err != nil {
		t.Fatal(err)
	}
	plan := judge.Plan{Mode: judge.Rate, Conns: 3, Phase: time.Second, Accept: acc, Addr: "test", RateDepth: 1}
	box := func(lateMs float64) *judge.Measurement {
		m := &judge.Measurement{Boxes: 1, Stats: metrics.NewPhase(), Active: time.Second, Elapsed: time.Second}
		s := m.Stats
		s.Scheduled, s.Written, s.Counts.Succeeded, s.Counts.Attempted = 100, 100, 100, 100
		s.LateNs = uint64(lateMs * 1e6 * 100)
		return m
	}
	m := Merge([]*judge.Measurement{box(0.1), box(0.2), box(31)})
	if len(m.Behind) != 1 || m.Behind[0].Shard != 2 {
		t.Fatalf("behind %+v, want shard 2", m.Behind)
	}
	j := judge.Judge(m, plan, 0, 300)
	if j.Verdict != judge.Inconclusive || !strings.Contains(j.Reason, "target unfulfilled") || !strings.Contains(j.Reason, "behind on shard 2 (3.1 % short)") {
		t.Errorf("judged %+v", j)
	}
	if m := Merge([]*judge.Measurement{box(0.1), box(0.2), box(5)}); len(m.Behind) != 0 || !judge.Judge(m, plan, 0, 300).Accepted {
		t.Errorf("on time: behind %+v, judged %+v", m.Behind, judge.Judge(m, plan, 0, 300))
	}
}
