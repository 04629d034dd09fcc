package sched

import (
	"context"
	"strings"
	"testing"
	"time"
)

// capacityPhaser accepts every depth up to capacity and rejects above it;
// flaky depths are rejected on every second run.
type capacityPhaser struct {
	capacity int
	flaky    map[int]bool
	runs     map[int]int
	depths   []int
}

func (c *capacityPhaser) RunPhase(_ context.Context, spec PhaseSpec) (*Measurement, error) {
	c.depths = append(c.depths, spec.Depth)
	c.runs[spec.Depth]++
	ok := spec.Depth <= c.capacity && !(c.flaky[spec.Depth] && c.runs[spec.Depth]%2 == 0)
	if ok {
		return measured(1000, 0, 0, okSetups, 4), nil
	}
	return measured(900, 100, 0, okSetups, 4), nil
}

type nopHooks struct{ probes []bool }

func (h *nopHooks) PhaseStarted(int, int, int) {}
func (h *nopHooks) PhaseFinished(j *Judged)    { h.probes = append(h.probes, j.Probe) }

func TestRefineBisectsToAdjacentLevels(t *testing.T) {
	for _, c := range []struct {
		name       string
		capacity   int
		flaky      map[int]bool
		repeat     int
		wantDepths []int
		lo, hi     int // depths
	}{
		{"bisect", 13, nil, 1, []int{1, 9, 17, 13, 15, 14}, 13, 14},
		{"repeat: accepted probes run twice", 13, nil, 2, []int{1, 9, 17, 13, 13, 15, 14}, 13, 14},
		{"repeat: a probe rejected on its second run is rejected", 13, map[int]bool{13: true}, 2, []int{1, 9, 17, 13, 13, 11, 11, 12, 12}, 12, 13},
		{"break at the first phase", 0, nil, 1, []int{1}, 0, 1},
		{"adjacent already", 9, nil, 1, []int{1, 9, 17, 13, 11, 10}, 9, 10},
	} {
		t.Run(c.name, func(t *testing.T) {
			ph := &capacityPhaser{capacity: c.capacity, flaky: c.flaky, runs: map[int]int{}}
			hooks := &nopHooks{}
			plan := Plan{Mode: Requests, Conns: 4, Start: 1, Pace: 8, Phase: time.Second, Accept: Accept{Num: 9999, Den: 10000}, Refine: true, Repeat: c.repeat}
			out := Drive(context.Background(), ph, plan, hooks)
			if !equalInts(ph.depths, c.wantDepths) {
				t.Fatalf("phases at depths %v, want %v", ph.depths, c.wantDepths)
			}
			wantLo := -1
			if c.lo > 0 {
				wantLo = 4 * c.lo
			}
			if out.Verdict != Broken || out.LastAccepted != wantLo || out.FirstRejected != 4*c.hi {
				t.Fatalf("outcome %v %d/%d (%s), want broken %d/%d", out.Verdict, out.LastAccepted, out.FirstRejected, out.Reason, wantLo, 4*c.hi)
			}
			if !strings.Contains(out.Reason, "success 90%") {
				t.Fatalf("reason %q", out.Reason)
			}
			for i, p := range hooks.probes {
				if want := i >= 3; p != want && len(c.wantDepths) > 3 {
					t.Fatalf("phase %d probe=%v", i, p)
				}
			}
		})
	}
}

func TestNoRefineStopsAtFirstRejection(t *testing.T) {
	ph := &capacityPhaser{capacity: 13, runs: map[int]int{}}
	out := Drive(context.Background(), ph, Plan{Mode: Requests, Conns: 4, Start: 1, Pace: 8, Phase: time.Second, Accept: Accept{Num: 9999, Den: 10000}}, &nopHooks{})
	if !equalInts(ph.depths, []int{1, 9, 17}) || out.LastAccepted != 36 || out.FirstRejected != 68 {
		t.Fatalf("depths %v outcome %+v", ph.depths, out)
	}
}

func TestLatencyLimits(t *testing.T) {
	m := measured(10000, 0, 0, okSetups, 4)
	m.Stats.Latency.Reset()
	for i := 0; i < 1000; i++ {
		v := int64(10_000) // 10 ms
		if i >= 985 {
			v = 183_000 // the slowest 1.5 %: 183 ms
		}
		m.Stats.Latency.RecordValue(v)
	}
	plan := reqPlan
	plan.MaxP99 = 150 * time.Millisecond
	j := Judge(m, plan, 1, 2)
	if j.Verdict != Broken || !strings.Contains(j.Reason, "p99 183 ms above --max-p99 150ms") {
		t.Fatalf("judgement %+v", j)
	}
	plan.MaxP99 = 200 * time.Millisecond
	if j := Judge(m, plan, 1, 2); !j.Accepted {
		t.Fatalf("p99 under the limit: %+v", j)
	}
	plan.MaxP999 = 100 * time.Millisecond
	if j := Judge(m, plan, 1, 2); j.Verdict != Broken || !strings.Contains(j.Reason, "p99.9 183 ms above --max-p999 100ms") {
		t.Fatalf("p99.9: %+v", j)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
