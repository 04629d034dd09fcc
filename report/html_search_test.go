package report_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/brk-bench/brk"
)

// searchHTMLResult is a ×2 search from 8 that broke at 1,024 (held 512):
// levels spanning 128×, its break's reason the rejected phase's.
func searchHTMLResult() *brk.Result {
	levels := []int{8, 16, 32, 64, 128, 256, 512, 1024}
	var ps []*brk.PhaseStats
	for i, l := range levels {
		p := htmlPhase(i, l/8, 1000, 1000, float64(min(l, 256)*100), 1+float64(l)/100)
		p.Role = "grow"
		ps = append(ps, p)
	}
	last := ps[len(ps)-1]
	last.Accepted, last.Counts.Succeeded, last.SuccessPct = false, 900, 90
	last.Reason = "success 90% (900 of 1000) is below --accept 99.99% at 1024 concurrent requests"
	r := &brk.Result{
		Schema: 1, Test: "requests", URL: "http://127.0.0.1:1/", Protocol: "http/1.1",
		Verdict: brk.VerdictBroken, Reason: last.Reason, LastAccepted: htmlI(512), FirstRejected: htmlI(1024),
		FinalPair: &brk.FinalPair{HeldPhase: htmlI(6), BrokePhase: htmlI(7)},
		Threads:   1, Conns: 8, TimeoutMs: 1000, Accept: "99.99", Phases: ps,
		Plan: brk.Plan{Conns: 8, Start: 1, Search: &brk.Search{Growth: 2, ResolutionPct: 1}, Accept: 99.99, Threads: 1},
		Peak: &brk.Peak{Phase: 5, Level: 256, OKPerSec: 25600, P99Ms: 3.5, Accepted: true},
		Knee: &brk.Knee{Level: 256, Next: 512, GainPct: 0, P99RisePct: 80},
	}
	return r
}

// A search's levels spanning more than 10× are drawn on a logarithmic
// axis: its ×2 levels evenly spaced, the ticks powers of two, the axis
// label saying so; a linear ramp's stay linear.
func TestHTMLLogLevelAxis(t *testing.T) {
	doc := writeHTML(t, searchHTMLResult())
	checkWellFormed(t, doc)
	sc := svgFragments(t, doc)["chart-success"]
	if !strings.Contains(sc, "level (concurrent requests, log scale)") {
		t.Fatalf("no log scale label:\n%s", sc)
	}
	var xs []float64
	for _, m := range regexp.MustCompile(`<circle class="pt[^"]*" cx="([0-9.]+)"`).FindAllStringSubmatch(sc, -1) {
		x, _ := strconv.ParseFloat(m[1], 64)
		xs = append(xs, x)
	}
	if len(xs) != 8 {
		t.Fatalf("%d points, want 8:\n%s", len(xs), sc)
	}
	for i := 2; i < len(xs); i++ {
		if d0, d := xs[1]-xs[0], xs[i]-xs[i-1]; d < d0-0.5 || d > d0+0.5 {
			t.Errorf("×2 levels not evenly spaced: %v", xs)
		}
	}
	for _, l := range []string{">8<", ">32<", ">128<", ">512<"} {
		if !strings.Contains(sc, l) {
			t.Errorf("no tick %s", l)
		}
	}
	lin := writeHTML(t, htmlResult()) // levels 8 to 40: 5×
	if strings.Contains(svgFragments(t, lin)["chart-success"], "log scale") {
		t.Error("a ramp over 5× drawn on a log axis")
	}
}

// The verdict box leads with the peak and the knee, says a break's reason
// once (the summary sentence holds it) and keeps a flag on one line.
func TestHTMLPeakAndOneReason(t *testing.T) {
	r := searchHTMLResult()
	doc := writeHTML(t, r)
	for _, s := range []string{
		`<div class="peak">peak: 25,600 ok/s at 256 concurrent requests (phase 5, accepted, p99 3.50 ms)<br/>knee: 256 concurrent requests`,
	} {
		if !strings.Contains(doc, s) {
			t.Errorf("report lacks %q", s)
		}
	}
	if strings.Contains(doc, `<div class="reason run">`) {
		t.Error("the break's reason is said twice: in the summary sentence and the reason box")
	}
	// A reason the sentence does not hold is shown, its flags unbroken.
	r.Reason = "success 90% is below --accept 99.99%; search stopped at 1024: the client fell behind: give it more CPU or --threads"
	doc = writeHTML(t, r)
	if !strings.Contains(doc, `<div class="reason run">`) || !strings.Contains(doc, `<span class="nw">--threads</span>`) {
		t.Errorf("the reason box, its --threads on one line:\n%s", doc)
	}
	// An inconclusive run's headline is "Inconclusive: " and its reason:
	// no reason box repeats it (seen on a busy box).
	r.Verdict = brk.VerdictInconclusive
	r.Reason = "the box was busy in 8 of 8 phases and the runs of 24 concurrent requests disagreed"
	doc = writeHTML(t, r)
	if n := strings.Count(doc, r.Reason); n != 1 || strings.Contains(doc, `<div class="reason run">`) {
		t.Errorf("an inconclusive run's reason is in the page %d times (a reason box: %v), want once, in the headline",
			n, strings.Contains(doc, `<div class="reason run">`))
	}
}
