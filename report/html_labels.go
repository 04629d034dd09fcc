package report

// box is a text's extent in SVG user units.
type box struct{ x0, y0, x1, y1 float64 }

// textW estimates the width of s at font size size: DejaVu Sans, the
// widest usual system-ui font, is about 0.64 em per character (digits
// 0.636, lower case less), so that the estimate errs wide.
func textW(s string, size float64) float64 {
	return 0.64 * size * float64(len([]rune(s)))
}

// textBox is the box of s drawn at (x, y), y its baseline, anchored
// "start", "middle" or "end"; its height is the font's (DejaVu Sans: an
// ascent of 0.93 em and a descent of 0.24 em, the box a browser gives a
// text), not the glyphs' own.
func textBox(x, y, size float64, anchor, s string) box {
	w := textW(s, size)
	switch anchor {
	case "middle":
		x -= w / 2
	case "end":
		x -= w
	}
	return box{x, y - 0.93*size, x + w, y + 0.24*size}
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
// up to there is free, the label goes under its point instead, or a line
// lower for each text or point already there (a level run three times:
// its top points' label, with no room above them, went under them onto
// the third point).
func (l *labels) above(x, y, size float64, anchor, s string) float64 {
	const margin = 1.5 // keeps neighbouring labels apart as well as off each other
	fits := func(y float64) bool {
		b := textBox(x, y, size, anchor, s)
		b.x0, b.x1 = b.x0-margin, b.x1+margin
		return l.free(b)
	}
	pick, found := 0.0, false
	for ly := y; ly-0.8*size >= legendBottom && !found; ly -= size + 2 {
		pick, found = ly, fits(ly)
	}
	under := y + 2*size + 4
	for ly := under; !found && ly <= under+underLines*(size+2); ly += size + 2 {
		pick, found = ly, fits(ly)
	}
	if !found {
		pick = under
	}
	l.add(textBox(x, pick, size, anchor, s))
	return pick
}

// underLines is how many lines under a point's first one a label may go
// down to find a free one.
const underLines = 4

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
