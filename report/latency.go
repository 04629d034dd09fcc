package report

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/brk-bench/brk"
	"github.com/brk-bench/brk/internal/metrics"
)

// LatencyPercentiles are the percentiles of the --latency table, as wrk
// --latency prints them and more; the table ends with the maximum.
var LatencyPercentiles = []float64{50, 75, 90, 99, 99.9, 99.99}

// LatencyBins is the most bars of the --latency histogram.
const LatencyBins = 12

// latencyBarWidth is the longest bar, in characters.
const latencyBarWidth = 40

// LatencyPhase is a phase whose latency --latency shows, with what it is
// in the run.
type LatencyPhase struct {
	Phase *brk.PhaseStats
	What  string // "the only phase", "the last accepted level", "the lowest rejected level", "the last phase"
}

// LatencyPhases are the phases whose latency --latency shows: a run's only
// phase; otherwise its final pair (the last accepted and the lowest
// rejected level's phases, PairPhases), or the last phase where there is
// neither.
func LatencyPhases(r *brk.Result) []LatencyPhase {
	if r == nil || len(r.Phases) == 0 {
		return nil
	}
	if len(r.Phases) == 1 {
		return []LatencyPhase{{r.Phases[0], "the only phase"}}
	}
	held, broke := PairPhases(r)
	var out []LatencyPhase
	if held != nil {
		out = append(out, LatencyPhase{held, "the last accepted level"})
	}
	if broke != nil {
		out = append(out, LatencyPhase{broke, "the lowest rejected level"})
	}
	if len(out) == 0 {
		out = append(out, LatencyPhase{r.Phases[len(r.Phases)-1], "the last phase"})
	}
	return out
}

// WriteLatency writes the latency distribution of LatencyPhases(r), each
// from its merged HdrHistogram (PhaseStats.LatencyHdr): the percentile
// table (50, 75, 90, 99, 99.9, 99.99 and the maximum, in ms with µs
// precision, the values latency_ms reports) and a histogram of its
// responses in at most LatencyBins bars (log-spaced edges when the
// maximum is more than 4 × the minimum, else even ones), each bar its
// responses; the bars sum to the phase's responses.
func WriteLatency(w io.Writer, r *brk.Result) error {
	for _, lp := range LatencyPhases(r) {
		if err := writePhaseLatency(w, r.Test, lp); err != nil {
			return err
		}
	}
	return nil
}

func writePhaseLatency(w io.Writer, test brk.Mode, lp LatencyPhase) error {
	p := lp.Phase
	fmt.Fprintf(w, "\nlatency of phase %d, level %d %s (%s): ", p.Index, p.Level, test.Unit(), lp.What)
	h, err := metrics.DecodeHistogram(p.LatencyHdr)
	if err != nil {
		fmt.Fprintln(w, "histogram unreadable")
		return fmt.Errorf("phase %d: latency_hdr: %w", p.Index, err)
	}
	n := h.TotalCount()
	if n == 0 {
		fmt.Fprintln(w, "no responses")
		return nil
	}
	fmt.Fprintf(w, "%d responses\n", n)
	fmt.Fprintf(w, "  %-8s %12s\n", "percent", "latency")
	for _, q := range LatencyPercentiles {
		fmt.Fprintf(w, "  %-8s %12s\n", strconv.FormatFloat(q, 'f', -1, 64)+" %", latencyMs(h.ValueAtPercentile(q)))
	}
	fmt.Fprintf(w, "  %-8s %12s\n", "max", latencyMs(h.Max()))
	bins := LatencyHistogram(h)
	fmt.Fprintf(w, "  histogram, responses by latency (ms):\n")
	var top int64
	for _, b := range bins {
		top = max(top, b.Count)
	}
	for _, b := range bins {
		bar := 0
		if b.Count > 0 {
			bar = max(1, int(math.Round(float64(b.Count)/float64(top)*latencyBarWidth)))
		}
		line := fmt.Sprintf("  %10s – %10s %10d  %s", fmtUsMs(b.FromUs), fmtUsMs(b.ToUs), b.Count, strings.Repeat("■", bar))
		fmt.Fprintln(w, strings.TrimRight(line, " "))
	}
	return nil
}

// latencyMs writes µs as ms with µs precision: "1.234 ms".
func latencyMs(us int64) string { return fmtUsMs(us) + " ms" }

func fmtUsMs(us int64) string { return strconv.FormatFloat(float64(us)/1e3, 'f', 3, 64) }

// LatencyBin is one bar of a latency histogram: the responses whose
// latency (µs, its histogram bucket's highest equivalent value) is above
// FromUs (at FromUs too in the first bin) and at most ToUs.
type LatencyBin struct {
	FromUs, ToUs int64
	Count        int64
}

// LatencyHistogram bins h's values from its minimum to its maximum in at
// most LatencyBins bins: log-spaced edges when the maximum is more than 4
// × the minimum (a long tail keeps its shape), else even ones; every
// value lands in one bin, so the counts sum to h.TotalCount().
func LatencyHistogram(h *hdrhistogram.Histogram) []LatencyBin {
	if h == nil || h.TotalCount() == 0 {
		return nil
	}
	lo, hi := h.Min(), h.Max()
	lo = max(lo, 1)
	n := LatencyBins
	if hi-lo+1 < int64(n) {
		n = int(hi - lo + 1)
	}
	edges := make([]int64, n+1) // bin i: (edges[i], edges[i+1]]; bin 0 from edges[0]
	edges[0], edges[n] = lo, hi
	logScale := hi > 4*lo
	for i := 1; i < n; i++ {
		f := float64(i) / float64(n)
		var e float64
		if logScale {
			e = float64(lo) * math.Pow(float64(hi)/float64(lo), f)
		} else {
			e = float64(lo) + f*float64(hi-lo)
		}
		edges[i] = max(int64(math.Round(e)), edges[i-1]+1)
	}
	bins := make([]LatencyBin, n)
	for i := range bins {
		bins[i] = LatencyBin{FromUs: edges[i], ToUs: edges[i+1]}
	}
	b := 0
	for _, bar := range h.Distribution() {
		if bar.Count == 0 {
			continue
		}
		v := min(max(bar.To, lo), hi)
		for b < n-1 && v > bins[b].ToUs {
			b++
		}
		bins[b].Count += bar.Count
	}
	return bins
}
