package judge

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/brk-bench/brk/internal/metrics"
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
	merged := mergedViaJSON(t, a, b)
	if got, want := Judge(merged, reqPlan, 1, 8), Judge(whole, reqPlan, 1, 8); got != want || !got.Stop {
		t.Fatalf("merged %+v, whole %+v", got, want)
	}
	if l := merged.Stats.StreamLimit; l != (metrics.StreamLimit{BelowNs: sec / 2, LivedNs: sec, Lowest: 3, Known: true}) {
		t.Fatalf("merged %+v", l)
	}
}

// floored is an accepted requests-test phase at level whose connections'
// lowest floor was floor (-1: none known).
func floored(level int, floor int64) *Judged {
	m := measured(10000, 0, 0, okSetups, 4)
	if floor >= 0 {
		m.Stats.StreamLimit.ConnFloor(floor)
	}
	return &Judged{Judgement: Judgement{Accepted: true, Judged: true}, Target: level, Run: m}
}

func TestStreamCap(t *testing.T) {
	for _, c := range []struct {
		name   string
		plan   Plan
		judged []*Judged
		want   int
		ok     bool
	}{
		{"no phase", searchPlan, nil, 0, false},
		{"no limit known", searchPlan, []*Judged{floored(8, -1)}, 0, false},
		{"the connections × the floor", searchPlan, []*Judged{floored(8, 100)}, 800, true},
		{"the lowest phase's", searchPlan, []*Judged{floored(8, 100), floored(16, 4), floored(32, -1)}, 32, true},
		{"a phase without a measurement", searchPlan, []*Judged{{Target: 8}, floored(16, 10)}, 80, true},
		{"the connections test has none", Plan{Mode: Connections, Conns: 8}, []*Judged{floored(8, 100)}, 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got, ok := StreamCap(c.plan, c.judged); got != c.want || ok != c.ok {
				t.Fatalf("StreamCap %d %v, want %d %v", got, ok, c.want, c.ok)
			}
		})
	}
}

// The search grows to the stream cap, not past it, and ends done there
// saying so; a --max below the cap ends it as before; a break below the
// cap bisects as before.
func TestSearchStopsAtStreamCap(t *testing.T) {
	for _, c := range []struct {
		name     string
		max      int
		capacity int
		levels   []int
		verdict  Verdict
		reason   string
	}{
		{"held at the cap", 0, 10000, []int{8, 16, 32, 64, 128, 256, 512, 800}, Done,
			"800 concurrent requests (100 per connection) completed and accepted: the server's stream limit capped the search at 800 (SETTINGS_MAX_CONCURRENT_STREAMS 100 × 8 connections); more Plan.Conns goes further"},
		{"--max below the cap", 300, 10000, []int{8, 16, 32, 64, 128, 256, 300}, Done, "max level 300 concurrent requests"},
		{"--max above the cap", 5000, 10000, []int{8, 16, 32, 64, 128, 256, 512, 800}, Done, "capped the search at 800"},
		{"a break below the cap", 0, 600, []int{8, 16, 32, 64, 128, 256, 512, 800, 656, 584, 620, 602, 593, 597, 599, 600, 601}, Broken, "rejected at 601"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := searchPlan
			p.Levels.Max = c.max
			var judged []*Judged
			var levels []int
			var end Next
			for len(judged) < 100 {
				if end = Decide(p, judged, 0); end.End {
					break
				}
				j := floored(end.Level, 100)
				if end.Level > c.capacity {
					j.Judgement = broken(fmt.Sprintf("rejected at %d", end.Level))
				}
				judged, levels = append(judged, j), append(levels, end.Level)
			}
			if !equalInts(levels, c.levels) || end.Verdict != c.verdict || !strings.Contains(end.Reason, c.reason) {
				t.Fatalf("levels %v, end %s %q; want %v, %s %q", levels, end.Verdict, end.Reason, c.levels, c.verdict, c.reason)
			}
		})
	}
}
