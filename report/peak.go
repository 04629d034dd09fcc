package report

import (
	"fmt"
	"io"

	brk "github.com/brk-bench/brk"
)

// PeakLine is the run's peak throughput beside its verdict: `peak: 9,146
// ok/s at 12 concurrent requests (phase 2, rejected, p99 6.79 ms); of the
// accepted phases 8,544 ok/s at 8` ("" without one).
func PeakLine(r *brk.Result) string {
	p := r.Peak
	if p == nil {
		return ""
	}
	unit := r.Test.Unit()
	s := fmt.Sprintf("peak: %s ok/s at %d %s (phase %d, %s, p99 %s)", num(p.OKPerSec), p.Level, unit, p.Phase, peakWord(r, p), Ms(p.P99Ms))
	if a := r.PeakAccepted; a != nil {
		s += fmt.Sprintf("; of the accepted phases %s ok/s at %d", num(a.OKPerSec), a.Level)
	}
	return s
}

// KneeLine is the run's knee: `knee: 16 concurrent requests (×2 to 32
// added 3 % ok/s while the p99 rose 80 %)` ("" without one).
func KneeLine(r *brk.Result) string {
	k := r.Knee
	if k == nil {
		return ""
	}
	return fmt.Sprintf("knee: %d %s (the step to %d added %.0f %% ok/s while the p99 rose %.0f %%)",
		k.Level, r.Test.Unit(), k.Next, k.GainPct, k.P99RisePct)
}

// peakWord is the peak phase's verdict: accepted, rejected, or
// inconclusive (a phase the client could not drive, say).
func peakWord(r *brk.Result, p *brk.Peak) string {
	if p.Accepted {
		return "accepted"
	}
	for _, ph := range r.Phases {
		switch {
		case ph.Index != p.Phase:
		case ph.Inconclusive:
			return "inconclusive"
		case ph.NotJudged:
			return "not judged"
		}
	}
	return "rejected"
}

// writePeak writes the peak and knee lines that there are.
func writePeak(w io.Writer, r *brk.Result) {
	for _, l := range []string{PeakLine(r), KneeLine(r)} {
		if l != "" {
			fmt.Fprintln(w, l)
		}
	}
}
