package report

import "testing"

// TestLabelAboveItsPoint: a point's label goes on the first free line
// above it; with none free up to the legend's row, under the point, or a
// line lower for each text or point already there; it never covers what
// was placed before it when a free line is within reach.
func TestLabelAboveItsPoint(t *testing.T) {
	const x, y, size = 300.0, 70.0, 11.0
	point := func(py float64) box { return box{x - 6, py - 6, x + 6, py + 6} }
	full := box{0, legendBottom - 20, 600, y + 4} // every line from the point up to the legend taken
	for _, c := range []struct {
		name  string
		taken []box
		want  float64
	}{
		{"free above", nil, y},
		{"a label in the way: one line up", []box{textBox(x, y, size, "middle", "12")}, y - size - 2},
		{"no line above: under the point", []box{full}, y + 2*size + 4},
		// A level run three times: its top points' label, with no room
		// above, went under them onto the third point, 33 units lower.
		{"no line above, a point under: a line lower", []box{full, point(y + 33)}, y + 2*size + 4 + 2*(size+2)},
	} {
		t.Run(c.name, func(t *testing.T) {
			lb := &labels{}
			for _, b := range c.taken {
				lb.add(b)
			}
			got := lb.above(x, y, size, "middle", "4, 6")
			if got != c.want {
				t.Fatalf("baseline %.1f, want %.1f", got, c.want)
			}
			b := textBox(x, got, size, "middle", "4, 6")
			for _, o := range c.taken {
				if o.overlaps(b) {
					t.Fatalf("the label %+v covers %+v", b, o)
				}
			}
		})
	}
}
