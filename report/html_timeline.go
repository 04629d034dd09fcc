package report

import (
	"fmt"
	"html/template"
	"math"
	"strconv"
	"strings"

	"github.com/brk-bench/brk"
)

// The timeline chart: the whole run against time, from the phases'
// Timelines — successes/s and failures/s on one axis, p99 (ms) in a
// smaller panel under it on the same time axis, each phase's start a thin
// vertical line labelled with its level, so warm-up and stalls show.

// Timeline chart colours, distinct from the per-level charts' colours.
const (
	colTLOK    = "#4dac26"
	colTLFail  = "#e66101"
	colTLP99   = "#c51b7d"
	colTLPhase = "#aab0b8"
)

// Timeline chart geometry, in SVG user units.
const (
	tlW, tlH         = 1100, 428
	tlLeft, tlRight  = 78, 18
	tlTop            = 62  // the rate panel's top
	tlRateH          = 200 // the rate panel's height
	tlGap            = 26  // between the panels
	tlP99H           = 100 // the p99 panel's height
	tlPlotW          = tlW - tlLeft - tlRight
	tlP99Top         = tlTop + tlRateH + tlGap
	tlBottom         = tlP99Top + tlP99H
	tlMinLabelGapPix = 6
)

// tlSpan is one timeline point placed in the run: its span in seconds
// since the run's start and its rates.
type tlSpan struct {
	t0, t1   float64
	ok, fail float64 // per second
	p99      float64 // ms; 0: no responses in the span
}

// tlPhase is one phase on the timeline.
type tlPhase struct {
	index, level int
	start        float64
	rejected     bool
	spans        []tlSpan
}

// timelinePhases places every phase's timeline points in the run. A point's
// rate is its count over its span: WidthS, except the last point, cut
// short by the phase's end (DurationS); a span of no length is skipped.
func timelinePhases(ps []*brk.PhaseStats) []tlPhase {
	var out []tlPhase
	for _, p := range ps {
		tl := p.Timeline
		if tl == nil || len(tl.Points) == 0 || !(tl.WidthS > 0) || !finite(tl.WidthS) || !finite(tl.StartS) {
			continue
		}
		dur := p.DurationS
		if !(dur > 0) || !finite(dur) {
			dur = tl.WidthS * float64(len(tl.Points))
		}
		ph := tlPhase{index: p.Index, level: p.Level, start: tl.StartS, rejected: !p.Accepted && !p.Interrupted}
		for i, pt := range tl.Points {
			off := float64(i) * tl.WidthS
			span := math.Min(tl.WidthS, dur-off)
			if !(span > 1e-9) {
				continue
			}
			p99 := pt.P99Ms
			if !finite(p99) || p99 < 0 {
				p99 = 0
			}
			ph.spans = append(ph.spans, tlSpan{
				t0: tl.StartS + off, t1: tl.StartS + off + span,
				ok: float64(pt.Succeeded) / span, fail: float64(pt.Failed) / span, p99: p99,
			})
		}
		if len(ph.spans) > 0 {
			out = append(out, ph)
		}
	}
	return out
}

// timelineChart draws the run's timeline, or nothing (no empty box) when no
// phase has one.
func timelineChart(ps []*brk.PhaseStats) template.HTML {
	phases := timelinePhases(ps)
	if len(phases) == 0 {
		return ""
	}
	esc := template.HTMLEscapeString
	tmax, rmax, pmax, n := 0.0, 0.0, 0.0, 0
	for _, ph := range phases {
		for _, s := range ph.spans {
			tmax = math.Max(tmax, s.t1)
			rmax = math.Max(rmax, math.Max(s.ok, s.fail))
			pmax = math.Max(pmax, s.p99)
			n++
		}
	}
	rtop, ptop := niceCeil(rmax*1.08), niceCeil(pmax*1.08)
	xt, xs := ticks(0, tmax, 1)
	tend := math.Max(tmax, xt[len(xt)-1])
	px := func(t float64) float64 { return tlLeft + t/tend*tlPlotW }
	ry := func(v float64) float64 { return tlTop + tlRateH - v/rtop*tlRateH }
	py := func(v float64) float64 { return tlP99Top + tlP99H - v/ptop*tlP99H }

	var b strings.Builder
	title := "Outcomes over time (the whole run)"
	fmt.Fprintf(&b, `<svg id="chart-timeline" class="chart wide" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-label="%s" data-points="%d" data-phases="%d" %s>`,
		tlW, tlH, tlW, tlH, esc(title), n, len(phases), chFont)
	fmt.Fprintf(&b, `<title>%s</title>`, esc(title))
	fmt.Fprintf(&b, `<rect x="0" y="0" width="%d" height="%d" fill="#ffffff"/>`, tlW, tlH)
	fmt.Fprintf(&b, `<text x="%d" y="22" font-size="15" font-weight="600" fill="#1f2937">%s</text>`, tlLeft-58, esc(title))
	lx := float64(tlLeft - 50)
	for _, it := range []legendItem{{label: "successes/s", color: colTLOK}, {label: "failures/s", color: colTLFail},
		{label: "p99 (ms, lower panel; gaps: no responses)", color: colTLP99}, {label: "phase start, its level", color: colTLPhase}} {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="38" x2="%.1f" y2="38" stroke="%s" stroke-width="2.5"/>`, lx, lx+22, it.color)
		fmt.Fprintf(&b, `<text x="%.1f" y="42" font-size="12" fill="#374151">%s</text>`, lx+28, esc(it.label))
		lx += 28 + 6.6*float64(len([]rune(it.label))) + 18
	}

	// Panels: grid, y ticks, axes.
	panel := func(top, h int, lo, hi float64, unit string, y func(float64) float64, label string) {
		yt, ys := ticks(lo, hi, 0)
		k := useK(yt, ys)
		for _, v := range yt {
			fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#e5e7eb" stroke-width="1"/>`, tlLeft, y(v), tlW-tlRight, y(v))
			fmt.Fprintf(&b, `<text x="%d" y="%.1f" font-size="11" fill="#4b5563" text-anchor="end">%s</text>`, tlLeft-8, y(v)+4, esc(tickLabel(v, ys, unit, k)))
		}
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#4b5563" stroke-width="1.2"/>`, tlLeft, top, tlLeft, top+h)
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#4b5563" stroke-width="1.2"/>`, tlLeft, top+h, tlW-tlRight, top+h)
		fmt.Fprintf(&b, `<text x="14" y="%d" font-size="12" fill="#374151" text-anchor="middle" transform="rotate(-90 14 %d)">%s</text>`, top+h/2, top+h/2, esc(label))
	}
	panel(tlTop, tlRateH, 0, rtop, "/s", ry, "outcomes/s")
	panel(tlP99Top, tlP99H, 0, ptop, " ms", py, "p99 (ms)")
	k := useK(xt, xs)
	for _, v := range xt {
		x := px(v)
		for _, top := range []int{tlTop, tlP99Top} {
			h := tlRateH
			if top == tlP99Top {
				h = tlP99H
			}
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#f1f3f5" stroke-width="1"/>`, x, top, x, top+h)
		}
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#4b5563" stroke-width="1"/>`, x, tlBottom, x, tlBottom+5)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" font-size="11" fill="#4b5563" text-anchor="middle">%s</text>`, x, tlBottom+18, esc(tickLabel(v, xs, "", k)))
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="12" fill="#374151" text-anchor="middle">seconds since the run's start</text>`, tlLeft+tlPlotW/2, tlH-8)

	// Phase starts: a thin line through both panels, labelled with the
	// level where the label does not run into the previous one.
	labelEnd := math.Inf(-1)
	for _, ph := range phases {
		x := px(ph.start)
		state := ""
		if ph.rejected {
			state = " (rejected)"
		}
		fmt.Fprintf(&b, `<line class="phase-mark" data-phase="%d" data-level="%d" x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s" stroke-width="1"><title>phase %d starts: level %d%s</title></line>`,
			ph.index, ph.level, x, tlTop-4, x, tlBottom, colTLPhase, ph.index, ph.level, state)
		label := strconv.Itoa(ph.level)
		if x+2 < labelEnd+tlMinLabelGapPix {
			continue
		}
		fill, weight := "#6b7280", "400"
		if ph.rejected {
			fill, weight = colBreak, "600"
		}
		fmt.Fprintf(&b, `<text class="phase-label" x="%.1f" y="%d" font-size="10" font-weight="%s" fill="%s" %s>%s</text>`, x+2, tlTop+10, weight, fill, halo, esc(label))
		labelEnd = x + 2 + 6*float64(len(label))
	}

	// The series, as steps: each span a level line over its span; a new
	// subpath at each phase (and, for p99, after each span without
	// responses).
	series := func(name, color string, y func(float64) float64, val func(tlSpan) (float64, bool)) {
		var d strings.Builder
		var vals []string
		for _, ph := range phases {
			pen := false
			last := math.NaN()
			for _, s := range ph.spans {
				v, ok := val(s)
				if !ok {
					pen = false
					vals = append(vals, "-")
					continue
				}
				vals = append(vals, strconv.FormatFloat(v, 'g', 6, 64))
				x0, x1, yy := px(s.t0), px(s.t1), y(v)
				switch {
				case !pen || !finite(last) || math.Abs(px(last)-x0) > 0.05:
					fmt.Fprintf(&d, "M%.1f %.1fH%.1f", x0, yy, x1)
				default:
					fmt.Fprintf(&d, "V%.1fH%.1f", yy, x1)
				}
				pen, last = true, s.t1
			}
		}
		if d.Len() == 0 {
			return
		}
		fmt.Fprintf(&b, `<path class="series" data-series="%s" data-values="%s" d="%s" fill="none" stroke="%s" stroke-width="2" stroke-linejoin="round"/>`,
			esc(name), strings.Join(vals, " "), d.String(), color)
	}
	series("successes/s", colTLOK, ry, func(s tlSpan) (float64, bool) { return s.ok, true })
	series("failures/s", colTLFail, ry, func(s tlSpan) (float64, bool) { return s.fail, true })
	series("p99 ms", colTLP99, py, func(s tlSpan) (float64, bool) { return s.p99, s.p99 > 0 })
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}
