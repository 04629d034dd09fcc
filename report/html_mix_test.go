package report_test

import (
	"encoding/json"
	"fmt"
	"html"
	"regexp"
	"strings"
	"testing"

	"github.com/brk-bench/brk"
)

// mixRows is the mix table's target names, in row order.
func mixRows(t *testing.T, doc string) []string {
	t.Helper()
	m := regexp.MustCompile(`(?s)<table class="mix">.*?</table>`).FindString(doc)
	if m == "" {
		return nil
	}
	var names []string
	for _, n := range regexp.MustCompile(`<td class="l tname"><code>([^<]*)</code>`).FindAllStringSubmatch(m, -1) {
		names = append(names, html.UnescapeString(n[1]))
	}
	return names
}

// The HTML report of a mix has a per-target table of the final pair (the
// held phase 1 at 32 and the rejected phase 2 at 64, not the later probe
// at 48), its rows by the rejected phase's failure share: /api/slow first
// with its timeouts, the 503s of the others named; without a mix there is
// no table.
func TestHTMLMixTable(t *testing.T) {
	r := mixResult()
	doc := writeHTML(t, r)
	checkWellFormed(t, doc)
	got := mixRows(t, doc)
	want := []string{"GET /api/slow?ms=60", "GET /api/fast", "GET /api/user", "GET /api/list"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("mix rows %q, want %q", got, want)
	}
	table := regexp.MustCompile(`(?s)<table class="mix">.*?</table>`).FindString(doc)
	for _, s := range []string{
		"phase 1 · 32 concurrent requests (last accepted)", "phase 2 · 64 concurrent requests (first rejected)",
		`<td class="st-bad">41</td>`, "<div>timeout 1025</div>", "non-2xx 503×20", "<td>75.0</td><td>99.2</td>",
		"<td>2000</td><td>99.95</td>", // /api/slow held: 2000 attempted, one timeout
	} {
		if !strings.Contains(table, s) {
			t.Errorf("the mix table lacks %q:\n%s", s, table)
		}
	}
	if strings.Contains(table, "phase 3") || strings.Contains(table, "<td>2250</td>") {
		t.Error("the mix table shows the probe at 48, not the final pair")
	}
	// The table comes before the phase table: the break's endpoint is seen
	// first.
	if i, j := strings.Index(doc, `<table class="mix">`), strings.Index(doc, `<table class="phases">`); i < 0 || i > j {
		t.Errorf("the mix table at %d, the phase table at %d", i, j)
	}
	// A run that held to the end shows its last accepted phase alone.
	done := mixResult()
	done.Verdict, done.FirstRejected = brk.VerdictDone, nil
	two := 2
	done.Phases = done.Phases[:2]
	done.FinalPair = &brk.FinalPair{HeldPhase: &two}
	done.FinalPair.HeldPhase = func() *int { v := 1; return &v }()
	d := writeHTML(t, done)
	checkWellFormed(t, d)
	if rows := mixRows(t, d); len(rows) != 4 || rows[0] != "GET /api/slow?ms=60" || strings.Contains(d, "(first rejected)") {
		t.Errorf("a Done run's mix table: rows %q", rows)
	}
	for _, p := range r.Phases {
		p.Targets = nil
	}
	if doc := writeHTML(t, r); strings.Contains(doc, `class="mix"`) || strings.Contains(doc, "Request mix") {
		t.Error("a report without a mix has a mix table")
	}
}

// mixScript, added to the page in the test only, records errors from the
// page's start (a script error, a resource that failed) and, once loaded,
// the mix table's rows, its box and whether its wrapper scrolls sideways.
const mixScript = `<script>
window.__errs = [];
window.addEventListener("error", function (e) { window.__errs.push(String(e.message || (e.target && e.target.tagName) || e)); }, true);
(function () {
  var ce = console.error;
  console.error = function () { window.__errs.push(Array.prototype.join.call(arguments, " ")); ce.apply(console, arguments); };
})();
window.addEventListener("load", function () {
  var t = document.querySelector("table.mix");
  var r = {errs: window.__errs, found: !!t, rows: [], right: 0, view: document.documentElement.clientWidth, scroll: 0, client: 0, height: 0};
  if (t) {
    t.querySelectorAll("tbody tr").forEach(function (tr) { r.rows.push(tr.querySelector("td code").textContent); });
    var b = t.getBoundingClientRect();
    r.right = b.right; r.height = b.height;
    r.scroll = t.parentElement.scrollWidth; r.client = t.parentElement.clientWidth;
  }
  var p = document.createElement("pre"); p.id = "mix"; p.textContent = JSON.stringify(r); document.body.appendChild(p);
});
</script>`

// The mix table renders in Chromium: no errors, its rows in order, within
// the page at 800 and 1280 px without scrolling sideways; and the page
// keeps its layout (layoutsAt: no sideways scroll, no text under 11 px, no
// overlapping chart texts).
func TestHTMLMixRendersChromium(t *testing.T) {
	t.Parallel() // Chromium (and a short run), timing nothing
	doc := writeHTML(t, mixResult())
	page := strings.Replace(doc, "<head>", "<head>\n"+mixScript, 1)
	layouts := layoutsAt(t, []layoutView{{doc, 800}, {doc, 1280}})
	for i, width := range []int{800, 1280} {
		out, _ := chromium(t, page, fmt.Sprintf("--window-size=%d,1000", width), "--virtual-time-budget=5000", "--dump-dom")
		m := regexp.MustCompile(`(?s)<pre id="mix">(.*?)</pre>`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("the script wrote nothing:\n%.2000s", out)
		}
		var v struct {
			Errs                 []string
			Found                bool
			Rows                 []string
			Right                float64
			View, Scroll, Client int
			Height               float64
		}
		if err := json.Unmarshal([]byte(html.UnescapeString(m[1])), &v); err != nil {
			t.Fatal(err)
		}
		t.Logf("%d px: %+v", width, v)
		if len(v.Errs) > 0 {
			t.Errorf("%d px: errors on the page: %q", width, v.Errs)
		}
		if !v.Found || len(v.Rows) != 4 || v.Rows[0] != "GET /api/slow?ms=60" || v.Height < 4*15 {
			t.Errorf("%d px: the mix table rendered rows %q, height %.0f", width, v.Rows, v.Height)
		}
		if v.Right > float64(v.View)+0.5 || v.Scroll > v.Client {
			t.Errorf("%d px: the mix table reaches %.1f px in a %d px viewport; its wrapper %d px of content in %d", width, v.Right, v.View, v.Scroll, v.Client)
		}
		checkReadable(t, fmt.Sprintf("%d px", width), layouts[i])
	}
}
