package report

import (
	"fmt"
	"html/template"
	"math"
	"strconv"
	"strings"

	"github.com/brk-bench/brk"
)

// The latency scatter: every phase's sampled responses (at most 2,000 a
// phase, PhaseStats.Scatter) against the run's time, latency up the
// side — on a logarithmic axis when the sampled latencies span more
// than scLogSpan — with the timeout and the SLA's latency limits as lines and
// each phase's start marked. A phase's points are one path of dots, so
// that a search of 15 phases stays a few hundred kilobytes.

const (
	scW, scH          = 740, 340 // one drawing at the narrow window's width: text stays at 11 px or more at 800 px, and grows on a wider one
	scLeft, scRight   = 78, 18
	scTop, scBottom   = 76, 44 // the plot's margins (above: the title and two legend rows)
	scLogSpan         = 20.0   // the highest latency over the lowest past which the axis is logarithmic
	colScatterHeld    = "#2b6cb0"
	colScatterBroken  = "#d95f02"
	scatterDotWidth   = 2.6
	scatterMinLatency = 0.001 // ms: the log axis's floor (1 µs)
)

// scatterChart draws the run's latency scatter, or nothing when no phase
// sampled a response (a report read back from JSON has none).
func scatterChart(r *brk.Result, ps []*brk.PhaseStats) template.HTML {
	n := 0
	lo, hi, tmax := math.Inf(1), 0.0, 0.0
	for _, p := range ps {
		for _, pt := range p.Scatter {
			if !finite(pt.AtS) || !finite(pt.Ms) || pt.Ms < 0 {
				continue
			}
			n++
			lo, hi = math.Min(lo, math.Max(pt.Ms, scatterMinLatency)), math.Max(hi, pt.Ms)
			tmax = math.Max(tmax, pt.AtS)
		}
	}
	if n == 0 {
		return ""
	}
	logY := hi/lo > scLogSpan // the samples' spread decides; the limits' lines only widen the range
	limits := latencyLimits(r)
	for _, l := range limits {
		hi = math.Max(hi, l.ms)
	}
	esc := template.HTMLEscapeString
	plotW, plotH := float64(scW-scLeft-scRight), float64(scH-scTop-scBottom)
	xt, xs := ticks(0, tmax, 1)
	tend := math.Max(tmax, xt[len(xt)-1])
	px := func(t float64) float64 { return scLeft + t/tend*plotW }
	var py func(float64) float64
	var yt []float64
	var ylabel func(float64) string
	if logY {
		d0, d1 := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi*1.05))
		py = func(v float64) float64 {
			return float64(scTop) + plotH - (math.Log10(math.Max(v, scatterMinLatency))-d0)/(d1-d0)*plotH
		}
		for d := d0; d <= d1; d++ {
			yt = append(yt, math.Pow(10, d))
		}
		ylabel = func(v float64) string { return fmtMs(v) }
	} else {
		top := niceCeil(hi * 1.08)
		py = func(v float64) float64 { return float64(scTop) + plotH - v/top*plotH }
		var ys float64
		yt, ys = ticks(0, top, 0)
		ylabel = func(v float64) string { return tickLabel(v, ys, " ms", false) }
	}

	var b strings.Builder
	title := "Latency of sampled responses over time (up to 2,000 a phase)"
	if sh := r.Shard; sh != nil && sh.Count > 1 {
		// The other boxes' samples stay on them: a shard's report carries
		// its counts and histograms, not its responses.
		title = fmt.Sprintf("Latency of this box's sampled responses over time (shard %d of %d; up to 2,000 a phase)", sh.Index, sh.Count)
	}
	scale := "linear"
	if logY {
		scale = "log"
	}
	fmt.Fprintf(&b, `<svg id="chart-scatter" class="chart wide" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-label="%s" data-points="%d" data-y-scale="%s" %s>`,
		scW, scH, scW, scH, esc(title), n, scale, chFont)
	fmt.Fprintf(&b, `<title>%s</title><rect x="0" y="0" width="%d" height="%d" fill="#ffffff"/>`, esc(title), scW, scH)
	fmt.Fprintf(&b, `<text x="%d" y="22" font-size="15" font-weight="600" fill="#1f2937">%s</text>`, scLeft-58, esc(title))
	legend := []legendItem{{label: "a response of an accepted phase", color: colScatterHeld}, {label: "of a rejected phase", color: colScatterBroken}}
	lx := float64(scLeft - 50)
	for _, it := range legend {
		fmt.Fprintf(&b, `<circle cx="%.1f" cy="40" r="3" fill="%s"/><text x="%.1f" y="44" font-size="12" fill="#374151">%s</text>`, lx+6, it.color, lx+14, esc(it.label))
		lx += 30 + textW(it.label, 12)
	}
	lx = float64(scLeft - 50) // the lines' row: the timeout and the SLA's limits
	for _, l := range limits {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="58" x2="%.1f" y2="58" stroke="%s" stroke-width="1.5" stroke-dasharray="%s"/><text x="%.1f" y="62" font-size="12" fill="#374151">%s</text>`,
			lx, lx+22, l.color, l.dash, lx+28, esc(l.label))
		lx += 42 + textW(l.label, 12)
	}
	// The grid, the axes and their labels.
	for _, v := range yt {
		y := py(v)
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#e5e7eb" stroke-width="1"/>`, scLeft, y, scW-scRight, y)
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" font-size="11" fill="#4b5563" text-anchor="end">%s</text>`, scLeft-8, y+4, esc(ylabel(v)))
	}
	bottom := scH - scBottom
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#4b5563" stroke-width="1.2"/>`, scLeft, scTop, scLeft, bottom)
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#4b5563" stroke-width="1.2"/>`, scLeft, bottom, scW-scRight, bottom)
	k := useK(xt, xs)
	lastEnd := math.Inf(-1)
	for _, v := range xt {
		x := px(v)
		l := tickLabel(v, xs, "", k)
		if bx := textBox(x, float64(bottom+18), 11, "middle", l); bx.x0 > lastEnd+4 && bx.x1 <= float64(scW) {
			fmt.Fprintf(&b, `<text x="%.1f" y="%d" font-size="11" fill="#4b5563" text-anchor="middle">%s</text>`, x, bottom+18, esc(l))
			lastEnd = bx.x1
		}
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="12" fill="#374151" text-anchor="middle">seconds since the run's start</text>`, scLeft+int(plotW)/2, scH-8)
	fmt.Fprintf(&b, `<text x="14" y="%d" font-size="12" fill="#374151" text-anchor="middle" transform="rotate(-90 14 %d)">latency (%s)</text>`,
		scTop+int(plotH)/2, scTop+int(plotH)/2, scale)
	for _, l := range limits {
		y := py(l.ms)
		fmt.Fprintf(&b, `<line class="%s" x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="%s" stroke-width="1.5" stroke-dasharray="%s"><title>%s</title></line>`,
			esc(l.class), scLeft, y, scW-scRight, y, l.color, l.dash, esc(l.label))
	}
	// Each phase: its start, then its dots.
	for _, p := range ps {
		if len(p.Scatter) == 0 {
			continue
		}
		if tl := p.Timeline; tl != nil && finite(tl.StartS) {
			x := px(tl.StartS)
			fmt.Fprintf(&b, `<line class="phase-mark" x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s" stroke-width="1"><title>phase %d starts: level %d</title></line>`,
				x, scTop, x, bottom, colTLPhase, p.Index, p.Level)
		}
		var d strings.Builder
		kept := 0
		for _, pt := range p.Scatter {
			if !finite(pt.AtS) || !finite(pt.Ms) || pt.Ms < 0 {
				continue
			}
			d.WriteString("M")
			d.WriteString(strconv.FormatFloat(math.Round(px(pt.AtS)*10)/10, 'f', -1, 64))
			d.WriteString(" ")
			d.WriteString(strconv.FormatFloat(math.Round(py(pt.Ms)*10)/10, 'f', -1, 64))
			d.WriteString("h0")
			kept++
		}
		color := colScatterHeld
		if !p.Accepted && !p.Interrupted {
			color = colScatterBroken
		}
		fmt.Fprintf(&b, `<path class="scatter" data-phase="%d" data-points="%d" d="%s" stroke="%s" stroke-opacity="0.55" stroke-width="%.1f" stroke-linecap="round" fill="none"><title>phase %d, level %d: %d sampled responses</title></path>`,
			p.Index, kept, d.String(), color, scatterDotWidth, p.Index, p.Level, kept)
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}
