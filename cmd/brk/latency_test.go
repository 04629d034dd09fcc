package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/brk-bench/brk/bench"
	"github.com/brk-bench/brk/internal/metrics"
)

// latencyBlockRE is one phase's --latency block: its header, then the
// table and the histogram up to the next blank line or the final line.
var latencyBlockRE = regexp.MustCompile(`(?m)^latency of phase (\d+), level (\d+) [a-z ]+ \(([a-z ]+)\): (\d+) responses\n((?:  .*\n)+)`)

// --latency against the fixture: a ramp to its break prints the final
// pair's two phases, each table's percentiles the JSON's (latency_ms, the
// distribution's p75, the histogram's p99.99) and each histogram's bars
// summing to the phase's responses.
func TestLatencyFlag(t *testing.T) {
	fx := startFixture(t, bench.FixtureConfig{Capacity: 4, Service: 20 * time.Millisecond})
	path := filepath.Join(t.TempDir(), "r.json")
	r := runBrk(t, fx.URL("/plain"), "--conn", "8", "--start", "1", "--pace", "1", "--max", "12",
		"--phase", "300ms", "--timeout", "140ms", "--threads", "1", "--latency", "--json", path)
	// On a busy box brk may end inconclusive, saying so (a busy suite run:
	// "the box was busy in 8 of 8 phases … the runs of 24 concurrent
	// requests disagreed", held 24, broke at 32): its final pair is
	// printed all the same.
	busy := busyInconclusive(r)
	if r.code != 0 && r.code != 1 && !busy {
		t.Fatalf("exit %d\n%s", r.code, r)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		FinalPair *struct {
			Held  *int `json:"held_phase"`
			Broke *int `json:"broke_phase"`
		} `json:"final_pair"`
		Phases []struct {
			Index   int `json:"index"`
			Latency struct {
				Count                    uint64
				P50, P90, P99, P999, Max float64
			} `json:"latency_ms"`
			Hdr  string `json:"latency_hdr"`
			Dist []struct {
				Percentile float64 `json:"percentile"`
				Ms         float64 `json:"value_ms"`
				Count      uint64  `json:"count"`
			} `json:"latency_distribution"`
		} `json:"phases"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	var want []int // the final pair's phases, held first
	if fp := rep.FinalPair; fp != nil {
		for _, i := range []*int{fp.Held, fp.Broke} {
			if i != nil {
				want = append(want, *i)
			}
		}
	}
	if len(want) == 0 {
		if busy {
			t.Skipf("inconclusive on a busy box without a final pair: nothing to print\n%s", r)
		}
		t.Fatalf("no final pair\n%s", r)
	}
	blocks := latencyBlockRE.FindAllStringSubmatch(r.stdout, -1)
	if len(blocks) != len(want) {
		t.Fatalf("%d latency blocks, want %d (the final pair %v)\n%s", len(blocks), len(want), want, r)
	}
	ms := func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) + " ms" }
	for i, m := range blocks {
		idx, _ := strconv.Atoi(m[1])
		if idx != want[i] {
			t.Errorf("block %d: phase %d, want %d", i, idx, want[i])
			continue
		}
		p := rep.Phases[idx]
		if n, _ := strconv.ParseUint(m[4], 10, 64); n != p.Latency.Count {
			t.Errorf("phase %d: %d responses, the JSON %d", idx, n, p.Latency.Count)
		}
		if len(p.Dist) < 100 || p.Dist[0].Percentile != 0 || p.Dist[len(p.Dist)-1].Percentile != 99.999 {
			t.Errorf("phase %d: latency_distribution of %d points", idx, len(p.Dist))
		}
		var p75 float64
		for _, d := range p.Dist {
			if d.Percentile == 75 {
				p75 = d.Ms
			}
		}
		h, err := metrics.DecodeHistogram(p.Hdr)
		if err != nil {
			t.Fatal(err)
		}
		table := map[string]string{}
		var bars uint64
		for _, line := range strings.Split(strings.TrimRight(m[5], "\n"), "\n") {
			f := strings.Fields(line)
			switch {
			case len(f) == 4 && f[1] == "%" || len(f) == 3 && f[0] == "max":
				table[f[0]] = f[len(f)-2] + " ms"
			case len(f) >= 4 && f[1] == "–":
				n, err := strconv.ParseUint(f[3], 10, 64)
				if err != nil {
					t.Errorf("phase %d: bar %q", idx, line)
				}
				bars += n
			}
		}
		for k, v := range map[string]float64{"50": p.Latency.P50, "75": p75, "90": p.Latency.P90, "99": p.Latency.P99,
			"99.9": p.Latency.P999, "99.99": float64(h.ValueAtPercentile(99.99)) / 1e3, "max": p.Latency.Max} {
			if table[k] != ms(v) {
				t.Errorf("phase %d: %s %% is %q, the JSON's %q", idx, k, table[k], ms(v))
			}
		}
		if bars != p.Latency.Count || bars == 0 {
			t.Errorf("phase %d: the bars sum to %d, the phase had %d responses\n%s", idx, bars, p.Latency.Count, m[0])
		}
	}
	if t.Failed() {
		t.Log(r)
	}
}
