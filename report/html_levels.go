package report

import (
	"fmt"
	"html/template"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/brk-bench/brk"
)

// breakMark is where the run broke: the first rejected level, or the
// level of the phase that ended the run inconclusive; nil when neither.
func breakMark(r *brk.Result, ps []*brk.PhaseStats) *vmark {
	from := math.NaN()
	if r.LastAccepted != nil {
		from = float64(*r.LastAccepted)
	}
	if r.FirstRejected != nil {
		return &vmark{x: float64(*r.FirstRejected), from: from, label: fmt.Sprintf("broke at %d", *r.FirstRejected)}
	}
	if r.Verdict == brk.VerdictInconclusive {
		// The lowest inconclusive level above the last accepted: a
		// search whose client could not drive a level bisects below it.
		low := -1
		for _, p := range ps {
			if p.Inconclusive && !(float64(p.Level) <= from) && (low < 0 || p.Level < low) {
				low = p.Level
			}
		}
		if low >= 0 {
			return &vmark{x: float64(low), from: from, label: fmt.Sprintf("inconclusive at %d", low)}
		}
	}
	return nil
}

// latencyLimit is a horizontal line on the latency chart.
type latencyLimit struct {
	ms           float64
	label, class string
	color, dash  string
}

// latencyLimits are the run's request timeout and its latency SLA
// (--max-p99, --max-p999), from the plan as run (the top level's timeout
// where the plan has none).
func latencyLimits(r *brk.Result) []latencyLimit {
	var out []latencyLimit
	timeout := msOf(r.Plan.Timeout)
	if !(timeout > 0) {
		timeout = r.TimeoutMs
	}
	if timeout > 0 && finite(timeout) {
		out = append(out, latencyLimit{ms: timeout, label: "timeout " + fmtMs(timeout), class: "timeout", color: colTimeout, dash: "2 3"})
	}
	if v := msOf(r.Plan.MaxP99); v > 0 && finite(v) {
		out = append(out, latencyLimit{ms: v, label: "p99 limit " + fmtMs(v), class: "limit p99", color: colLatLimit, dash: "8 4"})
	}
	if v := msOf(r.Plan.MaxP999); v > 0 && finite(v) {
		out = append(out, latencyLimit{ms: v, label: "p99.9 limit " + fmtMs(v), class: "limit p999", color: colLatLimit, dash: "8 3 2 3"})
	}
	return out
}

// msOf is d in milliseconds, as a report's plan writes it.
func msOf(d time.Duration) float64 { return float64(d) / 1e6 }

// fmtMs writes a duration given in milliseconds as a person reads it:
// "140 ms", "1 s", "2.5 s", "0.25 ms".
func fmtMs(ms float64) string {
	if ms >= 1000 {
		return strconv.FormatFloat(math.Round(ms)/1000, 'f', -1, 64) + " s"
	}
	return strconv.FormatFloat(math.Round(ms*1000)/1000, 'f', -1, 64) + " ms"
}

// xDomain returns the level axis's range for the phases, padded.
// logSpan is the ratio of the highest level to the lowest past which a
// per-level chart's level axis is logarithmic: a ×2 search's levels would
// crowd at the left edge of a linear one.
const logSpan = 10

// setLevels sets a per-level chart's level axis from the phases: linear,
// or logarithmic (the label says so) when the levels span more than
// logSpan.
func (c *chart) setLevels(ps []*brk.PhaseStats) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, p := range ps {
		lo = math.Min(lo, float64(p.Level))
		hi = math.Max(hi, float64(p.Level))
	}
	if lo > 0 && hi > logSpan*lo {
		c.xmin, c.xmax, c.logX = lo/1.15, hi*1.15, true
		c.xLabel = strings.TrimSuffix(c.xLabel, ")") + ", log scale)"
		return
	}
	c.xmin, c.xmax = xDomain(ps)
}

func xDomain(ps []*brk.PhaseStats) (float64, float64) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, p := range ps {
		lo = math.Min(lo, float64(p.Level))
		hi = math.Max(hi, float64(p.Level))
	}
	if lo == hi {
		pad := math.Max(1, math.Abs(lo)*0.5)
		return math.Max(0, lo-pad), hi + pad
	}
	pad := (hi - lo) * 0.06
	return math.Max(0, lo-pad), hi + pad
}

func tipState(p *brk.PhaseStats) string {
	role := ""
	if p.Role != "" && p.Role != "ramp" {
		role = ", " + p.Role
	}
	switch {
	case p.Interrupted:
		return " (interrupted" + role + ")"
	case !p.Accepted:
		return " (rejected" + role + ")"
	case role != "":
		return " (" + role[2:] + ")"
	}
	return ""
}

func kindOf(p *brk.PhaseStats) int {
	switch {
	case p.Interrupted:
		return ptIn
	case !p.Accepted:
		return ptRejected
	}
	return ptNormal
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func successChart(ps []*brk.PhaseStats, unit string, sla float64, slaOK bool, accept string, mark *vmark) template.HTML {
	c := chart{
		id: "chart-success", title: "Success against level",
		xLabel: "level (" + unit + ")", yLabel: "success (%)", yUnit: "%", mark: mark,
	}
	c.setLevels(ps)
	c.runOrder = outOfOrder(ps)
	s := chartSeries{name: "success", color: colAccepted, linkColor: colLink, rejColor: colRejected}
	lo := math.Inf(1)
	hasIn, hasRej := false, false
	for _, p := range ps {
		if !finite(p.SuccessPct) {
			continue
		}
		k := kindOf(p)
		hasIn = hasIn || k == ptIn
		hasRej = hasRej || k == ptRejected
		lo = math.Min(lo, p.SuccessPct)
		s.pts = append(s.pts, chartPoint{x: float64(p.Level), y: p.SuccessPct, kind: k, run: p.Index,
			tip: fmt.Sprintf("phase %d, level %d: %s %% success%s", p.Index, p.Level, fmtF(p.SuccessPct, 4), tipState(p))})
	}
	if slaOK {
		lo = math.Min(lo, sla)
	}
	if math.IsInf(lo, 1) {
		lo = 0
	}
	lo = math.Min(lo, 100)
	span := math.Max(100-lo, 0.01)
	c.ymin, c.ymax = math.Max(0, lo-span*0.15), 100
	c.series = []chartSeries{s}
	c.points = len(s.pts)
	c.legend = []legendItem{{label: "accepted", color: colAccepted}}
	if hasRej {
		c.legend = append(c.legend, legendItem{label: "rejected", color: colRejected})
	}
	if hasIn {
		c.legend = append(c.legend, legendItem{label: "interrupted", color: colInterrupted, hollow: true})
	}
	if slaOK {
		c.hlines = []hline{{y: sla, color: colSLA, label: "SLA " + accept + " %", class: "sla", dash: "6 4"}}
		c.legend = append(c.legend, legendItem{label: "SLA " + accept + " %", color: colSLA, dashed: true})
	}
	if c.points == 0 {
		c.empty = "no success data"
	}
	return c.svg()
}

func rpsChart(ps []*brk.PhaseStats, unit string, mark *vmark) template.HTML {
	c := chart{
		id: "chart-rps", title: "Successful requests/s against level",
		xLabel: "level (" + unit + ")", yLabel: "successful requests/s", yUnit: "/s", mark: mark,
	}
	c.setLevels(ps)
	c.runOrder = outOfOrder(ps)
	s := chartSeries{name: "req/s", color: colRPS}
	hi := 0.0
	for _, p := range ps {
		if !finite(p.RequestsPerSec) {
			continue
		}
		hi = math.Max(hi, p.RequestsPerSec)
		s.pts = append(s.pts, chartPoint{x: float64(p.Level), y: p.RequestsPerSec, kind: interruptedOnly(p), run: p.Index,
			tip: fmt.Sprintf("phase %d, level %d: %s successful req/s%s", p.Index, p.Level, fmtF(p.RequestsPerSec, 1), tipState(p))})
	}
	c.ymin, c.ymax = 0, niceCeil(hi*1.08)
	c.series = []chartSeries{s}
	c.points = len(s.pts)
	c.legend = []legendItem{{label: "successful req/s", color: colRPS}}
	if hasInterrupted(ps) {
		c.legend = append(c.legend, legendItem{label: "interrupted", color: colInterrupted, hollow: true})
	}
	if c.points == 0 {
		c.empty = "no throughput data"
	}
	return c.svg()
}

func latencyChart(ps []*brk.PhaseStats, unit string, limits []latencyLimit, mark *vmark) template.HTML {
	c := chart{
		id: "chart-latency", title: "Latency percentiles against level",
		xLabel: "level (" + unit + ")", yLabel: "latency (ms)", yUnit: " ms", mark: mark,
	}
	c.setLevels(ps)
	c.runOrder = outOfOrder(ps)
	type pick struct {
		name, color string
		get         func(brk.Latency) float64
	}
	picks := []pick{
		{"p50", colP50, func(l brk.Latency) float64 { return l.P50 }},
		{"p90", colP90, func(l brk.Latency) float64 { return l.P90 }},
		{"p99", colP99, func(l brk.Latency) float64 { return l.P99 }},
		{"max", colMax, func(l brk.Latency) float64 { return l.Max }},
	}
	hi := 0.0
	n := 0
	for _, pk := range picks {
		s := chartSeries{name: pk.name, color: pk.color}
		for _, p := range ps {
			v := pk.get(p.LatencyMs)
			if p.LatencyMs.Count == 0 || !finite(v) {
				continue // no responses: no latency to draw
			}
			hi = math.Max(hi, v)
			s.pts = append(s.pts, chartPoint{x: float64(p.Level), y: v, kind: interruptedOnly(p), run: p.Index,
				tip: fmt.Sprintf("phase %d, level %d: %s %s ms%s", p.Index, p.Level, pk.name, fmtF(v, 3), tipState(p))})
		}
		n = max(n, len(s.pts))
		c.series = append(c.series, s)
		c.legend = append(c.legend, legendItem{label: pk.name, color: pk.color})
	}
	if hasInterrupted(ps) {
		c.legend = append(c.legend, legendItem{label: "interrupted", color: colInterrupted, hollow: true})
	}
	// The timeout and the latency limits are drawn where the axis can hold
	// them without flattening the data (up to offScaleFactor × the highest
	// point); a limit further up is named at the top of the chart instead.
	top := hi
	for _, l := range limits {
		h := hline{y: l.ms, color: l.color, label: l.label, class: l.class, dash: l.dash}
		if hi > 0 && l.ms > hi*offScaleFactor {
			c.offScale = append(c.offScale, h)
			continue
		}
		top = math.Max(top, l.ms)
		c.hlines = append(c.hlines, h)
	}
	c.ymin, c.ymax = 0, niceCeil(top*1.08)
	c.points = n
	if n == 0 {
		c.empty = "no responses: no latency to draw"
	}
	return c.svg()
}

func interruptedOnly(p *brk.PhaseStats) int {
	if p.Interrupted {
		return ptIn
	}
	return ptNormal
}

func hasInterrupted(ps []*brk.PhaseStats) bool {
	for _, p := range ps {
		if p.Interrupted {
			return true
		}
	}
	return false
}

// outOfOrder reports whether some phase ran below an earlier one's level.
func outOfOrder(ps []*brk.PhaseStats) bool {
	for i := 1; i < len(ps); i++ {
		if ps[i].Level < ps[i-1].Level {
			return true
		}
	}
	return false
}
