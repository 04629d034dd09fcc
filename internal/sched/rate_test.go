package sched

import (
	"context"
	"io"
	"math/rand/v2"
	"net"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/brk-bench/brk/internal/conn"
	"github.com/brk-bench/brk/internal/exchange"
	"github.com/brk-bench/brk/internal/h1"
	"github.com/brk-bench/brk/internal/judge"
	"github.com/brk-bench/brk/internal/metrics"
)

// schedAll lists the instants of n workers' shares of one phase's
// schedule, merged and sorted.
func schedAll(n int, poisson bool, t0, end int64, rate int, seed, phase uint64) []int64 {
	var all []int64
	for id := 0; id < n; id++ {
		s := schedule{id: uint64(id), n: uint64(n)}
		if poisson {
			s.pcg = new(rand.PCG)
			s.rng = rand.New(s.pcg)
		}
		s.reset(t0, end, rate, seed, phase)
		prev := int64(-1)
		for ; s.due < s.end; s.advance() {
			if s.due < prev {
				panic("a worker's schedule goes back in time")
			}
			prev = s.due
			all = append(all, s.due)
		}
	}
	slices.Sort(all)
	return all
}

// TestScheduleSplit: the workers' shares of a phase's schedule are,
// together, exactly the one-worker schedule (uniform and Poisson), and
// the uniform schedule has rate × window arrivals at t0 + k/rate.
func TestScheduleSplit(t *testing.T) {
	const t0, rate = int64(5_000_000), 1000
	end := t0 + int64(1500*time.Millisecond)
	for _, poisson := range []bool{false, true} {
		one := schedAll(1, poisson, t0, end, rate, 42, 3)
		for _, n := range []int{2, 3, 7} {
			if got := schedAll(n, poisson, t0, end, rate, 42, 3); !slices.Equal(got, one) {
				t.Errorf("poisson %v: %d workers' union (%d arrivals) differs from the one-worker schedule (%d)",
					poisson, n, len(got), len(one))
			}
		}
		if !poisson {
			if len(one) != 1500 {
				t.Errorf("uniform: %d arrivals in 1.5 s at 1000/s, want 1500", len(one))
			}
			for k, at := range one {
				if want := t0 + int64(k)*1_000_000; at != want {
					t.Fatalf("uniform arrival %d at %d, want %d", k, at, want)
				}
			}
		} else {
			// A Poisson count over 1.5 s at 1000/s: mean 1500, sd ~39.
			if len(one) < 1300 || len(one) > 1700 {
				t.Errorf("poisson: %d arrivals in 1.5 s at 1000/s", len(one))
			}
			if other := schedAll(1, true, t0, end, rate, 43, 3); slices.Equal(other, one) {
				t.Errorf("poisson: another seed gives the same schedule")
			}
			if again := schedAll(2, true, t0, end, rate, 42, 3); !slices.Equal(again, one) {
				t.Errorf("poisson: the same seed is not repeatable")
			}
		}
	}
}

func rateEngine(tb testing.TB, addr conn.Addr, conns, threads, depth int, timeout time.Duration) *Engine {
	tb.Helper()
	tpl, err := h1.NewTemplate(exchange.Request{Host: "127.0.0.1", Target: "/plain"}, []byte("ok"), true)
	if err != nil {
		tb.Fatal(err)
	}
	e, err := Start(Config{
		Threads: threads, Conns: conns, Addr: addr, Replay: true, Timeout: timeout,
		Load:       RateLoad{Depth: depth},
		NewSession: func() Session { return h1.NewSession(tpl) },
	})
	if err != nil {
		tb.Fatal(err)
	}
	return e
}

// TestRatePhaseExact: a rate phase against the in-process responder
// schedules exactly rate × window arrivals, writes every one of them and
// gives each one outcome; send lag and service time are measured.
func TestRatePhaseExact(t *testing.T) {
	addr, stop := responder(t)
	defer stop()
	e := rateEngine(t, addr, 4, 2, 1, 5*time.Second)
	defer e.Close()
	m, err := e.RunPhase(context.Background(), judge.PhaseSpec{Level: 2000, Duration: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	s := m.Stats
	t.Logf("scheduled %d written %d expired %d attempted %d succeeded %d; late mean %.1f µs; send lag p99 %d µs; service p99 %d µs",
		s.Scheduled, s.Written, s.ExpiredUnsent, s.Counts.Attempted, s.Counts.Succeeded,
		float64(s.LateNs)/float64(max(s.Scheduled, 1))/1e3, s.SendLag.ValueAtQuantile(99), s.Service.ValueAtQuantile(99))
	if s.Scheduled != 1000 {
		t.Errorf("scheduled %d in 500 ms at 2000/s, want 1000", s.Scheduled)
	}
	if s.Scheduled != s.Written+s.ExpiredUnsent {
		t.Errorf("scheduled %d != written %d + expired unsent %d", s.Scheduled, s.Written, s.ExpiredUnsent)
	}
	if s.Counts.Attempted != s.Scheduled {
		t.Errorf("attempted %d, scheduled %d: every arrival has one outcome", s.Counts.Attempted, s.Scheduled)
	}
	if s.Counts.Succeeded != s.Counts.Attempted {
		t.Errorf("%d of %d succeeded (%v)", s.Counts.Succeeded, s.Counts.Attempted, s.Counts.Failed)
	}
	if s.SendLag.TotalCount() != int64(s.Written) || s.Service.TotalCount() != int64(s.Written) {
		t.Errorf("send lag %d and service %d samples, written %d", s.SendLag.TotalCount(), s.Service.TotalCount(), s.Written)
	}
}

// TestRateNeverAnswered: against a server that never answers, every
// arrival past the slots waits, expires at its deadline unsent, and the
// phase drains within the timeout.
func TestRateNeverAnswered(t *testing.T) {
	ln, stop := silent(t)
	defer stop()
	e := rateEngine(t, ln, 2, 1, 1, 200*time.Millisecond)
	defer e.Close()
	start := time.Now()
	m, err := e.RunPhase(context.Background(), judge.PhaseSpec{Level: 1000, Duration: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	el := time.Since(start)
	s := m.Stats
	t.Logf("scheduled %d written %d expired %d counts %+v in %v", s.Scheduled, s.Written, s.ExpiredUnsent, s.Counts, el)
	if s.Scheduled != 300 || s.Counts.Attempted != 300 {
		t.Errorf("scheduled %d attempted %d, want 300", s.Scheduled, s.Counts.Attempted)
	}
	if s.Counts.Succeeded != 0 || s.Scheduled != s.Written+s.ExpiredUnsent {
		t.Errorf("succeeded %d; scheduled %d, written %d, expired unsent %d", s.Counts.Succeeded, s.Scheduled, s.Written, s.ExpiredUnsent)
	}
	// Two slots, each freed only by a timeout (and its connection's
	// replacement): most arrivals wait past their deadline unsent. One
	// taken from the queue keeps its scheduled deadline, so slots free
	// sooner than every 200 ms.
	if s.ExpiredUnsent < 150 || s.Written < 2 {
		t.Errorf("written %d, expired unsent %d: with 2 slots most arrivals must expire waiting", s.Written, s.ExpiredUnsent)
	}
	if el > 300*time.Millisecond+200*time.Millisecond+300*time.Millisecond {
		t.Errorf("phase took %v: the drain must end at the last deadline", el)
	}
}

// silent accepts connections, reads what comes and never answers.
func silent(tb testing.TB) (conn.Addr, func()) {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				io.Copy(io.Discard, c)
			}()
		}
	}()
	addrs, err := conn.Resolve(ln.Addr().String())
	if err != nil {
		tb.Fatal(err)
	}
	return addrs[0], func() { ln.Close(); <-done }
}

// TestRateNoAllocationPerRequest is TestNoAllocationPerRequest for the
// rate path: a phase at a fixed rate allocates under a per-phase bound.
func TestRateNoAllocationPerRequest(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	addr, stop := responder(t)
	defer stop()
	e := rateEngine(t, addr, 4, 1, 1, 5*time.Second)
	defer e.Close()
	rateCycle(t, e, 5000, 100*time.Millisecond) // warm up
	responses, allocs := rateCycle(t, e, 20000, 2*time.Second)
	t.Logf("%d responses, %d allocs", responses, allocs)
	if responses < minDecisive {
		t.Fatalf("only %d responses: too few to decide", responses)
	}
	if allocs > phaseAllocBound {
		t.Fatalf("%d allocations in a rate phase of %d responses: over the per-phase bound of %d", allocs, responses, phaseAllocBound)
	}
}

func rateCycle(tb testing.TB, e *Engine, rate int, d time.Duration) (responses, mallocs uint64) {
	tb.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	run, err := e.RunPhase(context.Background(), judge.PhaseSpec{Level: rate, Duration: d})
	runtime.ReadMemStats(&after)
	if err != nil {
		tb.Fatal(err)
	}
	c := run.Stats.Counts
	if c.Succeeded != c.Attempted || c.Attempted == 0 {
		tb.Fatalf("phase: %d of %d succeeded (%+v)", c.Succeeded, c.Attempted, c.Failed)
	}
	return c.Succeeded, after.Mallocs - before.Mallocs
}

// BenchmarkRateCycle measures the rate path (schedule → slot → write →
// read → record) at 20,000 requests/s over 4 connections: allocs/op is
// per response.
func BenchmarkRateCycle(b *testing.B) {
	addr, stop := responder(b)
	defer stop()
	e := rateEngine(b, addr, 4, 1, 1, 5*time.Second)
	defer e.Close()
	rateCycle(b, e, 5000, 50*time.Millisecond)
	b.ResetTimer()
	d := max(time.Duration(b.N)*50*time.Microsecond, 100*time.Millisecond)
	start := time.Now()
	resp, allocs := rateCycle(b, e, 20000, d)
	el := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(el.Nanoseconds())/float64(resp), "ns/op")
	b.ReportMetric(float64(allocs)/float64(resp), "allocs/op")
	b.ReportMetric(float64(resp), "responses")
}

// TestJudgeRate: a rate phase needs no connection at full depth; a
// client that fell more than 1 % behind its schedule makes the phase
// unfulfilled (inconclusive), even when outcomes fell below --accept; a
// client on schedule is judged by outcomes.
func TestJudgeRate(t *testing.T) {
	acc, err := judge.ParseAccept("99")
	if err != nil {
		t.Fatal(err)
	}
	plan := judge.Plan{Mode: judge.Rate, Conns: 16, Levels: judge.Levels{Start: 1000, Climb: judge.Linear{Pace: 1000}}, Phase: time.Second, Accept: acc, RateDepth: 1}
	phase := func(succeeded, timeouts uint64, meanLate time.Duration) *judge.Measurement {
		s := metrics.NewPhase()
		s.Counts.Succeeded = succeeded
		s.Counts.Failed[metrics.Timeout] = timeouts
		s.Counts.Attempted = succeeded + timeouts
		s.Scheduled = s.Counts.Attempted
		s.Written = s.Scheduled
		s.LateNs = s.Scheduled * uint64(meanLate)
		s.Setups.Attempted, s.Setups.Established = 16, 16
		return &judge.Measurement{Stats: s, Active: time.Second, Elapsed: time.Second, Boxes: 1}
	}
	if j := judge.Judge(phase(1000, 0, time.Millisecond), plan, 0, 1000); !j.Accepted {
		t.Errorf("on schedule, all succeeded: %+v", j)
	}
	if j := judge.Judge(phase(900, 100, time.Millisecond), plan, 0, 1000); j.Verdict != judge.Broken || !strings.Contains(j.Reason, "1000 requests/s") {
		t.Errorf("on schedule, 90 %% succeeded: %+v", j)
	}
	for _, m := range []*judge.Measurement{phase(1000, 0, 20*time.Millisecond), phase(900, 100, 20*time.Millisecond)} {
		if j := judge.Judge(m, plan, 0, 1000); j.Verdict != judge.Inconclusive || !strings.Contains(j.Reason, "fell behind its arrival schedule") {
			t.Errorf("2 %% behind schedule: %+v", j)
		}
	}
}

// TestScheduleShardSplit: shards I of N, each with its own thread count,
// take arrivals k ≡ I (mod N) of the one schedule (uniform and Poisson
// from the shared seed): the shards' union is exactly the one-box
// schedule, shard I's arrivals are the ones of index ≡ I (mod N), and the
// shards' counts differ by at most one arrival (uniform).
func TestScheduleShardSplit(t *testing.T) {
	const t0, rate = int64(1_000_000), 997
	end := t0 + int64(1200*time.Millisecond)
	for _, poisson := range []bool{false, true} {
		one := schedAll(1, poisson, t0, end, rate, 7, 2)
		index := map[int64]int{}
		for k, at := range one {
			index[at] = k
		}
		for _, n := range []int{2, 3, 5} {
			var union []int64
			var counts []int
			for i := range n {
				threads := 1 + i%3
				var mine []int64
				for id := range threads {
					p := newRatePolicy(RateLoad{Poisson: poisson, Seed: 7, ShardIndex: i, Shards: n}, threads, id)
					s := &p.sched
					s.reset(t0, end, rate, 7, 2)
					for ; s.due < s.end; s.advance() {
						if s.k%uint64(n) != uint64(i) {
							t.Fatalf("shard %d/%d worker %d took arrival %d", i, n, id, s.k)
						}
						if k, ok := index[s.due]; ok && uint64(k) != s.k && !poisson {
							t.Fatalf("shard %d/%d: arrival %d at the instant of %d", i, n, s.k, k)
						}
						mine = append(mine, s.due)
					}
				}
				counts = append(counts, len(mine))
				union = append(union, mine...)
			}
			slices.Sort(union)
			if !slices.Equal(union, one) {
				t.Errorf("poisson %v: %d shards' union (%d arrivals) differs from one box's (%d)", poisson, n, len(union), len(one))
			}
			if !poisson && slices.Max(counts)-slices.Min(counts) > 1 {
				t.Errorf("uniform: %d shards took %v arrivals", n, counts)
			}
		}
	}
}
