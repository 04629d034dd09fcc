package report_test

import (
	"fmt"
	"strings"
	"testing"

	brk "github.com/brk-bench/brk"
)

// scatterResult is htmlResult with every phase's 2,000 sampled
// responses, latencies lo…hi ms spread over the phase's second.
func scatterResult(phases int, lo, hi float64) *brk.Result {
	r := htmlResult()
	var ps []*brk.PhaseStats
	for i := range phases {
		p := *r.Phases[i%len(r.Phases)]
		p.Index, p.Level = i, i+1
		p.Timeline = &brk.Timeline{StartS: float64(i) * 1.2, WidthS: 0.1, Points: make([]brk.TimelinePoint, 10)}
		for j := range 2000 {
			p.Scatter = append(p.Scatter, brk.ScatterPoint{AtS: p.Timeline.StartS + float64(j)/2000, Ms: lo + (hi-lo)*float64(j%97)/96})
		}
		ps = append(ps, &p)
	}
	r.Phases = ps
	return r
}

// The scatter: one path of dots per phase holding each of its sampled
// responses, a logarithmic latency axis when they span more than 20×
// (linear otherwise), the SLA's lines; a search of 20 phases at 2,000
// points each keeps the whole page under 1 MB; no chart without samples
// (a report read back from JSON).
func TestHTMLScatter(t *testing.T) {
	for _, c := range []struct {
		name   string
		r      *brk.Result
		scale  string
		points int
	}{
		{"a narrow spread, linear", scatterResult(5, 2, 30), "linear", 5 * 2000},
		{"a wide spread, logarithmic", scatterResult(5, 0.2, 900), "log", 5 * 2000},
		{"a search of 20 phases", scatterResult(20, 0.05, 1200), "log", 20 * 2000},
	} {
		t.Run(c.name, func(t *testing.T) {
			doc := writeHTML(t, c.r)
			checkWellFormed(t, doc)
			sc, ok := svgFragments(t, doc)["chart-scatter"]
			if !ok {
				t.Fatal("no scatter chart")
			}
			if dataPoints(t, sc) != c.points || !strings.Contains(sc, fmt.Sprintf(`data-y-scale="%s"`, c.scale)) {
				t.Errorf("want %d points on a %s axis:\n%.600s", c.points, c.scale, sc)
			}
			if got := strings.Count(sc, `class="scatter"`); got != len(c.r.Phases) {
				t.Errorf("%d dot paths, want one per phase (%d)", got, len(c.r.Phases))
			}
			if got := strings.Count(sc, "h0"); got != c.points {
				t.Errorf("%d dots drawn, want %d", got, c.points)
			}
			for _, s := range []string{"timeout 140 ms", "p99 limit 20 ms", "of a rejected phase"} {
				if !strings.Contains(sc, s) {
					t.Errorf("the scatter lacks %q", s)
				}
			}
			if len(doc) >= 1<<20 {
				t.Errorf("page %d bytes, want under 1 MB", len(doc))
			}
			t.Logf("page %d bytes, scatter %d", len(doc), len(sc))
		})
	}
	sharded := scatterResult(2, 1, 5)
	sharded.Shard = &brk.ShardInfo{Index: 0, Count: 3}
	if sc := svgFragments(t, writeHTML(t, sharded))["chart-scatter"]; !strings.Contains(sc, "this box&#39;s sampled responses over time (shard 0 of 3;") {
		t.Errorf("a shard's scatter does not say it holds this box's responses only:\n%.400s", sc)
	}
	if _, ok := svgFragments(t, writeHTML(t, htmlResult()))["chart-scatter"]; ok {
		t.Error("a scatter chart without sampled responses")
	}
}
