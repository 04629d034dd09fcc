package report

import (
	"fmt"
	"html/template"
	"math"
	"sort"
	"strconv"
	"strings"
)

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
	logX     bool   // the x axis is logarithmic (xmin > 0)
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

// logTickLabel is a power of two's label on a logarithmic axis: 512,
// 8192, 16.4k, 131k.
func logTickLabel(v float64) string {
	switch {
	case v < 10000:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case v < 100000:
		return strconv.FormatFloat(math.Round(v/100)/10, 'f', -1, 64) + "k"
	}
	return strconv.FormatFloat(math.Round(v/1000), 'f', -1, 64) + "k"
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
	if c.logX {
		return chLeft + math.Log(x/c.xmin)/math.Log(c.xmax/c.xmin)*plotW
	}
	return chLeft + (x-c.xmin)/(c.xmax-c.xmin)*plotW
}

// xTicks are the x axis's ticks and their step: on a logarithmic axis
// the powers of two within it, every other one (or fewer) when there
// would be more than nominalTicks + 4.
func (c *chart) xTicks() ([]float64, float64) {
	if !c.logX {
		return ticks(c.xmin, c.xmax, 1)
	}
	var pow []float64
	for v := math.Exp2(math.Ceil(math.Log2(c.xmin))); v <= c.xmax; v *= 2 {
		pow = append(pow, v)
	}
	every := (len(pow) + nominalTicks + 3) / (nominalTicks + 4)
	var out []float64
	for i := len(pow) - 1; i >= 0; i -= max(every, 1) {
		out = append([]float64{pow[i]}, out...)
	}
	return out, 1
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
	c.drawLegend(&b, &lb)
	c.drawGrid(&b, &lb)
	c.markPoints(&lb)
	markLabel := c.drawMark(&b, &lb)
	c.drawSeries(&b, &lb)
	c.drawLimits(&b, &lb)
	b.WriteString(markLabel) // over the data, in the place it took before them
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// drawLegend draws the legend, one row under the title.
func (c *chart) drawLegend(b *strings.Builder, lb *labels) {
	esc := template.HTMLEscapeString
	lx := float64(chLeft - 50)
	for _, it := range c.legend {
		switch {
		case it.dashed:
			fmt.Fprintf(b, `<line x1="%.1f" y1="38" x2="%.1f" y2="38" stroke="%s" stroke-width="2.5" stroke-dasharray="6 4"/>`, lx, lx+22, it.color)
		case it.hollow:
			fmt.Fprintf(b, `<circle cx="%.1f" cy="38" r="%.1f" fill="#ffffff" stroke="%s" stroke-width="2"/>`, lx+11, pointR, it.color)
		default:
			fmt.Fprintf(b, `<line x1="%.1f" y1="38" x2="%.1f" y2="38" stroke="%s" stroke-width="2.5"/>`, lx, lx+22, it.color)
			fmt.Fprintf(b, `<circle cx="%.1f" cy="38" r="%.1f" fill="%s"/>`, lx+11, pointR, it.color)
		}
		fmt.Fprintf(b, `<text x="%.1f" y="42" font-size="12" fill="#374151">%s</text>`, lx+28, esc(it.label))
		lb.add(textBox(lx+28, 42, 12, "start", it.label))
		lx += 28 + textW(it.label, 12) + 14
	}
}

// drawGrid draws the grid, the ticks and their labels, the axes and their
// labels, and the message of an empty chart.
func (c *chart) drawGrid(b *strings.Builder, lb *labels) {
	esc := template.HTMLEscapeString
	yt, ys := ticks(c.ymin, c.ymax, 0)
	for _, v := range yt {
		y := c.py(v)
		fmt.Fprintf(b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#e5e7eb" stroke-width="1"/>`, chLeft, y, chW-chRight, y)
		fmt.Fprintf(b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#4b5563" stroke-width="1"/>`, chLeft-5, y, chLeft, y)
		l := tickLabel(v, ys, c.yUnit, useK(yt, ys))
		fmt.Fprintf(b, `<text x="%d" y="%.1f" font-size="11" fill="#4b5563" text-anchor="end">%s</text>`, chLeft-8, y+4, esc(l))
		lb.add(textBox(chLeft-8, y+4, 11, "end", l))
	}
	xt, xs := c.xTicks()
	for _, v := range xt {
		x := c.px(v)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#f1f3f5" stroke-width="1"/>`, x, chTop, x, chTop+plotH)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#4b5563" stroke-width="1"/>`, x, chTop+plotH, x, chTop+plotH+5)
		l := tickLabel(v, xs, "", useK(xt, xs))
		if c.logX {
			l = logTickLabel(v)
		}
		fmt.Fprintf(b, `<text x="%.1f" y="%d" font-size="11" fill="#4b5563" text-anchor="middle">%s</text>`, x, chTop+plotH+18, esc(l))
		lb.add(textBox(x, chTop+plotH+18, 11, "middle", l))
	}
	// Axes.
	fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#4b5563" stroke-width="1.2"/>`, chLeft, chTop, chLeft, chTop+plotH)
	fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#4b5563" stroke-width="1.2"/>`, chLeft, chTop+plotH, chW-chRight, chTop+plotH)
	fmt.Fprintf(b, `<text x="%d" y="%d" font-size="12" fill="#374151" text-anchor="middle">%s</text>`, chLeft+plotW/2, chH-8, esc(c.xLabel))
	lb.add(textBox(chLeft+plotW/2, chH-8, 12, "middle", c.xLabel))
	fmt.Fprintf(b, `<text x="14" y="%d" font-size="12" fill="#374151" text-anchor="middle" transform="rotate(-90 14 %d)">%s</text>`, chTop+plotH/2, chTop+plotH/2, esc(c.yLabel))

	if c.empty != "" {
		fmt.Fprintf(b, `<text x="%d" y="%d" font-size="14" fill="#6b7280" text-anchor="middle">%s</text>`, chLeft+plotW/2, chTop+plotH/2, esc(c.empty))
	}
}

// drawSeries draws each series: a line through the points in level
// order, then the points (the run order's numbers on the last series
// only: the top one).
func (c *chart) drawSeries(b *strings.Builder, lb *labels) {
	esc := template.HTMLEscapeString
	// An interrupted level is named once, over its first series' point:
	// the latency chart's four percentiles share the level.
	named := map[float64]bool{}
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
			fmt.Fprintf(b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2.5" stroke-linejoin="round" data-series="%s"/>`,
				strings.Join(pts, " "), link, esc(s.name))
		}
		for _, p := range s.pts {
			x, y := c.px(p.x), c.py(p.y)
			switch p.kind {
			case ptIn:
				fmt.Fprintf(b, `<circle class="pt interrupted" cx="%.1f" cy="%.1f" r="%.1f" fill="#ffffff" stroke="%s" stroke-width="2"><title>%s</title></circle>`,
					x, y, pointR, colInterrupted, esc(p.tip))
				if !named[x] {
					named[x] = true
					ly := lb.above(x, y-9, 11, "middle", "interrupted")
					fmt.Fprintf(b, `<text x="%.1f" y="%.1f" font-size="11" fill="#6b7280" text-anchor="middle">interrupted</text>`, x, ly)
				}
			case ptRejected:
				fill := s.rejColor
				if fill == "" {
					fill = s.color
				}
				fmt.Fprintf(b, `<circle class="pt rejected" cx="%.1f" cy="%.1f" r="%.1f" fill="%s"><title>%s</title></circle>`, x, y, pointR+0.5, fill, esc(p.tip))
			default:
				fmt.Fprintf(b, `<circle class="pt" cx="%.1f" cy="%.1f" r="%.1f" fill="%s"><title>%s</title></circle>`, x, y, pointR, s.color, esc(p.tip))
			}
		}
		if c.runOrder && si == len(c.series)-1 {
			c.drawRuns(b, lb, s.pts)
		}
	}
}

// drawRuns numbers each point with its phase; the runs of one level whose
// points lie within a label's height of each other (a level run again)
// share one label, "3, 5", above the highest of them.
func (c *chart) drawRuns(b *strings.Builder, lb *labels, pts []chartPoint) {
	type spot struct {
		x, y float64
		runs []string
	}
	var spots []*spot
	for _, p := range pts {
		if p.kind == ptIn {
			continue
		}
		x, y := c.px(p.x), c.py(p.y)
		var s *spot
		for _, o := range spots {
			if math.Abs(o.x-x) < 1 && math.Abs(o.y-y) < 14 {
				s = o
				break
			}
		}
		if s == nil {
			s = &spot{x: x, y: y}
			spots = append(spots, s)
		}
		s.y = math.Min(s.y, y)
		s.runs = append(s.runs, strconv.Itoa(p.run))
	}
	for _, s := range spots {
		text := strings.Join(s.runs, ", ")
		ly := lb.above(s.x, s.y-9, 11, "middle", text)
		fmt.Fprintf(b, `<text class="run" x="%.1f" y="%.1f" font-size="11" fill="#6b7280" text-anchor="middle" %s>%s</text>`, s.x, ly, halo, text)
	}
}

// drawLimits draws the limit lines (the SLA, the timeout), over the data
// so they stay visible, each labelled at the right end above the line,
// else where its label runs into no other text or point: below it, at
// the left end, along the line, then a line further off; and names the
// limits above the scale at the top.
func (c *chart) drawLimits(b *strings.Builder, lb *labels) {
	esc := template.HTMLEscapeString
	for _, h := range sortedByY(c.hlines) {
		y := c.py(h.y)
		fmt.Fprintf(b, `<line class="hline %s" x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="%s" stroke-width="2" stroke-dasharray="%s"/>`,
			esc(h.class), chLeft, y, chW-chRight, y, h.color, h.dash)
		mid := float64(chLeft+chW-chRight) / 2
		x, ly, anchor := lb.place(h.label, 11, []spot{
			{chW - chRight - 4, y - 5, "end"}, {chW - chRight - 4, y + 14, "end"},
			{chLeft + 6, y - 5, "start"}, {chLeft + 6, y + 14, "start"},
			{mid, y - 5, "middle"}, {mid, y + 14, "middle"},
			{(chLeft + mid) / 2, y - 5, "middle"}, {(chLeft + mid) / 2, y + 14, "middle"},
			{(mid + chW - chRight) / 2, y - 5, "middle"}, {(mid + chW - chRight) / 2, y + 14, "middle"},
			{chW - chRight - 4, y - 19, "end"}, {chLeft + 6, y - 19, "start"},
			{chW - chRight - 4, y + 28, "end"}, {chLeft + 6, y + 28, "start"},
		})
		fmt.Fprintf(b, `<text class="hline-label %s" x="%.1f" y="%.1f" font-size="11" fill="%s" text-anchor="%s" %s>%s</text>`,
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
		fmt.Fprintf(b, `<text class="offscale %s" x="%d" y="%.1f" font-size="11" fill="%s" %s>%s</text>`,
			esc(h.class), chLeft+6, offY, h.color, halo, esc(l))
		offY += 14
	}
}

// byLevel is the points in level order (then run order), for the line
// through them: a search visits levels out of order.
func byLevel(pts []chartPoint) []chartPoint {
	out := append([]chartPoint(nil), pts...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].x < out[j].x })
	return out
}

// sortedByY returns the lines from the top of the chart down.
func sortedByY(hs []hline) []hline {
	out := append([]hline(nil), hs...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].y > out[j].y })
	return out
}

// markPoints takes the places of the data points, so that no label is
// put over one: a point's circle and its stroke.
func (c *chart) markPoints(lb *labels) {
	const r = pointR + 1.5
	for _, s := range c.series {
		for _, p := range s.pts {
			x, y := c.px(p.x), c.py(p.y)
			lb.add(box{x - r, y - r, x + r, y + r})
		}
	}
}

// drawMark draws the break: the bracket between the last accepted level
// and the break shaded, a dashed vertical line at the break; and returns
// its label, placed where it covers no text or point, to be written over
// the data.
func (c *chart) drawMark(b *strings.Builder, lb *labels) string {
	m := c.mark
	if m == nil || !finite(m.x) || m.x < c.xmin || m.x > c.xmax {
		return ""
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
	// the left (or right) edge; where data points are there, a line lower,
	// the other side, or at the bottom; with a white halo so that it reads
	// over the data.
	left, right := spot{x - 4, chTop + 13, "end"}, spot{x + 4, chTop + 13, "start"}
	w := textW(m.label, 11) + 8
	fitsLeft, fitsRight := x-chLeft >= w, chW-chRight-x >= w
	var spots []spot
	for _, dy := range []float64{0, 14, 28} {
		if fitsLeft {
			spots = append(spots, spot{left.x, left.y + dy, left.anchor})
		}
		if fitsRight {
			spots = append(spots, spot{right.x, right.y + dy, right.anchor})
		}
	}
	for _, sp := range []spot{left, right} {
		if sp == left && fitsLeft || sp == right && fitsRight {
			spots = append(spots, spot{sp.x, chTop + plotH - 6, sp.anchor})
		}
	}
	if len(spots) == 0 {
		spots = []spot{right}
	}
	lx, ly, anchor := lb.place(m.label, 11, spots)
	return fmt.Sprintf(`<text class="break-label" x="%.1f" y="%.1f" font-size="11" font-weight="600" fill="%s" text-anchor="%s" %s>%s</text>`,
		lx, ly, colBreak, anchor, halo, template.HTMLEscapeString(m.label))
}
