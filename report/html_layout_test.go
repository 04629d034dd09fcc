package report_test

import (
	"encoding/json"
	"fmt"
	"html"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/brk-bench/brk"
)

// The percentile curve is drawn from every point of the JSON's
// latency_distribution: for each of the final pair's phases of a real
// run (its report read back from JSON), one point per distribution point
// with its percentile and value, in order; the line through exactly
// those points; x linear in log10(1/(1−p)), y linear in the value.
func TestHTMLPercentileCurve(t *testing.T) {
	t.Parallel() // Chromium (and a short run), timing nothing
	run := htmlRealRun(t)
	raw, err := json.Marshal(run)
	if err != nil {
		t.Fatal(err)
	}
	var r brk.Result
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	var js struct {
		Phases []struct {
			Dist []struct {
				Percentile float64 `json:"percentile"`
				Ms         float64 `json:"value_ms"`
			} `json:"latency_distribution"`
		} `json:"phases"`
	}
	if err := json.Unmarshal(raw, &js); err != nil {
		t.Fatal(err)
	}
	doc := writeHTML(t, &r)
	checkWellFormed(t, doc)
	frag, ok := svgFragments(t, doc)["chart-percentiles"]
	if !ok {
		t.Fatal("no percentile curve")
	}
	held, broke := reportPair(&r)
	curves := regexp.MustCompile(`(?s)<g class="curve" data-phase="(\d+)" data-level="\d+"><polyline points="([^"]*)"[^>]*/>(.*?)</g>`).FindAllStringSubmatch(frag, -1)
	if len(curves) != 2 {
		t.Fatalf("%d curves, want 2 (the final pair %d, %d)", len(curves), held, broke)
	}
	dotRE := regexp.MustCompile(`<circle class="lp" cx="([-0-9.]+)" cy="([-0-9.]+)"[^>]* data-p="([^"]+)" data-ms="([^"]+)"><title>[^<]+</title></circle>`)
	for i, c := range curves {
		idx, _ := strconv.Atoi(c[1])
		if want := []int{held, broke}[i]; idx != want {
			t.Errorf("curve %d: phase %d, want %d", i, idx, want)
		}
		want := js.Phases[idx].Dist
		dots := dotRE.FindAllStringSubmatch(c[3], -1)
		if len(want) < 100 || len(dots) != len(want) {
			t.Fatalf("phase %d: %d points drawn, the JSON has %d (want at least 100)", idx, len(dots), len(want))
		}
		line := strings.Fields(c[2])
		if len(line) != len(dots) {
			t.Fatalf("phase %d: the line has %d points, %d drawn", idx, len(line), len(dots))
		}
		// x = a + b·log10(1/(1−p)), y = c − d·ms: read a, b from two
		// points, c, d from two others, and check every point.
		x := make([]float64, len(dots))
		y := make([]float64, len(dots))
		for j, d := range dots {
			p, _ := strconv.ParseFloat(d[3], 64)
			ms, _ := strconv.ParseFloat(d[4], 64)
			if p != want[j].Percentile || ms != want[j].Ms {
				t.Errorf("phase %d point %d: p%v %v ms, the JSON p%v %v ms", idx, j, p, ms, want[j].Percentile, want[j].Ms)
			}
			x[j], _ = strconv.ParseFloat(d[1], 64)
			y[j], _ = strconv.ParseFloat(d[2], 64)
			if line[j] != d[1]+","+d[2] {
				t.Errorf("phase %d: line point %d %s, dot at %s,%s", idx, j, line[j], d[1], d[2])
			}
		}
		lg := func(p float64) float64 { return -math.Log10(1 - p/100) }
		n := len(want) - 1
		b := (x[n] - x[0]) / (lg(want[n].Percentile) - lg(want[0].Percentile))
		lo, hi := 0, n
		for want[lo].Ms == want[hi].Ms && lo < hi {
			lo++
		}
		d := (y[lo] - y[hi]) / (want[hi].Ms - want[lo].Ms)
		for j := range want {
			if ex := x[0] + b*(lg(want[j].Percentile)-lg(want[0].Percentile)); math.Abs(ex-x[j]) > 0.02 {
				t.Errorf("phase %d point %d (p%v): x %.2f, want %.2f on the 1/(1-p) axis", idx, j, want[j].Percentile, x[j], ex)
			}
			if ey := y[lo] - d*(want[j].Ms-want[lo].Ms); math.Abs(ey-y[j]) > 0.02 {
				t.Errorf("phase %d point %d (%v ms): y %.2f, want %.2f", idx, j, want[j].Ms, y[j], ey)
			}
		}
	}
	for _, s := range []string{">90 %</text>", ">99 %</text>", ">99.9 %</text>", ">99.99 %</text>", ">99.999 %</text>", "(held)", "(broke)"} {
		if !strings.Contains(frag, s) {
			t.Errorf("percentile curve lacks %q", s)
		}
	}
}

// reportPair is the final pair's phase indexes (-1: none).
func reportPair(r *brk.Result) (held, broke int) {
	held, broke = -1, -1
	if fp := r.FinalPair; fp != nil {
		if fp.HeldPhase != nil {
			held = *fp.HeldPhase
		}
		if fp.BrokePhase != nil {
			broke = *fp.BrokePhase
		}
	}
	return held, broke
}

// The timeline counts responses by status class per span, a series per
// class that occurred, in its own panel.
func TestHTMLTimelineStatuses(t *testing.T) {
	r := htmlTimelineResult()
	for _, p := range r.Phases {
		for i := range p.Timeline.Points {
			pt := &p.Timeline.Points[i]
			pt.Statuses = brk.StatusClasses{S2xx: pt.Succeeded, S5xx: pt.Failed / 2}
		}
	}
	doc := writeHTML(t, r)
	checkWellFormed(t, doc)
	for _, id := range []string{"chart-timeline", "chart-timeline-narrow"} {
		tl := svgFragments(t, doc)[id]
		for series, want := range map[string]string{
			"2xx/s": "2000 4000 4100 4200 0 3000 4300 4000 3900 2000",
			"5xx/s": "0 0 0 0 150 10 0 250 300 250",
		} {
			if got := pathAttr(t, tl, series, "data-values"); got != want {
				t.Errorf("%s %s: %q, want %q", id, series, got, want)
			}
		}
		if strings.Contains(tl, `data-series="4xx/s"`) || !strings.Contains(tl, "responses/s by status") {
			t.Errorf("%s: a series for a class that did not occur, or no status panel", id)
		}
		if n := strings.Count(tl, `<rect class="hover"`); n != 10 || !strings.Contains(tl, "5xx 150.0/s") {
			t.Errorf("%s: %d hover spans, want 10, titled with their status classes", id, n)
		}
	}
}

// layoutScript, added to the page in the test only, writes into the DOM
// the page's widths, every shown chart's place, every text's smallest
// rendered size (an SVG text's font size times its chart's scale) and
// every pair of text boxes that overlap within a chart, and every text
// drawn over a data point.
const layoutScript = `<script>
(function () {
  var de = document.documentElement;
  var r = {doc: de.scrollWidth, view: de.clientWidth, charts: [], minFont: 1e9, minFontEl: "", overlaps: []};
  document.querySelectorAll(".charts svg").forEach(function (svg) {
    var b = svg.getBoundingClientRect();
    if (b.width === 0) return;
    r.charts.push([svg.id, Math.round(b.left), Math.round(b.top), Math.round(b.width)]);
    var scale = b.width / svg.viewBox.baseVal.width;
    var boxes = [];
    svg.querySelectorAll("text").forEach(function (t) {
      var tb = t.getBoundingClientRect();
      if (tb.width === 0 || t.textContent.trim() === "") return;
      var fs = parseFloat(getComputedStyle(t).fontSize) * scale;
      if (fs < r.minFont) { r.minFont = fs; r.minFontEl = svg.id + ": " + t.textContent; }
      boxes.push([tb.left, tb.top, tb.right, tb.bottom, t.textContent]);
    });
    var texts = boxes.length;
    svg.querySelectorAll("circle.pt").forEach(function (p) {
      var pb = p.getBoundingClientRect();
      boxes.push([pb.left, pb.top, pb.right, pb.bottom, "a point (" + p.textContent + ")"]);
    });
    for (var i = 0; i < texts; i++) for (var j = i + 1; j < boxes.length; j++) {
      var a = boxes[i], c = boxes[j];
      var w = Math.min(a[2], c[2]) - Math.max(a[0], c[0]), h = Math.min(a[3], c[3]) - Math.max(a[1], c[1]);
      if (w > 0.5 && h > 0.5) r.overlaps.push(svg.id + ": " + JSON.stringify(a[4]) + " and " + JSON.stringify(c[4]) + " by " + w.toFixed(1) + "x" + h.toFixed(1));
    }
  });
  document.querySelectorAll("body *").forEach(function (e) {
    if (e.closest("svg") || e.tagName === "SCRIPT" || e.tagName === "PRE") return;
    var own = false;
    e.childNodes.forEach(function (n) { if (n.nodeType === 3 && n.textContent.trim() !== "") own = true; });
    if (!own || e.getBoundingClientRect().width === 0) return;
    var fs = parseFloat(getComputedStyle(e).fontSize);
    if (fs < r.minFont) { r.minFont = fs; r.minFontEl = e.tagName + "." + (e.getAttribute("class") || ""); }
  });
  var p = document.createElement("pre");
  p.id = "layout";
  p.textContent = JSON.stringify(r);
  document.body.appendChild(p);
  if (window.parent !== window) window.parent.postMessage([window.name, p.textContent], "*");
})();
</script>`

type pageLayout struct {
	Doc, View int
	Charts    [][4]json.RawMessage
	MinFont   float64
	MinFontEl string
	Overlaps  []string
}

// layoutView is one page to lay out at one width (layoutsAt).
type layoutView struct {
	Doc   string
	Width int
}

// layoutsAt lays out every view in one Chromium: each page in an iframe
// of its width and 1000 px high (the window the checks used), where its media
// queries and its layout script see that width as the viewport; the
// script posts its result to the top page, which writes them all into
// its DOM once every frame has. A Chromium per view took 1–2 s each; the
// frames read the same figures as a window of their width did, for all
// 14 views of this package's tests (measured when this replaced a
// window per view).
func layoutsAt(t *testing.T, views []layoutView) []pageLayout {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, `<!doctype html><html><head><meta charset="utf-8"></head><body style="margin:0">
<script>
var got = {}, want = %d;
window.addEventListener("message", function (e) {
  got[e.data[0]] = JSON.parse(e.data[1]);
  if (Object.keys(got).length === want) {
    var p = document.createElement("pre");
    p.id = "layouts";
    p.textContent = JSON.stringify(got);
    document.body.appendChild(p);
  }
});
</script>
`, len(views))
	for i, v := range views {
		page := strings.Replace(v.Doc, "</body>", layoutScript+"\n</body>", 1)
		fmt.Fprintf(&b, `<iframe name="%d" style="display:block;border:0;width:%dpx;height:1000px" srcdoc="%s"></iframe>
`, i, v.Width, html.EscapeString(page))
	}
	b.WriteString("</body></html>\n")
	out, _ := chromium(t, b.String(), "--window-size=1400,1000", "--virtual-time-budget=10000", "--dump-dom")
	m := regexp.MustCompile(`(?s)<pre id="layouts">(.*?)</pre>`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("the layout scripts of %d frames wrote nothing:\n%.2000s", len(views), out)
	}
	var got map[string]pageLayout
	if err := json.Unmarshal([]byte(html.UnescapeString(m[1])), &got); err != nil {
		t.Fatalf("layouts %.2000q: %v", m[1], err)
	}
	ls := make([]pageLayout, len(views))
	for i := range views {
		l, ok := got[strconv.Itoa(i)]
		if !ok {
			t.Fatalf("frame %d (%d px) wrote no layout", i, views[i].Width)
		}
		ls[i] = l
	}
	return ls
}

// checkReadable: the page does not scroll sideways, no text is under
// 11 px, no two texts of a chart overlap.
func checkReadable(t *testing.T, what string, l pageLayout) {
	t.Helper()
	if l.Doc > l.View {
		t.Errorf("%s: the page scrolls sideways (%d px in %d)", what, l.Doc, l.View)
	}
	if l.MinFont < 11-0.05 {
		t.Errorf("%s: text of %.2f px (%s), want at least 11", what, l.MinFont, l.MinFontEl)
	}
	for _, o := range l.Overlaps {
		t.Errorf("%s: texts overlap: %s", what, o)
	}
}

// The report reads at 800 and 1280 px: no sideways scroll; one column of
// charts at 800 px, two at 1280 px (the timeline across); no text below
// 11 px; no two texts of a chart overlap (the break's label, the SLA's,
// a search's run numbers, the legends, the ticks).
func TestHTMLReadableAt800And1280(t *testing.T) {
	t.Parallel() // one Chromium, timing nothing
	real := htmlRealRun(t)
	timeline := htmlTimelineResult()
	for _, p := range timeline.Phases {
		for i := range p.Timeline.Points {
			pt := &p.Timeline.Points[i]
			pt.Statuses = brk.StatusClasses{S2xx: pt.Succeeded, S5xx: pt.Failed}
		}
	}
	search := htmlSearchResult()
	search.Accept = "99"
	sla := htmlResult()
	sla.Accept = "99" // the SLA line runs through the break's label, top right
	type view struct {
		what string
		r    *brk.Result
	}
	var views []view
	var pages []layoutView
	for _, tc := range []struct {
		name string
		r    *brk.Result
	}{
		{"broken", htmlResult()}, {"broken, SLA 99 %", sla}, {"search", search}, {"timeline", timeline}, {"real run", real}, {"wide", htmlWideResult()},
		{"fixed load", htmlFixedResult()}, {"interrupted", htmlInterruptedResult()},
	} {
		withPeak(tc.r)
		doc := writeHTML(t, tc.r)
		// What every page leads with: the peak headline, and the run's
		// reason at most once in the verdict box.
		box := doc[strings.Index(doc, `<div class="verdict `):]
		box = box[:strings.Index(box, `<div class="bracket">`)]
		if !strings.Contains(box, `<div class="peak">peak: `) {
			t.Errorf("%s: no peak headline in the verdict box:\n%s", tc.name, box)
		}
		if tc.r.Reason != "" {
			text := regexp.MustCompile(`<[^>]*>`).ReplaceAllString(box, "\n")
			if n := strings.Count(text, html.EscapeString(tc.r.Reason)); n > 1 {
				t.Errorf("%s: the reason %q is in the verdict box %d times:\n%s", tc.name, tc.r.Reason, n, box)
			}
		}
		for _, width := range []int{800, 1280} {
			views = append(views, view{fmt.Sprintf("%s at %d px", tc.name, width), tc.r})
			pages = append(pages, layoutView{doc, width})
		}
	}
	for i, l := range layoutsAt(t, pages) {
		what, width, r := views[i].what, pages[i].Width, views[i].r
		t.Logf("%s: document %d in %d px; charts %s; smallest text %.1f px (%s)", what, l.Doc, l.View, chartsText(l), l.MinFont, l.MinFontEl)
		checkReadable(t, what, l)
		lefts := map[string]int{}
		for _, c := range l.Charts {
			var id string
			var left int
			json.Unmarshal(c[0], &id)
			json.Unmarshal(c[1], &left)
			lefts[id] = left
		}
		oneColumn := lefts["chart-success"] == lefts["chart-rps"] && lefts["chart-rps"] == lefts["chart-latency"]
		if width == 800 && !oneColumn || width == 1280 && oneColumn {
			t.Errorf("%s: chart columns %v", what, lefts)
		}
		_, wide := lefts["chart-timeline"]
		_, narrow := lefts["chart-timeline-narrow"]
		if r.Phases[0].Timeline != nil && (wide == narrow || wide != (width == 1280)) {
			t.Errorf("%s: timelines shown: wide %v, narrow %v", what, wide, narrow)
		}
	}
}

// withPeak gives a hand-built result the peak the library computes for a
// run (its highest-throughput phase), so that its page shows the headline.
func withPeak(r *brk.Result) {
	if r.Peak != nil {
		return
	}
	for _, p := range r.Phases {
		if p.RequestsPerSec > 0 && (r.Peak == nil || p.RequestsPerSec > r.Peak.OKPerSec) {
			r.Peak = &brk.Peak{Phase: p.Index, Level: p.Level, OKPerSec: p.RequestsPerSec, P99Ms: p.LatencyMs.P99, Accepted: p.Accepted}
		}
	}
}

func chartsText(l pageLayout) string {
	var parts []string
	for _, c := range l.Charts {
		parts = append(parts, fmt.Sprintf("%s@%s,%s w%s", c[0], c[1], c[2], c[3]))
	}
	return strings.Join(parts, " ")
}
