package report

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/brk-bench/brk"
)

// HTMLConditions are the run conditions shown in the report.
type HTMLConditions struct {
	Command  string // the command line, as typed
	Host     string // hostname
	CPUs     int    // runtime.NumCPU()
	OS, Arch string
	Started  time.Time
}

// Chart colours. They are distinct from every other colour on the page so
// a rendered report can be checked pixel by pixel (html_test.go).
const (
	colAccepted    = "#1a9850"
	colRejected    = "#d73027"
	colSLA         = "#8c510a"
	colRPS         = "#2166ac"
	colP50         = "#00a0b0"
	colP90         = "#e6a100"
	colP99         = "#e7298a"
	colMax         = "#5e3c99"
	colInterrupted = "#9ca3af"
	colLink        = "#b8bec6" // the line joining the success points
	colTimeout     = "#525252" // the latency chart's timeout line
	colLatLimit    = "#8c2d04" // the latency chart's --max-p99/--max-p999 lines
	colBreak       = "#cc0000" // the break marker on the per-level charts
)

// WriteHTML writes one self-contained HTML file (no network fetches: no
// external CSS/JS/fonts/images; no scripts) for r: the verdict, three
// inline SVG charts drawn here (success % with the --accept line,
// successful requests/s, and latency percentiles with the timeout and the
// latency limits, all three marking the break) against the level, the
// latency percentile curve of the final pair's phases (LatencyPhases),
// the run's outcomes and status classes over time when its phases carry
// timelines, the phase table and the run conditions. Every text from the Result is escaped by
// html/template.
func WriteHTML(w io.Writer, r *brk.Result, c HTMLConditions) error {
	if r == nil {
		return errors.New("brk: WriteHTML: nil Result")
	}
	d := htmlData{R: r, C: c, Final: FinalLine(r), Held: Held(r), Unit: r.Test.Unit()}
	d.VerdictClass = "v-" + string(r.Verdict)
	switch r.Verdict {
	case brk.VerdictDone, brk.VerdictBroken, brk.VerdictInterrupted, brk.VerdictInconclusive:
	default:
		d.VerdictClass = "v-inconclusive"
	}
	d.LastAccepted, d.FirstRejected = "none", "none"
	if r.LastAccepted != nil {
		d.LastAccepted = strconv.Itoa(*r.LastAccepted)
	}
	if r.FirstRejected != nil {
		d.FirstRejected = strconv.Itoa(*r.FirstRejected)
	}
	if r.Baseline != nil {
		b := r.Baseline
		mach := "unavailable"
		if b.MachineCPUPct != nil {
			mach = fmt.Sprintf("%.1f %%", *b.MachineCPUPct)
		}
		d.Baseline = fmt.Sprintf("%.2f s idle: machine CPU %s; client user %.3f s, system %.3f s",
			b.DurationS, mach, b.ClientCPU.UserS, b.ClientCPU.SystemS)
	}
	for _, p := range r.Phases {
		if p != nil {
			d.Rows = append(d.Rows, phaseRow(r.Test, p))
		}
		if p != nil && p.Rate != nil {
			x := p.Rate
			d.RateRows = append(d.RateRows, htmlRateRow{
				Index: p.Index, Level: p.Level,
				Scheduled: x.Scheduled, Written: x.Written, ExpiredUnsent: x.ExpiredUnsent,
				Offered: fmtF(x.OfferedPerSec, 1), Achieved: fmtF(x.AchievedPerSec, 1), Shortfall: fmtF(x.ShortfallPct, 3),
				LagP50: fmtF(x.SendLagMs.P50, 3), LagP99: fmtF(x.SendLagMs.P99, 3), LagMax: fmtF(x.SendLagMs.Max, 3),
				SvcP50: fmtF(x.ServiceMs.P50, 3), SvcP99: fmtF(x.ServiceMs.P99, 3), ClientP99: fmtF(x.ClientLagMs.P99, 3),
			})
		}
	}
	if len(d.Rows) > 0 {
		sla, slaOK := math.NaN(), false
		if v, err := strconv.ParseFloat(strings.TrimSpace(r.Accept), 64); err == nil && v >= 0 && v <= 100 {
			sla, slaOK = v, true
		}
		phases := make([]*brk.PhaseStats, 0, len(r.Phases))
		for _, p := range r.Phases {
			if p != nil {
				phases = append(phases, p)
			}
		}
		mark := breakMark(r, phases)
		d.Charts = []template.HTML{
			successChart(phases, d.Unit, sla, slaOK, r.Accept, mark),
			rpsChart(phases, d.Unit, mark),
			latencyChart(phases, d.Unit, latencyLimits(r), mark),
			percentileChart(r),
		}
		if tl := timelineChart(phases); tl != "" {
			d.Charts = append(d.Charts, tl)
		}
	}
	d.Conds = conditions(r, c, d.Baseline)
	var buf bytes.Buffer
	if err := htmlTmpl.Execute(&buf, d); err != nil {
		return fmt.Errorf("brk: WriteHTML: %w", err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

type htmlData struct {
	R             *brk.Result
	C             HTMLConditions
	Final         string
	Held          string // the summary sentence
	Unit          string // what a level counts
	VerdictClass  string
	LastAccepted  string
	FirstRejected string
	Baseline      string
	Charts        []template.HTML
	Conds         []htmlCond // the run conditions
	Rows          []htmlRow
	RateRows      []htmlRateRow // the rate test's schedule table
}

// htmlRateRow is one rate test phase's schedule accounting.
type htmlRateRow struct {
	Index, Level                      int
	Scheduled, Written, ExpiredUnsent uint64
	Offered, Achieved, Shortfall      string
	LagP50, LagP99, LagMax            string
	SvcP50, SvcP99, ClientP99         string
}

func fmtF(v float64, prec int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "n/a"
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}

// ---- charts ----

// Chart geometry, in SVG user units (the SVG scales to its box).
const (
	chW, chH                   = 560, 332
	chLeft, chRight            = 78, 18
	chTop, chBottom            = 68, 48 // room above the plot for two rows of point labels
	plotW                      = chW - chLeft - chRight
	plotH                      = chH - chTop - chBottom
	chFont                     = `font-family="system-ui, -apple-system, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif"`
	pointR                     = 4.5
	offScaleFactor             = 4
	halo                       = `stroke="#ffffff" stroke-width="3" stroke-linejoin="round" paint-order="stroke"`
	nominalTicks               = 5
	ptNormal, ptRejected, ptIn = 0, 1, 2
)

type chartPoint struct {
	x, y float64
	kind int    // ptNormal, ptRejected, ptIn (interrupted)
	tip  string // tooltip text (numbers and fixed words only)
	run  int    // the phase's index: its place in the run order
}

type chartSeries struct {
	name, color string
	pts         []chartPoint
	linkColor   string // "" = series colour
	rejColor    string // fill for ptRejected; "" = series colour
}

type legendItem struct {
	label, color string
	dashed       bool
	hollow       bool
}

type chart struct {
	id, title, xLabel, yLabel, yUnit string
	xmin, xmax, ymin, ymax           float64
	series                           []chartSeries
	hlines                           []hline // drawn over the data
	offScale                         []hline // limits far above the data: named, not drawn
	mark                             *vmark  // the break
	legend                           []legendItem
	points                           int
	// runOrder labels each point with its phase number: levels were
	// visited out of order (a search, a refinement).
	runOrder bool
	empty    string // message when nothing could be drawn
}

type hline struct {
	y            float64
	color, label string
	class        string // the line's class attribute (tests find it by it)
	dash         string // stroke-dasharray
}

// vmark is the break on a per-level chart: a vertical line at the level
// of the first rejected (or inconclusive) phase, the bracket below it
// shaded.
type vmark struct {
	x, from float64 // the level; the last accepted level (NaN: none)
	label   string
}

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
		for _, p := range ps {
			if p.Inconclusive {
				return &vmark{x: float64(p.Level), from: from, label: fmt.Sprintf("inconclusive at %d", p.Level)}
			}
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
	timeout := r.Plan.TimeoutMs
	if !(timeout > 0) {
		timeout = r.TimeoutMs
	}
	if timeout > 0 && finite(timeout) {
		out = append(out, latencyLimit{ms: timeout, label: "timeout " + fmtMs(timeout), class: "timeout", color: colTimeout, dash: "2 3"})
	}
	if v := r.Plan.MaxP99Ms; v > 0 && finite(v) {
		out = append(out, latencyLimit{ms: v, label: "p99 limit " + fmtMs(v), class: "limit p99", color: colLatLimit, dash: "8 4"})
	}
	if v := r.Plan.MaxP999Ms; v > 0 && finite(v) {
		out = append(out, latencyLimit{ms: v, label: "p99.9 limit " + fmtMs(v), class: "limit p999", color: colLatLimit, dash: "8 3 2 3"})
	}
	return out
}

// fmtMs writes a duration given in milliseconds as a person reads it:
// "140 ms", "1 s", "2.5 s", "0.25 ms".
func fmtMs(ms float64) string {
	if ms >= 1000 {
		return strconv.FormatFloat(math.Round(ms)/1000, 'f', -1, 64) + " s"
	}
	return strconv.FormatFloat(math.Round(ms*1000)/1000, 'f', -1, 64) + " ms"
}

// xDomain returns the level axis's range for the phases, padded.
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
	c.xmin, c.xmax = xDomain(ps)
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
	c.xmin, c.xmax = xDomain(ps)
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
	c.xmin, c.xmax = xDomain(ps)
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

// niceStep returns a 1, 2 or 5 × 10^k step near span/n.
func niceStep(span float64, n int) float64 {
	if !(span > 0) || !finite(span) {
		return 1
	}
	raw := span / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if raw <= m*mag*1.0000001 {
			return m * mag
		}
	}
	return 10 * mag
}

// niceCeil rounds v up to a whole tick step, so a 0-based axis ends on a
// tick; v <= 0 gives 1.
func niceCeil(v float64) float64 {
	if !(v > 0) || !finite(v) {
		return 1
	}
	st := niceStep(v, nominalTicks)
	return math.Ceil(v/st-1e-9) * st
}

// ticks returns the tick values in [lo, hi] and their step.
func ticks(lo, hi float64, minStep float64) ([]float64, float64) {
	st := math.Max(niceStep(hi-lo, nominalTicks), minStep)
	var out []float64
	for v := math.Ceil(lo/st-1e-9) * st; v <= hi+st*1e-9; v += st {
		out = append(out, v)
		if len(out) > 50 {
			break
		}
	}
	return out, st
}

// useK reports whether an axis's labels are written in thousands (k).
func useK(ts []float64, step float64) bool {
	return step >= 1000 && len(ts) > 0 && math.Max(math.Abs(ts[0]), math.Abs(ts[len(ts)-1])) >= 10000
}

// tickLabel formats v with as many decimals as step needs, in thousands
// (k suffix) when k is set.
func tickLabel(v, step float64, unit string, k bool) string {
	if math.Abs(v) < step*1e-9 {
		v = 0
	}
	if k && v != 0 {
		return tickLabel(v/1000, step/1000, "k"+unit, false)
	}
	dec := 0
	if step < 1 {
		dec = int(math.Ceil(-math.Log10(step) - 1e-9))
	}
	t := strconv.FormatFloat(v, 'f', dec, 64)
	if strings.Contains(t, ".") {
		t = strings.TrimRight(strings.TrimRight(t, "0"), ".")
	}
	return t + unit
}

func (c *chart) px(x float64) float64 {
	return chLeft + (x-c.xmin)/(c.xmax-c.xmin)*plotW
}

func (c *chart) py(y float64) float64 {
	return chTop + plotH - (y-c.ymin)/(c.ymax-c.ymin)*plotH
}

// svg draws the chart. Everything written is numbers or the chart's own
// fixed words, and the words are escaped anyway; the output is also
// well-formed XML.
func (c *chart) svg() template.HTML {
	esc := template.HTMLEscapeString
	var b strings.Builder
	series := len(c.series)
	fmt.Fprintf(&b, `<svg id="%s" class="chart" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-label="%s" data-points="%d" data-series="%d" %s>`,
		c.id, chW, chH, chW, chH, esc(c.title), c.points, series, chFont)
	fmt.Fprintf(&b, `<title>%s</title>`, esc(c.title))
	fmt.Fprintf(&b, `<rect x="0" y="0" width="%d" height="%d" fill="#ffffff"/>`, chW, chH)
	fmt.Fprintf(&b, `<text x="%d" y="22" font-size="15" font-weight="600" fill="#1f2937">%s</text>`, chLeft-58, esc(c.title))
	var lb labels
	lb.add(textBox(chLeft-58, 22, 15, "start", c.title))

	// Legend, one row under the title.
	lx := float64(chLeft - 50)
	for _, it := range c.legend {
		switch {
		case it.dashed:
			fmt.Fprintf(&b, `<line x1="%.1f" y1="38" x2="%.1f" y2="38" stroke="%s" stroke-width="2.5" stroke-dasharray="6 4"/>`, lx, lx+22, it.color)
		case it.hollow:
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="38" r="%.1f" fill="#ffffff" stroke="%s" stroke-width="2"/>`, lx+11, pointR, it.color)
		default:
			fmt.Fprintf(&b, `<line x1="%.1f" y1="38" x2="%.1f" y2="38" stroke="%s" stroke-width="2.5"/>`, lx, lx+22, it.color)
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="38" r="%.1f" fill="%s"/>`, lx+11, pointR, it.color)
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="42" font-size="12" fill="#374151">%s</text>`, lx+28, esc(it.label))
		lb.add(textBox(lx+28, 42, 12, "start", it.label))
		lx += 28 + textW(it.label, 12) + 14
	}

	// Grid, ticks and tick labels.
	yt, ys := ticks(c.ymin, c.ymax, 0)
	for _, v := range yt {
		y := c.py(v)
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#e5e7eb" stroke-width="1"/>`, chLeft, y, chW-chRight, y)
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#4b5563" stroke-width="1"/>`, chLeft-5, y, chLeft, y)
		l := tickLabel(v, ys, c.yUnit, useK(yt, ys))
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" font-size="11" fill="#4b5563" text-anchor="end">%s</text>`, chLeft-8, y+4, esc(l))
		lb.add(textBox(chLeft-8, y+4, 11, "end", l))
	}
	xt, xs := ticks(c.xmin, c.xmax, 1)
	for _, v := range xt {
		x := c.px(v)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#f1f3f5" stroke-width="1"/>`, x, chTop, x, chTop+plotH)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#4b5563" stroke-width="1"/>`, x, chTop+plotH, x, chTop+plotH+5)
		l := tickLabel(v, xs, "", useK(xt, xs))
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" font-size="11" fill="#4b5563" text-anchor="middle">%s</text>`, x, chTop+plotH+18, esc(l))
		lb.add(textBox(x, chTop+plotH+18, 11, "middle", l))
	}
	// Axes.
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#4b5563" stroke-width="1.2"/>`, chLeft, chTop, chLeft, chTop+plotH)
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#4b5563" stroke-width="1.2"/>`, chLeft, chTop+plotH, chW-chRight, chTop+plotH)
	fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="12" fill="#374151" text-anchor="middle">%s</text>`, chLeft+plotW/2, chH-8, esc(c.xLabel))
	lb.add(textBox(chLeft+plotW/2, chH-8, 12, "middle", c.xLabel))
	fmt.Fprintf(&b, `<text x="14" y="%d" font-size="12" fill="#374151" text-anchor="middle" transform="rotate(-90 14 %d)">%s</text>`, chTop+plotH/2, chTop+plotH/2, esc(c.yLabel))

	if c.empty != "" {
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="14" fill="#6b7280" text-anchor="middle">%s</text>`, chLeft+plotW/2, chTop+plotH/2, esc(c.empty))
	}

	c.drawMark(&b, &lb)

	// Series: a line through the points in level order, then the points
	// (the run order's numbers on the last series only: the top one).
	for si, s := range c.series {
		link := s.linkColor
		if link == "" {
			link = s.color
		}
		if len(s.pts) >= 2 {
			var pts []string
			for _, p := range byLevel(s.pts) {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", c.px(p.x), c.py(p.y)))
			}
			fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2.5" stroke-linejoin="round" data-series="%s"/>`,
				strings.Join(pts, " "), link, esc(s.name))
		}
		for _, p := range s.pts {
			x, y := c.px(p.x), c.py(p.y)
			switch p.kind {
			case ptIn:
				fmt.Fprintf(&b, `<circle class="pt interrupted" cx="%.1f" cy="%.1f" r="%.1f" fill="#ffffff" stroke="%s" stroke-width="2"><title>%s</title></circle>`,
					x, y, pointR, colInterrupted, esc(p.tip))
				ly := lb.above(x, y-9, 11, "middle", "interrupted")
				fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="11" fill="#6b7280" text-anchor="middle">interrupted</text>`, x, ly)
			case ptRejected:
				fill := s.rejColor
				if fill == "" {
					fill = s.color
				}
				fmt.Fprintf(&b, `<circle class="pt rejected" cx="%.1f" cy="%.1f" r="%.1f" fill="%s"><title>%s</title></circle>`, x, y, pointR+0.5, fill, esc(p.tip))
			default:
				fmt.Fprintf(&b, `<circle class="pt" cx="%.1f" cy="%.1f" r="%.1f" fill="%s"><title>%s</title></circle>`, x, y, pointR, s.color, esc(p.tip))
			}
			if c.runOrder && p.kind != ptIn && si == len(c.series)-1 {
				run := strconv.Itoa(p.run)
				ly := lb.above(x, y-9, 11, "middle", run)
				fmt.Fprintf(&b, `<text class="run" x="%.1f" y="%.1f" font-size="11" fill="#6b7280" text-anchor="middle" %s>%s</text>`, x, ly, halo, run)
			}
		}
	}
	// Limit lines (the SLA, the timeout), over the data so they stay
	// visible, each labelled at the right end above the line, else where
	// its label runs into no other text: below it, then at the left end.
	for _, h := range sortedByY(c.hlines) {
		y := c.py(h.y)
		fmt.Fprintf(&b, `<line class="hline %s" x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="%s" stroke-width="2" stroke-dasharray="%s"/>`,
			esc(h.class), chLeft, y, chW-chRight, y, h.color, h.dash)
		x, ly, anchor := lb.place(h.label, 11, []spot{
			{chW - chRight - 4, y - 5, "end"}, {chW - chRight - 4, y + 14, "end"},
			{chLeft + 6, y - 5, "start"}, {chLeft + 6, y + 14, "start"},
		})
		fmt.Fprintf(&b, `<text class="hline-label %s" x="%.1f" y="%.1f" font-size="11" fill="%s" text-anchor="%s" %s>%s</text>`,
			esc(h.class), x, ly, h.color, anchor, halo, esc(h.label))
	}
	offY := float64(chTop + 13)
	for _, h := range c.offScale {
		l := "↑ " + h.label + " (above this scale)"
		for range 8 {
			if lb.free(textBox(chLeft+6, offY, 11, "start", l)) {
				break
			}
			offY += 14
		}
		lb.add(textBox(chLeft+6, offY, 11, "start", l))
		fmt.Fprintf(&b, `<text class="offscale %s" x="%d" y="%.1f" font-size="11" fill="%s" %s>%s</text>`,
			esc(h.class), chLeft+6, offY, h.color, halo, esc(l))
		offY += 14
	}

	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// byLevel is the points in level order (then run order), for the line
// through them: a search visits levels out of order.
func byLevel(pts []chartPoint) []chartPoint {
	out := append([]chartPoint(nil), pts...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].x < out[j].x })
	return out
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

// sortedByY returns the lines from the top of the chart down.
func sortedByY(hs []hline) []hline {
	out := append([]hline(nil), hs...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].y > out[j].y })
	return out
}

// drawMark draws the break: the bracket between the last accepted level
// and the break shaded, a dashed vertical line at the break, labelled.
func (c *chart) drawMark(b *strings.Builder, lb *labels) {
	m := c.mark
	if m == nil || !finite(m.x) || m.x < c.xmin || m.x > c.xmax {
		return
	}
	x := c.px(m.x)
	from := float64(chLeft)
	if finite(m.from) && m.from < m.x {
		from = c.px(math.Max(m.from, c.xmin))
	}
	fmt.Fprintf(b, `<rect class="break-band" x="%.1f" y="%d" width="%.1f" height="%d" fill="%s" fill-opacity="0.07"/>`,
		from, chTop, x-from, plotH, colBreak)
	fmt.Fprintf(b, `<line class="break" data-level="%s" x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s" stroke-width="1.5" stroke-dasharray="5 3"/>`,
		strconv.FormatFloat(m.x, 'f', -1, 64), x, chTop, x, chTop+plotH, colBreak)
	// The label sits at the top, left of the line unless the line is near
	// the left, with a white halo so that it reads over the data.
	anchor, lx := "end", x-4
	if x-chLeft < textW(m.label, 11)+8 {
		anchor, lx = "start", x+4
	}
	lb.add(textBox(lx, chTop+13, 11, anchor, m.label))
	fmt.Fprintf(b, `<text class="break-label" x="%.1f" y="%d" font-size="11" font-weight="600" fill="%s" text-anchor="%s" %s>%s</text>`,
		lx, chTop+13, colBreak, anchor, halo, template.HTMLEscapeString(m.label))
}

var htmlTmpl = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8"/>
<meta name="viewport" content="width=device-width, initial-scale=1"/>
<title>brk report: {{.R.URL}}</title>
<style>
:root { color-scheme: light; }
* { box-sizing: border-box; }
body { margin: 0; padding: 24px 20px 40px; background: #f6f7f9; color: #1f2937;
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 28px 0 10px; }
.sub { color: #4b5563; margin: 0 0 18px; word-break: break-all; }
.charts { display: grid; grid-template-columns: minmax(0, 1fr); gap: 14px; }
.charts svg { background: #ffffff; border: 1px solid #dfe3e8; border-radius: 8px; width: 100%; max-width: 840px; height: auto; }
.charts svg.wide { grid-column: 1 / -1; max-width: 100%; }
.charts svg.tl-wide { display: none; }
@media (min-width: 1180px) {
  .charts { grid-template-columns: repeat(2, minmax(0, 1fr)); }
  .charts svg { max-width: 100%; }
  .charts svg.tl-wide { display: block; }
  .charts svg.tl-narrow { display: none; }
}
.nophases { background: #ffffff; border: 1px dashed #c4c9d0; border-radius: 8px; padding: 28px; font-size: 18px; color: #4b5563; }
.verdict { background: #ffffff; border: 1px solid #dfe3e8; border-left-width: 8px; border-radius: 8px; padding: 14px 18px; margin-top: 22px; }
.verdict .big { font-size: 28px; font-weight: 700; }
.verdict .reason { font-size: 17px; margin-top: 4px; white-space: pre-wrap; word-break: break-word; }
.verdict .bracket { color: #4b5563; margin-top: 6px; }
.v-done { border-left-color: #0b6e2e; } .v-done .big { color: #0b6e2e; }
.v-broken { border-left-color: #a50f15; } .v-broken .big { color: #a50f15; }
.v-inconclusive { border-left-color: #8a6d00; } .v-inconclusive .big { color: #8a6d00; }
.v-interrupted { border-left-color: #555555; } .v-interrupted .big { color: #555555; }
.tablewrap { overflow-x: auto; background: #ffffff; border: 1px solid #dfe3e8; border-radius: 8px; }
table { border-collapse: collapse; font-size: 12px; font-variant-numeric: tabular-nums; width: 100%; }
th, td { padding: 4px 7px; border-bottom: 1px solid #eceef1; text-align: right; vertical-align: top; }
td { white-space: nowrap; }
thead th { background: #f0f2f5; font-weight: 600; vertical-align: bottom; }
td.l, th.l { text-align: left; }
table.phases tbody.phase tr:first-child td { border-bottom: 0; }
td.fails { white-space: normal; }
td.fails div { white-space: nowrap; }
td.fails .none { color: #6b7280; }
.per { color: #6b7280; font-size: 11px; }
td.note { text-align: left; white-space: normal; overflow-wrap: anywhere; color: #374151; padding-top: 0; }
td.note .reason { font-weight: 600; }
tr.acc td.note .reason { font-weight: 400; }
td.note code { font-size: 11.5px; }
details summary { cursor: pointer; color: #4b5563; font-size: 11.5px; }
.figs { display: grid; grid-template-columns: repeat(auto-fill, minmax(200px, 1fr)); gap: 6px 18px; padding: 6px 0 4px; }
.figs dl { display: grid; grid-template-columns: minmax(7em, 1fr) minmax(0, auto); gap: 1px 10px; margin: 0; align-content: start; }
.figs dt { color: #4b5563; }
.figs dt.g { grid-column: 1 / -1; color: #1f2937; font-weight: 600; border-bottom: 1px solid #eceef1; }
.figs dd { margin: 0; text-align: right; overflow-wrap: anywhere; }
tr.bad td { background: #fdf1f0; }
tr.int td { color: #6b7280; font-style: italic; }
.st-ok { color: #0b6e2e; } .st-bad { color: #a50f15; font-weight: 600; } .st-int { color: #6b7280; }
.tag { display: inline-block; font-size: 11px; font-weight: 600; padding: 0 5px; border-radius: 4px; background: #eef0f3; color: #374151; font-style: normal; }
.cb { color: #8a6d00; font-weight: 600; }
.tag.cb { background: #fbf3d5; }
dl.cond { display: grid; grid-template-columns: max-content 1fr; gap: 4px 18px; background: #ffffff;
  border: 1px solid #dfe3e8; border-radius: 8px; padding: 14px 18px; margin: 0; }
dl.cond dt { color: #4b5563; }
dl.cond dd { margin: 0; overflow-wrap: anywhere; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12.5px; }
</style>
</head>
<body>
<h1>brk {{.R.Test}} test</h1>
<p class="sub"><code>{{.R.URL}}</code></p>
<div class="verdict {{.VerdictClass}}">
<div class="big">{{.Final}}</div>
<div class="held">{{.Held}}</div>
{{if .R.Reason}}<div class="reason">{{.R.Reason}}</div>{{end}}
<div class="bracket">last accepted: <b>{{.LastAccepted}}</b> · first rejected: <b>{{.FirstRejected}}</b> ({{.Unit}})</div>
</div>
{{if .Charts}}<div class="charts">
{{range .Charts}}{{.}}
{{end}}</div>{{else}}<div class="nophases">no phases ran</div>{{end}}
<h2>Phases</h2>
{{if .Rows}}<div class="tablewrap"><table class="phases">
<thead>
<tr><th>#</th><th>level</th><th class="l">state</th><th>success %</th><th>successful req/s</th><th>succeeded / attempted</th><th class="l">failures</th>
<th>p50 ms</th><th>p90 ms</th><th>p99 ms</th><th>p99.9 ms</th><th>max ms</th></tr>
</thead>
{{range .Rows}}<tbody class="phase">
<tr class="{{.StateClass}}"><td>{{.Index}}</td><td>{{.Level}}{{if .Per}}<div class="per">{{.Per}}</div>{{end}}</td>
<td class="l {{if eq .StateClass "bad"}}st-bad{{else if eq .StateClass "int"}}st-int{{else}}st-ok{{end}}">{{.State}}{{if .Role}} <span class="tag">{{.Role}}</span>{{else if .Probe}} <span class="tag">probe</span>{{end}}{{if .ClientBound}} <span class="tag cb">client-bound</span>{{end}}</td>
<td>{{.SuccessPct}}</td><td>{{.RPS}}</td><td>{{.Succeeded}}<div class="per">of {{.Attempted}}</div></td>
<td class="l fails">{{range .Failed}}<div>{{.K}} {{.V}}</div>{{else}}<span class="none">none</span>{{end}}</td>
<td>{{.P50}}</td><td>{{.P90}}</td><td>{{.P99}}</td><td>{{.P999}}</td><td>{{.Max}}</td></tr>
<tr class="{{.StateClass}} more"><td></td><td colspan="11" class="note">
{{if .Reason}}<div class="reason">{{.Reason}}</div>{{end}}{{if .Fault}}<div>protocol fault: {{.Fault}}</div>{{end}}{{if .SetupEr}}<div>setup error: {{.SetupEr}}</div>{{end}}{{if .Server}}<div>server: {{.Server}}</div>{{end}}{{if .Statuses}}<div>statuses: {{.Statuses}}</div>{{end}}{{if .BodySample}}<div>first differing body: <code>{{.BodySample}}</code></div>{{end}}
<details><summary>every figure of phase {{.Index}}</summary><div class="figs">
{{range .Groups}}<dl><dt class="g">{{.Title}}</dt>{{range .Items}}<dt>{{.K}}</dt><dd>{{.V}}</dd>{{end}}</dl>
{{end}}</div></details></td></tr>
</tbody>
{{end}}</table></div>{{else}}<p>no phases ran</p>{{end}}
{{if .RateRows}}<h2>Schedule (rate test)</h2>
<p class="sub">Latency above counts from each request's scheduled instant (backlog is latency). Send lag: scheduled → written; service: written → response; client lag: scheduled → taken up by its worker. Above 1 % shortfall the client did not keep its schedule and the phase is unfulfilled.</p>
<div class="tablewrap"><table>
<thead><tr><th>#</th><th>level (requests/s)</th><th>scheduled</th><th>written</th><th>expired unsent</th><th>offered req/s</th><th>achieved req/s</th>
<th>send lag p50 ms</th><th>send lag p99 ms</th><th>send lag max ms</th><th>service p50 ms</th><th>service p99 ms</th><th>client lag p99 ms</th><th>shortfall %</th></tr></thead>
<tbody>
{{range .RateRows}}<tr><td>{{.Index}}</td><td>{{.Level}}</td><td>{{.Scheduled}}</td><td>{{.Written}}</td><td>{{.ExpiredUnsent}}</td><td>{{.Offered}}</td><td>{{.Achieved}}</td>
<td>{{.LagP50}}</td><td>{{.LagP99}}</td><td>{{.LagMax}}</td><td>{{.SvcP50}}</td><td>{{.SvcP99}}</td><td>{{.ClientP99}}</td><td>{{.Shortfall}}</td></tr>
{{end}}</tbody>
</table></div>{{end}}
<h2>Run conditions</h2>
<dl class="cond">
{{range .Conds}}<dt>{{.K}}</dt><dd>{{if .Code}}<code>{{.V}}</code>{{else}}{{.V}}{{end}}</dd>
{{end}}</dl>
</body>
</html>
`))

// ---- text placement ----

// box is a text's extent in SVG user units.
type box struct{ x0, y0, x1, y1 float64 }

// textW estimates the width of s at font size size: DejaVu Sans, the
// widest usual system-ui font, is about 0.64 em per character (digits
// 0.636, lower case less), so that the estimate errs wide.
func textW(s string, size float64) float64 {
	return 0.64 * size * float64(len([]rune(s)))
}

// textBox is the box of s drawn at (x, y), y its baseline, anchored
// "start", "middle" or "end".
func textBox(x, y, size float64, anchor, s string) box {
	w := textW(s, size)
	switch anchor {
	case "middle":
		x -= w / 2
	case "end":
		x -= w
	}
	return box{x, y - 0.8*size, x + w, y + 0.25*size}
}

func (a box) overlaps(b box) bool {
	return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1
}

// labels are the text boxes drawn so far in one chart, so that a label
// can be put where it runs into none of them.
type labels struct{ boxes []box }

func (l *labels) add(b box) { l.boxes = append(l.boxes, b) }

// free reports whether b overlaps no text drawn so far.
func (l *labels) free(b box) bool {
	for _, o := range l.boxes {
		if o.overlaps(b) {
			return false
		}
	}
	return true
}

// above returns the baseline for s at x: y, or a line higher for each
// text already there or nearly (a point's label stays over its point),
// never higher than the legend's row; and takes the place. Where no line
// up to there is free, the label goes under its point instead.
func (l *labels) above(x, y, size float64, anchor, s string) float64 {
	const margin = 1.5 // keeps neighbouring labels apart as well as off each other
	fits := func(y float64) bool {
		b := textBox(x, y, size, anchor, s)
		b.x0, b.x1 = b.x0-margin, b.x1+margin
		return l.free(b)
	}
	pick := y + 2*size + 4 // under the point
	for ly := y; ly-0.8*size >= legendBottom; ly -= size + 2 {
		if fits(ly) {
			pick = ly
			break
		}
	}
	l.add(textBox(x, pick, size, anchor, s))
	return pick
}

// legendBottom is where the legend's row ends, in a chart's user units.
const legendBottom = 47

// spot is a candidate place for a label.
type spot struct {
	x, y   float64
	anchor string
}

// place returns the first of spots where s runs into no text drawn so
// far (the first one when none is free), and takes the place.
func (l *labels) place(s string, size float64, spots []spot) (x, y float64, anchor string) {
	pick := spots[0]
	for _, sp := range spots {
		if l.free(textBox(sp.x, sp.y, size, sp.anchor, s)) {
			pick = sp
			break
		}
	}
	l.add(textBox(pick.x, pick.y, size, pick.anchor, s))
	return pick.x, pick.y, pick.anchor
}
