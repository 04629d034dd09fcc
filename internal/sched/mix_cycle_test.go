package sched

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/brk-bench/brk/internal/conn"
	"github.com/brk-bench/brk/internal/exchange"
	"github.com/brk-bench/brk/internal/h1"
	"github.com/brk-bench/brk/internal/judge"
)

// mixTargets is the request mix of the mix cycle: 16 GET targets of
// different paths and weights 1..16.
const mixTargets = 16

// mixCycleEngine is cycleEngine with a 16-target mix over HTTP/1.1.
func mixCycleEngine(tb testing.TB, addr conn.Addr, conns int) *Engine {
	tb.Helper()
	var ts []*h1.Template
	var weights []int
	for i := range mixTargets {
		tpl, err := h1.NewTemplate(exchange.Request{Host: "127.0.0.1", Target: "/plain/" + strconv.Itoa(i)}, []byte("ok"), true)
		if err != nil {
			tb.Fatal(err)
		}
		ts = append(ts, tpl)
		weights = append(weights, i+1)
	}
	order, err := NewMix(weights)
	if err != nil {
		tb.Fatal(err)
	}
	replay := make([]bool, mixTargets)
	for i := range replay {
		replay[i] = true
	}
	e, err := Start(Config{
		Threads: 1, Conns: conns, Addr: addr, Timeout: 5 * time.Second,
		NewSession: func() Session { return h1.NewSession(ts...) },
		Mix:        &MixConfig{Order: order, Replay: replay},
	})
	if err != nil {
		tb.Fatal(err)
	}
	return e
}

// TestNoAllocationPerRequestMix is TestNoAllocationPerRequest with a
// 16-target mix: each request takes its target from the worker's cursor,
// writes that target's bytes and records that target's outcome, and
// still nothing is allocated per request. The phase's targets sum to its
// counts, in the weights' ratio within one request (one worker).
func TestNoAllocationPerRequestMix(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	addr, stop := responder(t)
	defer stop()
	e := mixCycleEngine(t, addr, 4)
	defer e.Close()
	runCycle(t, e, 4, 50*time.Millisecond)
	d := 300 * time.Millisecond
	var responses, allocs uint64
	for {
		responses, allocs = runCycle(t, e, 4, d)
		t.Logf("%v phase: %d responses, %d allocs (%.6f per response)", d, responses, allocs, float64(allocs)/float64(max(responses, 1)))
		if allocs > phaseAllocBound && responses >= minDecisive {
			t.Fatalf("%d allocations in a phase of %d responses with a mix: over the per-phase bound of %d", allocs, responses, phaseAllocBound)
		}
		if responses >= wantResponses || d >= maxCyclePhase {
			break
		}
		next := time.Duration(float64(d) * 1.5 * float64(wantResponses) / float64(max(responses, 1)))
		d = min(max(next, 2*d), maxCyclePhase)
	}
	if responses < minDecisive {
		t.Fatalf("only %d responses in a %v phase (%d needed to decide)", responses, d, minDecisive)
	}
}

// TestMixEngineCounts: one worker's phases take the mix in its order,
// continuing from phase to phase: over the run each target's attempted
// is within one of its share (one cursor), and the targets sum to the
// phase's counts.
func TestMixEngineCounts(t *testing.T) {
	addr, stop := responder(t)
	defer stop()
	e := mixCycleEngine(t, addr, 2)
	defer e.Close()
	var total [mixTargets]uint64
	var all uint64
	for range 3 {
		run, err := e.RunPhase(t.Context(), judge.PhaseSpec{Level: 6, Duration: 100 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		st := run.Stats
		if len(st.Targets) != mixTargets {
			t.Fatalf("%d targets", len(st.Targets))
		}
		var sum uint64
		for i, tg := range st.Targets {
			total[i] += tg.Counts.Attempted
			sum += tg.Counts.Attempted
			if tg.Counts.Succeeded != tg.Counts.Attempted || tg.LatencyCount != tg.Counts.Attempted || tg.Statuses[200] != tg.Counts.Attempted {
				t.Errorf("target %d: %+v, %d latencies", i, tg.Counts, tg.LatencyCount)
			}
		}
		if sum != st.Counts.Attempted {
			t.Errorf("targets sum to %d, the phase %d", sum, st.Counts.Attempted)
		}
		all += sum
	}
	W := uint64(mixTargets * (mixTargets + 1) / 2)
	for i, n := range total {
		share := float64(all) * float64(i+1) / float64(W)
		if d := float64(n) - share; d >= 1 || d <= -1 {
			t.Errorf("target %d: %d of %d, its share %.2f", i, n, all, share)
		}
	}
}

// BenchmarkCycleMix is BenchmarkCycle with a 16-target mix.
func BenchmarkCycleMix(b *testing.B) {
	for _, depth := range []int{1, 8} {
		b.Run("depth"+strconv.Itoa(depth), func(b *testing.B) {
			addr, stop := responder(b)
			defer stop()
			e := mixCycleEngine(b, addr, 1)
			defer e.Close()
			runCycle(b, e, depth, 20*time.Millisecond)
			b.ResetTimer()
			d := max(time.Duration(b.N)*2*time.Microsecond, 50*time.Millisecond)
			start := time.Now()
			resp, allocs := runCycle(b, e, depth, d)
			el := time.Since(start)
			b.StopTimer()
			b.ReportMetric(float64(el.Nanoseconds())/float64(resp), "ns/op")
			b.ReportMetric(float64(allocs)/float64(resp), "allocs/op")
			b.ReportMetric(float64(resp), "responses")
		})
	}
}

// TestMixConfigRefused: a mix without an order, or with more rules than
// targets, is refused at Start. (Every session takes a target per
// request: exchange.Session.Queue.)
func TestMixConfigRefused(t *testing.T) {
	tpl, err := h1.NewTemplate(exchange.Request{Host: "127.0.0.1", Target: "/"}, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	order, _ := NewMix([]int{1, 2})
	mixed := func() Session { return h1.NewSession(tpl, tpl) }
	for _, c := range []struct {
		mix  *MixConfig
		sess func() Session
		want string
	}{
		{&MixConfig{}, mixed, "needs its order"},
		{&MixConfig{Order: order, Replay: make([]bool, 3)}, mixed, "more status checks or replay rules"},
	} {
		_, err := Start(Config{Threads: 1, Conns: 1, Timeout: time.Second, NewSession: c.sess, Mix: c.mix})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.mix, err, c.want)
		}
	}
}
