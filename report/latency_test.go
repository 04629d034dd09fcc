package report_test

import (
	"strings"
	"testing"

	"github.com/brk-bench/brk"
	"github.com/brk-bench/brk/internal/metrics"
	"github.com/brk-bench/brk/report"
)

// The --latency text: a one-phase run shows its phase; a ramp its final
// pair; a phase without responses says so. The histogram's bins cover the
// minimum to the maximum and count every value once, log-spaced for a
// long tail, even for a narrow spread.
func TestWriteLatency(t *testing.T) {
	h := metrics.NewHistogram()
	for v := int64(1); v <= 5000; v++ {
		h.RecordValue(1000 + v%700) // 1.0 .. 1.7 ms
	}
	h.RecordValue(90_000) // one 90 ms outlier
	enc, err := metrics.EncodeHistogram(h)
	if err != nil {
		t.Fatal(err)
	}
	one := &brk.Result{Test: brk.ModeRequests, Phases: []*brk.PhaseStats{{Index: 0, Level: 64, LatencyHdr: enc}}}
	var b strings.Builder
	if err := report.WriteLatency(&b, one); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, s := range []string{"latency of phase 0, level 64 concurrent requests (the only phase): 5001 responses",
		"  50 %", "  75 %", "  99.99 %", "  max         90.047 ms", "histogram, responses by latency (ms):"} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q:\n%s", s, out)
		}
	}
	bins := report.LatencyHistogram(h)
	var sum int64
	for i, bn := range bins {
		sum += bn.Count
		if i > 0 && bn.FromUs != bins[i-1].ToUs {
			t.Errorf("bin %d starts at %d, the previous ends at %d", i, bn.FromUs, bins[i-1].ToUs)
		}
	}
	if len(bins) != report.LatencyBins || sum != h.TotalCount() || bins[0].FromUs != h.Min() || bins[len(bins)-1].ToUs != h.Max() {
		t.Errorf("%d bins from %d to %d summing to %d; want %d from %d to %d summing to %d",
			len(bins), bins[0].FromUs, bins[len(bins)-1].ToUs, sum, report.LatencyBins, h.Min(), h.Max(), h.TotalCount())
	}
	// Log-spaced: the tail's single value has a bin of its own, far from
	// the bulk's.
	if last := bins[len(bins)-1]; last.Count != 1 || bins[len(bins)-1].FromUs < 10*bins[0].ToUs {
		t.Errorf("long tail not log-spaced: %+v", bins)
	}
	// A narrow spread: even bins, all values counted.
	n := metrics.NewHistogram()
	n.RecordValue(1000)
	n.RecordValue(1003)
	n.RecordValue(1003)
	nb := report.LatencyHistogram(n)
	var ns int64
	for _, bn := range nb {
		ns += bn.Count
	}
	if ns != 3 || len(nb) > report.LatencyBins || len(nb) < 1 {
		t.Errorf("narrow spread: %+v", nb)
	}

	held, broke := 0, 1
	ramp := &brk.Result{Test: brk.ModeRate, FinalPair: &brk.FinalPair{HeldPhase: &held, BrokePhase: &broke},
		Phases: []*brk.PhaseStats{{Index: 0, Level: 100, LatencyHdr: enc}, {Index: 1, Level: 200}, {Index: 2, Level: 150}}}
	b.Reset()
	if err := report.WriteLatency(&b, ramp); err != nil {
		t.Fatal(err)
	}
	out = b.String()
	if !strings.Contains(out, "latency of phase 0, level 100 requests/s (the last accepted level): 5001 responses") ||
		!strings.Contains(out, "latency of phase 1, level 200 requests/s (the lowest rejected level): no responses") ||
		strings.Contains(out, "phase 2") {
		t.Errorf("a ramp's --latency is not its final pair's:\n%s", out)
	}
}
