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

// Timeline chart geometry, in SVG user units: the chart is drawn twice,
// tlWideW wide for a wide window and tlNarrowW for a narrow one (CSS shows
// one), so that its text reads at 11 px or more in either.
const (
	tlWideW, tlNarrowW = 1100, 740
	tlLeft, tlRight    = 78, 18
	tlRateH            = 200 // the outcomes panel's height
	tlStatusH          = 110 // the status classes panel's height
	tlGap              = 30  // between the panels
	tlP99H             = 100 // the p99 panel's height
	tlMinLabelGapPix   = 6
)

// Status class colours on the timeline (the classes a run saw).
var tlClassColour = [6]string{"#7f7f7f", "#66c2a5", "#1b9e77", "#7570b3", "#d95f02", "#a6761d"}

// tlSpan is one timeline point placed in the run: its span in seconds
// since the run's start and its rates.
type tlSpan struct {
	t0, t1   float64
	ok, fail float64    // per second
	p99      float64    // ms; 0: no responses in the span
	status   [6]float64 // responses per second by class: other, 1xx..5xx
	phase    int
}

// tlPhase is one phase on the timeline.
type tlPhase struct {
	index, level int
	start        float64
	rejected     bool
	spans        []tlSpan
	// stall is the span of the phase's stall, seconds since the run's
	// start (stall[1] 0: none).
	stall [2]float64
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
		if e := p.Evidence; e != nil && e.Stall != nil {
			ph.stall = [2]float64{tl.StartS + e.Stall.At.Seconds(), tl.StartS + (e.Stall.At + e.Stall.Span).Seconds()}
		}
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
			st := pt.Statuses
			ph.spans = append(ph.spans, tlSpan{
				t0: tl.StartS + off, t1: tl.StartS + off + span,
				ok: float64(pt.Succeeded) / span, fail: float64(pt.Failed) / span, p99: p99,
				status: [6]float64{float64(st.Other) / span, float64(st.S1xx) / span, float64(st.S2xx) / span,
					float64(st.S3xx) / span, float64(st.S4xx) / span, float64(st.S5xx) / span},
				phase: p.Index,
			})
		}
		if len(ph.spans) > 0 {
			out = append(out, ph)
		}
	}
	return out
}

// classNames are the status classes' names, by index.
var classNames = [6]string{"other", "1xx", "2xx", "3xx", "4xx", "5xx"}

// timelineChart draws the run's timeline, wide and narrow, or nothing (no
// empty box) when no phase has one.
func timelineChart(ps []*brk.PhaseStats) template.HTML {
	phases := timelinePhases(ps)
	if len(phases) == 0 {
		return ""
	}
	return timelineSVG(phases, "chart-timeline", "wide tl-wide", tlWideW) + "\n" +
		timelineSVG(phases, "chart-timeline-narrow", "wide tl-narrow", tlNarrowW)
}

// tlChart is one drawing of the timeline: the phases, the status classes
// the run saw, the legend placed, and the panels' layout.
type tlChart struct {
	b       strings.Builder
	phases  []tlPhase
	classes []int // the status classes seen, in legend order
	legend  []tlPlaced
	w       int
	n       int // spans drawn
	plotW   float64
	// The panels' tops (status: the status classes panel; p99Top ==
	// statusTop without one), the plot's bottom, the chart's height.
	top, statusTop, p99Top, bottom, h int
	rtop, stop, ptop, tend            float64 // the scales' ends
	xt                                []float64
	xs                                float64
}

// tlPlaced is a legend item where it is drawn.
type tlPlaced struct {
	it   legendItem
	x, y float64
}

// tlPanel is one panel of the timeline: its place, its scale, its label.
type tlPanel struct {
	top, h int
	hi     float64
	unit   string
	y      func(float64) float64
	label  string
}

// timelineSVG draws the timeline w units wide.
func timelineSVG(phases []tlPhase, id, class string, w int) template.HTML {
	c := newTLChart(phases, w)
	c.drawHeader(id, class)
	panels := c.panels()
	c.drawPanels(panels)
	c.drawXTicks(panels)
	c.drawPhaseMarks()
	c.drawSeries()
	c.drawHover()
	c.b.WriteString(`</svg>`)
	return template.HTML(c.b.String())
}

// newTLChart lays the timeline out: the scales from the phases' highest
// figures, the legend wrapped into rows within the chart's width, the
// panels under it.
func newTLChart(phases []tlPhase, w int) *tlChart {
	c := &tlChart{phases: phases, w: w, plotW: float64(w - tlLeft - tlRight)}
	tmax, rmax, smax, pmax := 0.0, 0.0, 0.0, 0.0
	var seen [6]bool
	for _, ph := range phases {
		for _, s := range ph.spans {
			tmax = math.Max(tmax, s.t1)
			rmax = math.Max(rmax, math.Max(s.ok, s.fail))
			pmax = math.Max(pmax, s.p99)
			for cl, v := range s.status {
				smax = math.Max(smax, v)
				seen[cl] = seen[cl] || v > 0
			}
			c.n++
		}
	}
	c.classes = []int{}
	for _, cl := range []int{2, 3, 4, 5, 1, 0} {
		if seen[cl] {
			c.classes = append(c.classes, cl)
		}
	}
	legend := []legendItem{{label: "successes/s", color: colTLOK}, {label: "failures/s", color: colTLFail}}
	for _, cl := range c.classes {
		legend = append(legend, legendItem{label: classNames[cl] + "/s", color: tlClassColour[cl]})
	}
	legend = append(legend, legendItem{label: "p99 (ms, lower panel; gaps: no responses)", color: colTLP99},
		legendItem{label: "phase start, its level", color: colTLPhase})
	// The legend wraps into rows within the chart's width.
	lx, ly := float64(tlLeft-50), 38.0
	for _, it := range legend {
		wd := 28 + textW(it.label, 12)
		if lx+wd > float64(w-tlRight) && lx > tlLeft-50 {
			lx, ly = tlLeft-50, ly+20
		}
		c.legend = append(c.legend, tlPlaced{it, lx, ly})
		lx += wd + 14
	}
	c.top = int(ly) + 24 // the outcomes panel's top
	c.statusTop = c.top + tlRateH + tlGap
	c.p99Top = c.statusTop + tlStatusH + tlGap
	if len(c.classes) == 0 {
		c.p99Top = c.statusTop
	}
	c.bottom = c.p99Top + tlP99H
	c.h = c.bottom + 44

	c.rtop, c.stop, c.ptop = niceCeil(rmax*1.08), niceCeil(smax*1.08), niceCeil(pmax*1.08)
	c.xt, c.xs = ticks(0, tmax, 1)
	c.tend = math.Max(tmax, c.xt[len(c.xt)-1])
	return c
}

func (c *tlChart) px(t float64) float64 { return tlLeft + t/c.tend*c.plotW }
func (c *tlChart) ry(v float64) float64 { return float64(c.top+tlRateH) - v/c.rtop*tlRateH }
func (c *tlChart) sy(v float64) float64 { return float64(c.statusTop+tlStatusH) - v/c.stop*tlStatusH }
func (c *tlChart) py(v float64) float64 { return float64(c.p99Top+tlP99H) - v/c.ptop*tlP99H }

// drawHeader opens the SVG and draws the title and the legend.
func (c *tlChart) drawHeader(id, class string) {
	esc := template.HTMLEscapeString
	b, w, h := &c.b, c.w, c.h
	title := "Outcomes over time (the whole run)"
	fmt.Fprintf(b, `<svg id="%s" class="chart %s" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-label="%s" data-points="%d" data-phases="%d" %s>`,
		id, class, w, h, w, h, esc(title), c.n, len(c.phases), chFont)
	fmt.Fprintf(b, `<title>%s</title>`, esc(title))
	fmt.Fprintf(b, `<rect x="0" y="0" width="%d" height="%d" fill="#ffffff"/>`, w, h)
	fmt.Fprintf(b, `<text x="%d" y="22" font-size="15" font-weight="600" fill="#1f2937">%s</text>`, tlLeft-58, esc(title))
	for _, p := range c.legend {
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2.5"/>`, p.x, p.y, p.x+22, p.y, p.it.color)
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" font-size="12" fill="#374151">%s</text>`, p.x+28, p.y+4, esc(p.it.label))
	}
}

// panels are the outcomes panel, the status classes panel when the run
// saw a status, and the p99 panel, top down.
func (c *tlChart) panels() []tlPanel {
	panels := []tlPanel{{c.top, tlRateH, c.rtop, "/s", c.ry, "outcomes/s"}}
	if len(c.classes) > 0 {
		panels = append(panels, tlPanel{c.statusTop, tlStatusH, c.stop, "/s", c.sy, "responses/s by status"})
	}
	return append(panels, tlPanel{c.p99Top, tlP99H, c.ptop, " ms", c.py, "p99 (ms)"})
}

// drawPanels draws each panel's grid, y ticks and axes.
func (c *tlChart) drawPanels(panels []tlPanel) {
	esc := template.HTMLEscapeString
	b, w := &c.b, c.w
	for _, pn := range panels {
		yt, ys := ticks(0, pn.hi, 0)
		k := useK(yt, ys)
		for _, v := range yt {
			fmt.Fprintf(b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#e5e7eb" stroke-width="1"/>`, tlLeft, pn.y(v), w-tlRight, pn.y(v))
			fmt.Fprintf(b, `<text x="%d" y="%.1f" font-size="11" fill="#4b5563" text-anchor="end">%s</text>`, tlLeft-8, pn.y(v)+4, esc(tickLabel(v, ys, pn.unit, k)))
		}
		fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#4b5563" stroke-width="1.2"/>`, tlLeft, pn.top, tlLeft, pn.top+pn.h)
		fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#4b5563" stroke-width="1.2"/>`, tlLeft, pn.top+pn.h, w-tlRight, pn.top+pn.h)
		fmt.Fprintf(b, `<text x="14" y="%d" font-size="12" fill="#374151" text-anchor="middle" transform="rotate(-90 14 %d)">%s</text>`, pn.top+pn.h/2, pn.top+pn.h/2, esc(pn.label))
	}
}

// drawXTicks draws the time axis: a tick through every panel, labelled
// where the label leaves room for it, and the axis's label.
func (c *tlChart) drawXTicks(panels []tlPanel) {
	esc := template.HTMLEscapeString
	b, w, bottom := &c.b, c.w, c.bottom
	k := useK(c.xt, c.xs)
	lastEnd := math.Inf(-1)
	for _, v := range c.xt {
		x := c.px(v)
		for _, pn := range panels {
			fmt.Fprintf(b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#f1f3f5" stroke-width="1"/>`, x, pn.top, x, pn.top+pn.h)
		}
		fmt.Fprintf(b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#4b5563" stroke-width="1"/>`, x, bottom, x, bottom+5)
		l := tickLabel(v, c.xs, "", k)
		if bx := textBox(x, float64(bottom+18), 11, "middle", l); bx.x0 > lastEnd+4 && bx.x1 <= float64(w) {
			fmt.Fprintf(b, `<text x="%.1f" y="%d" font-size="11" fill="#4b5563" text-anchor="middle">%s</text>`, x, bottom+18, esc(l))
			lastEnd = bx.x1
		}
	}
	fmt.Fprintf(b, `<text x="%d" y="%d" font-size="12" fill="#374151" text-anchor="middle">seconds since the run's start</text>`, tlLeft+int(c.plotW)/2, c.h-8)
}

// drawPhaseMarks draws each phase's start: a thin line through the
// panels, labelled with the level where the label does not run into the
// previous one.
func (c *tlChart) drawPhaseMarks() {
	esc := template.HTMLEscapeString
	b, top, bottom := &c.b, c.top, c.bottom
	labelEnd := math.Inf(-1)
	for _, ph := range c.phases {
		if ph.stall[1] > 0 {
			x0, x1 := c.px(ph.stall[0]), c.px(ph.stall[1])
			fmt.Fprintf(b, `<rect class="stall" data-phase="%d" x="%.1f" y="%d" width="%.1f" height="%d" fill="%s" fill-opacity="0.15"><title>phase %d: a stall of %.2g s (its level runs again)</title></rect>`,
				ph.index, x0, top, math.Max(x1-x0, 1), bottom-top, colBreak, ph.index, ph.stall[1]-ph.stall[0])
		}
		x := c.px(ph.start)
		state := ""
		if ph.rejected {
			state = " (rejected)"
		}
		fmt.Fprintf(b, `<line class="phase-mark" data-phase="%d" data-level="%d" x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s" stroke-width="1"><title>phase %d starts: level %d%s</title></line>`,
			ph.index, ph.level, x, top-4, x, bottom, colTLPhase, ph.index, ph.level, state)
		label := strconv.Itoa(ph.level)
		if x+2 < labelEnd+tlMinLabelGapPix {
			continue
		}
		fill, weight := "#6b7280", "400"
		if ph.rejected {
			fill, weight = colBreak, "600"
		}
		fmt.Fprintf(b, `<text class="phase-label" x="%.1f" y="%d" font-size="11" font-weight="%s" fill="%s" %s>%s</text>`, x+2, top+11, weight, fill, halo, esc(label))
		labelEnd = x + 2 + textW(label, 11)
	}
}

// drawSeries draws the outcomes, the status classes seen and the p99.
func (c *tlChart) drawSeries() {
	c.series("successes/s", colTLOK, c.ry, func(s tlSpan) (float64, bool) { return s.ok, true })
	c.series("failures/s", colTLFail, c.ry, func(s tlSpan) (float64, bool) { return s.fail, true })
	for _, cl := range c.classes {
		c.series(classNames[cl]+"/s", tlClassColour[cl], c.sy, func(s tlSpan) (float64, bool) { return s.status[cl], true })
	}
	c.series("p99 ms", colTLP99, c.py, func(s tlSpan) (float64, bool) { return s.p99, s.p99 > 0 })
}

// series draws one series as steps: each span a level line over its
// span; a new subpath at each phase (and, for p99, after each span
// without responses).
func (c *tlChart) series(name, color string, y func(float64) float64, val func(tlSpan) (float64, bool)) {
	var d strings.Builder
	var vals []string
	for _, ph := range c.phases {
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
			x0, x1, yy := c.px(s.t0), c.px(s.t1), y(v)
			switch {
			case !pen || !finite(last) || math.Abs(c.px(last)-x0) > 0.05:
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
	fmt.Fprintf(&c.b, `<path class="series" data-series="%s" data-values="%s" d="%s" fill="none" stroke="%s" stroke-width="2" stroke-linejoin="round"/>`,
		template.HTMLEscapeString(name), strings.Join(vals, " "), d.String(), color)
}

// drawHover gives the values on hover: each span a transparent column
// over the panels, titled with its figures.
func (c *tlChart) drawHover() {
	for _, ph := range c.phases {
		for _, s := range ph.spans {
			var t strings.Builder
			fmt.Fprintf(&t, "phase %d (level %d), %s–%s s: %s successes/s, %s failures/s", s.phase, ph.level,
				fmtF(s.t0, 1), fmtF(s.t1, 1), fmtF(s.ok, 1), fmtF(s.fail, 1))
			for _, cl := range c.classes {
				if s.status[cl] > 0 {
					fmt.Fprintf(&t, "; %s %s/s", classNames[cl], fmtF(s.status[cl], 1))
				}
			}
			if s.p99 > 0 {
				fmt.Fprintf(&t, "; p99 %s ms", fmtF(s.p99, 3))
			}
			fmt.Fprintf(&c.b, `<rect class="hover" x="%.1f" y="%d" width="%.2f" height="%d" fill="#ffffff" fill-opacity="0"><title>%s</title></rect>`,
				c.px(s.t0), c.top, math.Max(c.px(s.t1)-c.px(s.t0), 0.1), c.bottom-c.top, template.HTMLEscapeString(t.String()))
		}
	}
}
