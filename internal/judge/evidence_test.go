package judge

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/brk-bench/brk/internal/metrics"
)

// withTimeline gives m a timeline of 100 ms spans: ok and failed per span.
func withTimeline(m *Measurement, ok, failed []uint64) *Measurement {
	tl := &metrics.Timeline{WidthNs: int64(100 * time.Millisecond), Spans: make([]metrics.Span, len(ok))}
	for i := range ok {
		tl.Spans[i].Succeeded, tl.Spans[i].Failed = ok[i], failed[i]
	}
	m.Stats.Timeline = tl
	return m
}

func spread(n int, each uint64) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = each
	}
	return out
}

// The evidence, one row per branch: margins and the binding term, a
// stall, not a stall (failures spread, or the rest of the phase also
// failing), too close to call (one failure over the allowance, or at it),
// a busy box.
func TestExamine(t *testing.T) {
	stallPlan := reqPlan
	stallPlan.Timeout = 100 * time.Millisecond
	stallFailed := spread(10, 0)
	stallFailed[4], stallFailed[5], stallFailed[6] = 10, 12, 2
	spreadFailed := spread(10, 3)
	endFailed := []uint64{0, 0, 0, 0, 0, 0, 0, 10, 12, 2}
	ratePlan := stallPlan
	ratePlan.Mode = Rate
	p99Plan := stallPlan
	p99Plan.MaxP99 = time.Millisecond // measured's latencies are 1.0–1.5 ms: all slower
	busy := func(m *Measurement) *Measurement {
		m.Other = metrics.OtherCPU{OK: true, Windows: 10, Busy: 6, MeanCores: 0.9}
		return m
	}
	halfBusy := func(m *Measurement) *Measurement {
		m.Other = metrics.OtherCPU{OK: true, Windows: 10, Busy: 5, MeanCores: 0.4}
		return m
	}
	for _, c := range []struct {
		name    string
		m       *Measurement
		plan    Plan
		binding Term
		stall   bool
		close   bool
		busy    bool
	}{
		{"clean: success binding with margin +1", measured(10000, 0, 0, okSetups, 4), reqPlan, TermSuccess, false, false, false},
		{"a stall: 24 of 24 failures in 0.3 s, the rest held", withTimeline(measured(976, 24, 0, okSetups, 4), spread(10, 97), stallFailed), stallPlan, TermSuccess, true, false, false},
		{"failures spread over the phase: no stall", withTimeline(measured(970, 30, 0, okSetups, 4), spread(10, 97), spreadFailed), stallPlan, TermSuccess, false, false, false},
		{"the rate test: failures to the phase's end (a backlog building up) are no stall", withTimeline(measured(976, 24, 0, okSetups, 4), spread(10, 97), endFailed), ratePlan, TermSuccess, false, false, false},
		{"the requests test: failures that begin late and last to the end are a stall the phase cut short", withTimeline(measured(976, 24, 0, okSetups, 4), spread(10, 97), endFailed), stallPlan, TermSuccess, true, false, false},
		{"too close: 2 failures of 10,000 where 1 is allowed", measured(9998, 2, 0, okSetups, 4), reqPlan, TermSuccess, false, true, false},
		{"too close: at the allowance", measured(9999, 1, 0, okSetups, 4), reqPlan, TermSuccess, false, true, false},
		{"not close: 3 failures where 1 is allowed", measured(9997, 3, 0, okSetups, 4), reqPlan, TermSuccess, false, false, false},
		{"p99 binding: every response slower than --max-p99", measured(10000, 0, 0, okSetups, 4), p99Plan, TermP99, false, false, false},
		{"a busy box: 6 of 10 windows", busy(measured(10000, 0, 0, okSetups, 4)), reqPlan, TermSuccess, false, false, true},
		{"half the windows busy is not a busy box", halfBusy(measured(10000, 0, 0, okSetups, 4)), reqPlan, TermSuccess, false, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			j := Judge(c.m, c.plan, 1, 8)
			e := Examine(c.m, c.plan, j)
			if e.Binding != c.binding || (e.Stall != nil) != c.stall || e.Close != c.close || e.Busy != c.busy {
				t.Fatalf("evidence %+v (stall %+v), want binding %v stall %v close %v busy %v", e, e.Stall, c.binding, c.stall, c.close, c.busy)
			}
			if c.stall {
				at, atEnd := 400*time.Millisecond, false
				if c.m.Stats.Timeline.Spans[9].Failed > 0 {
					at, atEnd = 700*time.Millisecond, true
				}
				if e.Stall.Failures != 24 || e.Stall.At != at || e.Stall.AtEnd != atEnd {
					t.Fatalf("stall %+v, want 24 failures from %v, at the end %v", e.Stall, at, atEnd)
				}
			}
			for _, m := range e.Margins {
				if m.Margin < -1 || m.Margin > 1 {
					t.Fatalf("margin %+v outside [-1, 1]", m)
				}
			}
		})
	}
}

// A stall in the phase's first spans, before a whole window has passed:
// its span and the requests inside it are those of the spans it holds
// (the window once reached past them, and its count of requests wrapped
// below zero: 18446744073709551583 in a CI run).
func TestStallAtThePhaseStart(t *testing.T) {
	plan := reqPlan
	plan.Timeout = 100 * time.Millisecond // a window of 4 spans
	failed := spread(10, 0)
	failed[0], failed[1] = 12, 12
	m := withTimeline(measured(946, 24, 0, okSetups, 4), []uint64{97, 97, 97, 97, 97, 97, 97, 97, 97, 73}, failed)
	e := Examine(m, plan, Judge(m, plan, 1, 8))
	if e.Stall == nil {
		t.Fatalf("no stall: %+v", e)
	}
	if s := *e.Stall; s.At != 0 || s.Span != 200*time.Millisecond || s.Failures != 24 || s.Requests != 24+2*97 || s.Of != 24 {
		t.Fatalf("stall %+v, want 24 failures of 218 requests from 0 s for 0.2 s", s)
	}
}

// The failures an acceptance allows: ⌊n × (1 − accept)⌋, exactly.
func TestAllowedOf(t *testing.T) {
	for _, c := range []struct {
		acc  Accept
		n    uint64
		want uint64
	}{
		{p9999, 301, 0}, {p9999, 9999, 0}, {p9999, 10000, 1}, {p9999, 29999, 2},
		{Accept{Num: 99, Den: 100}, 1000, 10}, {Accept{Num: 0, Den: 100}, 7, 7},
		{p9999, 1 << 62, (1 << 62) / 10000},
	} {
		if got := c.acc.allowedOf(c.n); got != c.want {
			t.Errorf("%s %% of %d: %d allowed, want %d", c.acc, c.n, got, c.want)
		}
		// The boundary agrees with Met.
		if c.n < 1<<40 && (!c.acc.Met(c.n-c.want, c.n) || c.want < c.n && c.acc.Met(c.n-c.want-1, c.n)) {
			t.Errorf("%s %% of %d: %d allowed disagrees with Met", c.acc, c.n, c.want)
		}
	}
}

// The responses a latency limit allows agree with the judge: for every
// phase of n responses of which k are slower than the limit, latencyRule
// rejects exactly when k > quantileAllowed, and the margin is below zero
// exactly then; tooClose brackets that boundary. The slow responses are
// well over the limit (120 ms against 100 ms), or just over it, in the
// limit's own histogram bucket (100.01 ms: the judge reads that bucket's
// highest value, 100.031 ms). The verdict is monotone in k, so k runs
// over the boundary (allowed − 2 … allowed + 3) and 0.
func TestQuantileAllowedAgreesWithTheJudge(t *testing.T) {
	for _, pct := range []float64{99, 99.9} {
		for _, slow := range []int64{120_000, 100_010} {
			t.Run(fmt.Sprintf("p%v, slow %d µs", pct, slow), func(t *testing.T) {
				t.Parallel() // a few thousand phases, no timing
				plan := reqPlan
				if pct == 99 {
					plan.MaxP99 = 100 * time.Millisecond
				} else {
					plan.MaxP999 = 100 * time.Millisecond
				}
				h := metrics.NewHistogram()
				for _, n := range phaseSizes(pct, 2100) {
					allowed := quantileAllowed(pct, n)
					for k := uint64(0); k <= min(n, allowed+3); k++ {
						if k > 0 && k+2 < allowed {
							k = allowed - 2
						}
						h.Reset()
						h.RecordValues(80_000, int64(n-k)) // 80 ms
						h.RecordValues(slow, int64(k))
						s := &metrics.Phase{Latency: h}
						s.Counts.Attempted, s.Counts.Succeeded = n, n
						rejected := latencyRule(s, plan, Names{}) != ""
						if rejected != (k > allowed) {
							t.Fatalf("p%v of %d with %d slow: the judge rejects %v, quantileAllowed says %d allowed", pct, n, k, rejected, allowed)
						}
						e := Examine(&Measurement{Stats: s}, plan, Judgement{})
						m := e.Margins[len(e.Margins)-1]
						if m.Bad != k || (m.Margin < 0) != rejected {
							t.Fatalf("p%v of %d with %d slow: margin %+v, the judge rejects %v", pct, n, k, m, rejected)
						}
						if c := tooClose(&m, plan.Accept); c != (k > 0 && k+1 >= allowed && k <= allowed+1) {
							t.Fatalf("p%v of %d with %d slow (%d allowed): too close %v", pct, n, k, allowed, c)
						}
					}
				}
			})
		}
	}
	// The CI run's phase: 92 responses allow one slower than --max-p99
	// (rank 91), 50 none.
	if a, b := quantileAllowed(99, 92), quantileAllowed(99, 50); a != 1 || b != 0 {
		t.Fatalf("p99 of 92 allows %d, of 50 %d; want 1 and 0", a, b)
	}
}

// phaseSizes are the phase sizes up to max the judge's agreement is
// checked at: every size next to one where a pct percentile's allowance
// steps up (0.5, 1.5, 2.5 … times 100/(100 − pct) responses), and others
// spread between them.
func phaseSizes(pct float64, max uint64) []uint64 {
	seen := map[uint64]bool{}
	var out []uint64
	add := func(n uint64) {
		if n >= 1 && n <= max && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	for n := uint64(1); n <= max; n += 1 + n/40 {
		add(n)
	}
	per := 100 / (100 - pct)
	for j := 0.5; j*per <= float64(max)+1; j++ {
		b := uint64(math.Round(j * per))
		add(b - 1)
		add(b)
		add(b + 1)
	}
	return out
}
