package report

import (
	"fmt"
	"html/template"
	"math"
	"strconv"
	"strings"

	"github.com/brk-bench/brk"
)

// The percentile curve: each phase's latency distribution
// (PhaseStats.LatencyDistribution) against the percentile on a 1/(1−p)
// log axis, as HdrHistogram plots it, for the phases --latency shows
// (LatencyPhases: the final pair, or a one-phase run's phase).

// Percentile curve colours, distinct from the other charts'.
const (
	colCurveHeld  = "#1b7837"
	colCurveBroke = "#b2182b"
	colCurveOther = "#35978f"
)

// curveDecades is the percentile axis's extent: 1/(1−p) from 1 (p0) to
// 10^5 (p99.999).
const curveDecades = 5

// curveX is the percentile axis's position of percentile p, in decades
// of 1/(1−p).
func curveX(p float64) float64 {
	if p >= 100 {
		return curveDecades
	}
	return math.Min(curveDecades, -math.Log10(1-p/100))
}

// curveTick labels decade d: "0 %", "90 %", "99 %", …
func curveTick(d int) string {
	if d == 0 {
		return "0 %"
	}
	return strconv.FormatFloat(100-100*math.Pow(10, -float64(d)), 'f', max(d-2, 0), 64) + " %"
}

func percentileChart(r *brk.Result) template.HTML {
	esc := template.HTMLEscapeString
	type curve struct {
		lp    LatencyPhase
		color string
	}
	var curves []curve
	hi := 0.0
	n := 0
	for _, lp := range LatencyPhases(r) {
		if len(lp.Phase.LatencyDistribution) == 0 {
			continue
		}
		col := colCurveOther
		switch lp.What {
		case "the last accepted level":
			col = colCurveHeld
		case "the lowest rejected level":
			col = colCurveBroke
		}
		curves = append(curves, curve{lp, col})
		for _, pt := range lp.Phase.LatencyDistribution {
			if finite(pt.Ms) {
				hi = math.Max(hi, pt.Ms)
			}
		}
		n += len(lp.Phase.LatencyDistribution)
	}
	title := "Latency by percentile"
	var b strings.Builder
	fmt.Fprintf(&b, `<svg id="chart-percentiles" class="chart" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-label="%s" data-points="%d" data-series="%d" %s>`,
		chW, chH, chW, chH, esc(title), n, len(curves), chFont)
	fmt.Fprintf(&b, `<title>%s</title>`, esc(title))
	fmt.Fprintf(&b, `<rect x="0" y="0" width="%d" height="%d" fill="#ffffff"/>`, chW, chH)
	fmt.Fprintf(&b, `<text x="%d" y="22" font-size="15" font-weight="600" fill="#1f2937">%s</text>`, chLeft-58, esc(title))
	lx := float64(chLeft - 50)
	for _, c := range curves {
		label := fmt.Sprintf("phase %d, level %d", c.lp.Phase.Index, c.lp.Phase.Level)
		switch c.lp.What {
		case "the last accepted level":
			label += " (held)"
		case "the lowest rejected level":
			label += " (broke)"
		}
		fmt.Fprintf(&b, `<line x1="%.1f" y1="38" x2="%.1f" y2="38" stroke="%s" stroke-width="2.5"/>`, lx, lx+22, c.color)
		fmt.Fprintf(&b, `<text x="%.1f" y="42" font-size="12" fill="#374151">%s</text>`, lx+28, esc(label))
		lx += 28 + textW(label, 12) + 14
	}
	ymax := niceCeil(hi * 1.08)
	px := func(p float64) float64 { return chLeft + curveX(p)/curveDecades*plotW }
	py := func(ms float64) float64 { return chTop + plotH - ms/ymax*plotH }
	yt, ys := ticks(0, ymax, 0)
	for _, v := range yt {
		y := py(v)
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#e5e7eb" stroke-width="1"/>`, chLeft, y, chW-chRight, y)
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#4b5563" stroke-width="1"/>`, chLeft-5, y, chLeft, y)
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" font-size="11" fill="#4b5563" text-anchor="end">%s</text>`, chLeft-8, y+4, esc(tickLabel(v, ys, " ms", useK(yt, ys))))
	}
	for d := 0; d <= curveDecades; d++ {
		x := chLeft + float64(d)/curveDecades*plotW
		anchor := "middle"
		if d == curveDecades {
			anchor = "end" // "99.999 %" stays inside the chart
		}
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#f1f3f5" stroke-width="1"/>`, x, chTop, x, chTop+plotH)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#4b5563" stroke-width="1"/>`, x, chTop+plotH, x, chTop+plotH+5)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" font-size="11" fill="#4b5563" text-anchor="%s">%s</text>`, x, chTop+plotH+18, anchor, curveTick(d))
	}
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#4b5563" stroke-width="1.2"/>`, chLeft, chTop, chLeft, chTop+plotH)
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#4b5563" stroke-width="1.2"/>`, chLeft, chTop+plotH, chW-chRight, chTop+plotH)
	fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="12" fill="#374151" text-anchor="middle">percentile (log scale of 1/(1 − p))</text>`, chLeft+plotW/2, chH-8)
	fmt.Fprintf(&b, `<text x="14" y="%d" font-size="12" fill="#374151" text-anchor="middle" transform="rotate(-90 14 %d)">latency (ms)</text>`, chTop+plotH/2, chTop+plotH/2)
	if len(curves) == 0 {
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="14" fill="#6b7280" text-anchor="middle">no latency distribution to draw</text>`, chLeft+plotW/2, chTop+plotH/2)
	}
	// Each curve: a line through every point of the distribution, and a
	// point at each with its value on hover.
	for _, c := range curves {
		p := c.lp.Phase
		var pts, dots strings.Builder
		for _, pt := range p.LatencyDistribution {
			if !finite(pt.Ms) || !finite(pt.Percentile) {
				continue
			}
			x, y := px(pt.Percentile), py(pt.Ms)
			fmt.Fprintf(&pts, "%.2f,%.2f ", x, y)
			fmt.Fprintf(&dots, `<circle class="lp" cx="%.2f" cy="%.2f" r="3" fill="%s" fill-opacity="0.25" data-p="%s" data-ms="%s"><title>phase %d, level %d: p%s %s ms (%d of %d responses at or below)</title></circle>`,
				x, y, c.color, strconv.FormatFloat(pt.Percentile, 'g', -1, 64), strconv.FormatFloat(pt.Ms, 'g', -1, 64),
				p.Index, p.Level, strconv.FormatFloat(pt.Percentile, 'g', 7, 64), fmtF(pt.Ms, 3), pt.Count, p.LatencyMs.Count)
		}
		fmt.Fprintf(&b, `<g class="curve" data-phase="%d" data-level="%d"><polyline points="%s" fill="none" stroke="%s" stroke-width="2.5" stroke-linejoin="round"/>%s</g>`,
			p.Index, p.Level, strings.TrimSpace(pts.String()), c.color, dots.String())
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}
