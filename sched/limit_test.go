package sched

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/brk-bench/brk/metrics"
)

// limited is an accepted requests-test measurement whose connections had
// the given (below, lived) times under a stream limit of lowest.
func limited(lowest int64, conns ...[2]int64) *Measurement {
	m := measured(10000, 0, 0, okSetups, 4)
	for _, c := range conns {
		m.Stats.StreamLimit.Conn(c[0], c[1], lowest)
	}
	return m
}

func TestJudgeStreamLimit(t *testing.T) {
	sec := int64(time.Second)
	for _, c := range []struct {
		name   string
		m      *Measurement
		plan   Plan
		depth  int
		stop   bool
		reason string
	}{
		{"no limit", limited(0), reqPlan, 8, false, ""},
		{"limit at or above the target all along", limited(2, [2]int64{0, sec}, [2]int64{0, sec}), reqPlan, 8, false, ""},
		{"below for 0.5 %", limited(2, [2]int64{sec / 200, sec}, [2]int64{0, sec}), reqPlan, 8, false, ""},
		{"below for exactly 1 %", limited(2, [2]int64{sec / 100, sec}), reqPlan, 8, false, ""},
		{"below for 1.1 % of one connection's time", limited(2, [2]int64{0, sec}, [2]int64{11 * sec / 1000, sec}), reqPlan, 8, true,
			"target unfulfilled: a connection's stream limit stayed below 8 for 1.1 % of its time in the phase (the server's SETTINGS_MAX_CONCURRENT_STREAMS fell to 2)"},
		// A short connection's share counts as much as a long one's.
		{"a short connection mostly below", limited(1, [2]int64{0, 10 * sec}, [2]int64{90 * sec / 1000, sec / 10}), reqPlan, 8, true, "for 90 % of its time"},
		{"the connections test has no stream rule", limited(0, [2]int64{sec, sec}), connsPlan, 4, false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			j := Judge(c.m, c.plan, 1, levelOf(c.plan, c.depth))
			if j.Stop != c.stop || c.stop && (j.Verdict != Inconclusive || !j.Inconclusive || !strings.Contains(j.Reason, c.reason)) {
				t.Fatalf("got %+v, want stop %v, inconclusive, reason containing %q", j, c.stop, c.reason)
			}
		})
	}
}

// The worst connection and the lowest limit survive JSON and a merge of
// two load boxes: the merge is judged as the whole.
func TestStreamLimitMerges(t *testing.T) {
	sec := int64(time.Second)
	a, b := limited(4, [2]int64{0, sec}), limited(3, [2]int64{sec / 2, sec})
	whole := limited(3, [2]int64{0, sec}, [2]int64{sec / 2, sec})
	var merged Measurement
	for _, half := range []*Measurement{a, b} {
		js, err := json.Marshal(half)
		if err != nil {
			t.Fatal(err)
		}
		var back Measurement
		if err := json.Unmarshal(js, &back); err != nil {
			t.Fatal(err)
		}
		merged.Merge(&back)
	}
	if got, want := Judge(&merged, reqPlan, 1, 8), Judge(whole, reqPlan, 1, 8); got != want || !got.Stop {
		t.Fatalf("merged %+v, whole %+v", got, want)
	}
	if l := merged.Stats.StreamLimit; l != (metrics.StreamLimit{BelowNs: sec / 2, LivedNs: sec, Lowest: 3, Known: true}) {
		t.Fatalf("merged %+v", l)
	}
}
