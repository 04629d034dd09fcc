package report_test

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"html"
	"image"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/brk-bench/brk"
	"github.com/brk-bench/brk/bench"
	"github.com/brk-bench/brk/internal/testenv"
	"github.com/brk-bench/brk/report"
)

func htmlF(v float64) *float64 { return &v }
func htmlI(v int) *int         { return &v }

func htmlConditions() report.HTMLConditions {
	return report.HTMLConditions{
		Command: "brk requests --conns 8 http://example.test:8080/api?q=1&x=<y>",
		Host:    "loadbox-1", CPUs: 16, OS: "linux", Arch: "amd64",
		Started: time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC),
	}
}

// htmlPhase builds a phase at level 8×depth.
func htmlPhase(i, depth int, succ, att uint64, rps, p50 float64) *brk.PhaseStats {
	pct := 100 * float64(succ) / float64(att)
	return &brk.PhaseStats{
		Index: i, Level: 8 * depth, Depth: depth, Accepted: true,
		DurationS: 1.2, ActiveS: 1,
		Counts:     brk.Counts{Attempted: att, Succeeded: succ, Timeout: att - succ},
		SuccessPct: pct, RequestsPerSec: rps,
		LatencyMs: brk.Latency{Count: succ, Mean: p50 * 1.1, P50: p50, P90: p50 * 1.6,
			P99: p50 * 2.5, P999: p50 * 3, Max: p50 * 4},
		MeanOutstanding: float64(8 * depth), TargetCoveragePct: 99.5,
		ClientCPU:     brk.ClientCPU{UserS: 0.1, SystemS: 0.2, UsPerResponse: 3.25},
		MachineCPUPct: htmlF(40 + float64(i)),
	}
}

// htmlResult is a hand-built broken run: 5 phases, the last rejected, one
// client_bound, a hostile reason.
func htmlResult() *brk.Result {
	ps := []*brk.PhaseStats{
		htmlPhase(0, 1, 4000, 4000, 3900, 2.1),
		htmlPhase(1, 2, 7900, 7900, 7800, 2.3),
		htmlPhase(2, 3, 11500, 11500, 11200, 2.9),
		htmlPhase(3, 4, 14000, 14000, 13600, 4.2),
		htmlPhase(4, 5, 13000, 14000, 12500, 9.5),
	}
	ps[3].ClientBound = true
	ps[3].MachineCPUPct = nil
	ps[4].Accepted = false
	ps[4].Reason = `success 92.8571 % < 99.99 %: <script>alert("x")</script>`
	ps[4].ProtocolFault = `bad status line "HTTP/1.1 2<b>00"`
	return &brk.Result{
		Schema: 1, Test: "requests", URL: "http://example.test:8080/api?q=1&x=<y>", Protocol: "http/1.1",
		Verdict: brk.VerdictBroken, Reason: `phase 4 rejected: <script>alert(1)</script> & more`,
		LastAccepted: htmlI(32), FirstRejected: htmlI(40),
		Threads: 2, Conns: 8, TimeoutMs: 140, Accept: "99.99", Phases: ps,
		Plan: brk.ResultPlan{Test: "requests", Protocol: "http/1.1", Connections: 8, Start: 1, Pace: 1,
			PhaseS: 1, TimeoutMs: 140, AcceptPct: 99.99, Threads: 2, MaxP99Ms: 20},
	}
}

func writeHTML(t *testing.T, r *brk.Result) string {
	t.Helper()
	var b bytes.Buffer
	if err := report.WriteHTML(&b, r, htmlConditions()); err != nil {
		t.Fatalf("WriteHTML: %v", err)
	}
	return b.String()
}

// checkWellFormed parses the whole document as strict XML: the report is
// written so that it is (self-closed void elements, escaped text).
func checkWellFormed(t *testing.T, doc string) {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(doc))
	dec.Strict = true
	var stack []string
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("report is not well-formed: %v", err)
		}
		switch tk := tok.(type) {
		case xml.StartElement:
			stack = append(stack, tk.Name.Local)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		}
	}
	if len(stack) != 0 {
		t.Fatalf("unclosed elements: %v", stack)
	}
}

// svgFragments returns each <svg>…</svg> fragment, each checked as XML.
func svgFragments(t *testing.T, doc string) map[string]string {
	t.Helper()
	out := map[string]string{}
	re := regexp.MustCompile(`(?s)<svg id="([^"]+)".*?</svg>`)
	for _, m := range re.FindAllStringSubmatch(doc, -1) {
		var v struct{}
		if err := xml.Unmarshal([]byte(m[0]), &v); err != nil {
			t.Errorf("svg %s is not well-formed XML: %v", m[1], err)
		}
		out[m[1]] = m[0]
	}
	return out
}

func dataPoints(t *testing.T, frag string) int {
	t.Helper()
	m := regexp.MustCompile(`data-points="(\d+)"`).FindStringSubmatch(frag)
	if m == nil {
		t.Fatalf("no data-points in %.80s", frag)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

func checkCharts(t *testing.T, doc string, want int) {
	t.Helper()
	frags := svgFragments(t, doc)
	for _, id := range []string{"chart-success", "chart-rps", "chart-latency"} {
		f, ok := frags[id]
		if !ok {
			t.Errorf("no <svg id=%q>", id)
			continue
		}
		if got := dataPoints(t, f); got != want {
			t.Errorf("%s: data-points %d, want %d", id, got, want)
		}
		for _, s := range []string{"<title>", "level (concurrent requests)", "<polyline", "<circle"} {
			if want >= 2 && !strings.Contains(f, s) {
				t.Errorf("%s lacks %q", id, s)
			}
		}
	}
	if len(frags) != 3 {
		t.Errorf("%d charts, want 3", len(frags))
	}
}

// checkSelfContained: no URL except the run's own text, no fetching attributes.
func checkSelfContained(t *testing.T, doc string, r *brk.Result) {
	t.Helper()
	rest := strings.ReplaceAll(doc, html.EscapeString(htmlConditions().Command), "")
	rest = strings.ReplaceAll(rest, html.EscapeString(r.URL), "")
	for _, s := range []string{"http://", "https://", "src=", "href=", "<script", "<link", "@import", "url(", "//"} {
		if i := strings.Index(strings.ToLower(rest), s); i >= 0 {
			lo := max(0, i-60)
			t.Errorf("report references %q: ...%s...", s, rest[lo:min(len(rest), i+60)])
		}
	}
}

func TestHTMLHandBuilt(t *testing.T) {
	r := htmlResult()
	doc := writeHTML(t, r)
	checkWellFormed(t, doc)
	checkCharts(t, doc, len(r.Phases))
	checkSelfContained(t, doc, r)
	if strings.Contains(doc, "<script>") || strings.Contains(doc, "<b>00") {
		t.Error("reason not escaped")
	}
	for _, s := range []string{
		"&lt;script&gt;alert(1)&lt;/script&gt; &amp; more", // run reason
		"&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;",  // phase reason
		"Broken (40 concurrent requests)", "v-broken",
		"last accepted: <b>32</b>", "first rejected: <b>40</b>",
		"SLA 99.99 %", `class="cb">yes`, "loadbox-1", "2025-03-04T05:06:07Z", "linux / amd64",
		"<dt>timeout_ms</dt><dd>140</dd>", "<dt>accept_pct</dt><dd>99.99</dd>",
		"<dt>threads</dt><dd>2</dd>", "<dt>conns</dt><dd>8</dd>",
		"13000", "92.8571", "12500.0", "µs/response", "machine CPU %", "coverage %", "p99.9",
	} {
		if !strings.Contains(doc, s) {
			t.Errorf("report lacks %q", s)
		}
	}
	// The rejected phase is drawn in the rejected colour, the others in
	// the accepted colour, and the SLA line dashed.
	sc := svgFragments(t, doc)["chart-success"]
	if n := strings.Count(sc, `class="pt rejected"`); n != 1 {
		t.Errorf("%d rejected points, want 1", n)
	}
	if n := strings.Count(sc, `class="pt" `); n != 4 {
		t.Errorf("%d accepted points, want 4", n)
	}
	if !strings.Contains(sc, `stroke-dasharray`) {
		t.Error("no dashed SLA line")
	}
	lat := svgFragments(t, doc)["chart-latency"]
	for _, s := range []string{">p50<", ">p90<", ">p99<", ">max<", " ms<"} {
		if !strings.Contains(lat, s) {
			t.Errorf("latency chart lacks %q", s)
		}
	}
	if os.Getenv("BRK_HTML_OUT") != "" {
		os.WriteFile(os.Getenv("BRK_HTML_OUT"), []byte(doc), 0o644)
	}
}

func TestHTMLNoPhases(t *testing.T) {
	r := &brk.Result{Schema: 1, Test: "requests", URL: "http://127.0.0.1:1/", Protocol: "http/1.1",
		Verdict: brk.VerdictInconclusive, Reason: "setup impossible: connection refused",
		Conns: 8, TimeoutMs: 1000, Accept: "99.99", Phases: []*brk.PhaseStats{}}
	doc := writeHTML(t, r)
	checkWellFormed(t, doc)
	checkSelfContained(t, doc, r)
	if strings.Contains(doc, "<svg") {
		t.Error("charts drawn for a run with no phases")
	}
	for _, s := range []string{"no phases ran", "Inconclusive: setup impossible", "v-inconclusive", "last accepted: <b>none</b>"} {
		if !strings.Contains(doc, s) {
			t.Errorf("report lacks %q", s)
		}
	}
}

func TestHTMLOnePhase(t *testing.T) {
	r := htmlResult()
	r.Phases = r.Phases[:1]
	r.Phases[0].Accepted = false
	r.Phases[0].SuccessPct = 0
	r.Accept = "not a number" // no SLA line, still a report
	doc := writeHTML(t, r)
	checkWellFormed(t, doc)
	checkCharts(t, doc, 1)
	if strings.Contains(doc, "stroke-dasharray=\"6 4\"/>") && strings.Contains(doc, "SLA not a number") {
		t.Error("SLA line drawn from an unparsable accept")
	}
	if strings.Contains(doc, "NaN") || strings.Contains(doc, "Inf") {
		t.Error("NaN/Inf in the report")
	}
}

func TestHTMLInterrupted(t *testing.T) {
	r := htmlResult()
	r.Verdict, r.Reason, r.FirstRejected = brk.VerdictInterrupted, "interrupted", nil
	r.Phases[4].Accepted, r.Phases[4].Interrupted = false, true
	r.Phases[4].Reason = ""
	doc := writeHTML(t, r)
	checkWellFormed(t, doc)
	checkCharts(t, doc, 5)
	frags := svgFragments(t, doc)
	if n := strings.Count(frags["chart-success"], `class="pt interrupted"`); n != 1 {
		t.Errorf("success chart: %d interrupted points, want 1", n)
	}
	if n := strings.Count(frags["chart-latency"], `class="pt interrupted"`); n != 4 {
		t.Errorf("latency chart: %d interrupted points, want 4", n)
	}
	for id, f := range frags {
		if !strings.Contains(f, ">interrupted</text>") {
			t.Errorf("%s: interrupted point not labelled", id)
		}
	}
	if !strings.Contains(doc, "v-interrupted") || !strings.Contains(doc, `<tr class="int">`) {
		t.Error("interrupted verdict/phase not marked")
	}
}

func TestHTMLNilResult(t *testing.T) {
	if err := report.WriteHTML(io.Discard, nil, report.HTMLConditions{}); err == nil {
		t.Error("nil Result: no error")
	}
}

// htmlRealRun runs the fixture to its break (level 32 within ~3 s).
func htmlRealRun(t *testing.T) *brk.Result {
	t.Helper()
	fx, err := bench.StartFixture(bench.FixtureConfig{Addr: "127.0.0.1:0", Capacity: 4, Service: 20 * time.Millisecond})
	if err != nil {
		t.Fatalf("fixture: %v", err)
	}
	defer fx.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	r, err := brk.Run(ctx, brk.Target{URL: fx.URL("/plain")}, brk.Plan{
		Conns: 8, Start: 1, Pace: 1, Timeout: 140 * time.Millisecond, Phase: 500 * time.Millisecond, Threads: 1,
	}, nil)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	t.Logf("real run: %s, %d phases", report.FinalLine(r), len(r.Phases))
	if len(r.Phases) == 0 {
		t.Fatalf("no phases: %s", report.FinalLine(r))
	}
	return r
}

func TestHTMLRealRun(t *testing.T) {
	r := htmlRealRun(t)
	doc := writeHTML(t, r)
	checkWellFormed(t, doc)
	checkCharts(t, doc, len(r.Phases))
	checkSelfContained(t, doc, r)
	if !strings.Contains(doc, html.EscapeString(report.FinalLine(r))) {
		t.Errorf("report lacks the final line %q", report.FinalLine(r))
	}
	if p := os.Getenv("BRK_HTML_REAL_OUT"); p != "" {
		os.WriteFile(p, []byte(doc), 0o644)
	}
}

// screenshot renders doc with headless Chromium and decodes the PNG.
func screenshot(t *testing.T, doc string) (image.Image, string) {
	t.Helper()
	const bin = "/usr/bin/chromium"
	if _, err := os.Stat(bin); err != nil {
		testenv.SkipOrFail(t, "chromium not installed")
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	if err := os.WriteFile(page, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "report.png")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--window-size=1200,2400",
		"--screenshot="+out, "file://"+page)
	cmd.Env = append(os.Environ(), "HOME="+dir)
	cmd.WaitDelay = 5 * time.Second
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, b)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	return img, out
}

// countColour counts pixels within tol of the colour "#rrggbb" per channel.
func countColour(img image.Image, hex string, tol int) int {
	v, _ := strconv.ParseUint(hex[1:], 16, 32)
	wr, wg, wb := int(v>>16), int(v>>8&0xff), int(v&0xff)
	near := func(a, b int) bool { return a-b <= tol && b-a <= tol }
	n := 0
	bd := img.Bounds()
	for y := bd.Min.Y; y < bd.Max.Y; y++ {
		for x := bd.Min.X; x < bd.Max.X; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			if near(int(r>>8), wr) && near(int(g>>8), wg) && near(int(b>>8), wb) {
				n++
			}
		}
	}
	return n
}

func TestHTMLRenderChromium(t *testing.T) {
	r := htmlResult()
	img, out := screenshot(t, writeHTML(t, r))
	bd := img.Bounds()
	if bd.Dx() < 1000 || bd.Dy() < 1000 {
		t.Fatalf("screenshot %v, want about 1200×2400", bd)
	}
	// Not blank: a good share of the page is neither the background nor white.
	plain := countColour(img, "#f6f7f9", 2) + countColour(img, "#ffffff", 2)
	if ink := bd.Dx()*bd.Dy() - plain; ink < 20000 {
		t.Errorf("page looks blank: %d inked pixels", ink)
	}
	// Every series colour drew in its chart (the colours are used nowhere
	// else on the page).
	for _, c := range []struct {
		name, hex string
		min       int
	}{
		{"success accepted points", "#1a9850", 150},
		{"success rejected point", "#d73027", 40},
		{"success SLA line", "#8c510a", 150},
		{"req/s line", "#2166ac", 500},
		{"latency p50", "#00a0b0", 300},
		{"latency p90", "#e6a100", 300},
		{"latency p99", "#e7298a", 300},
		{"latency max", "#5e3c99", 300},
		{"latency timeout line", "#525252", 80},
		{"latency p99 limit line", "#8c2d04", 150},
		{"break marker", "#cc0000", 3 * 80},
	} {
		n := countColour(img, c.hex, 10)
		t.Logf("%-24s %s: %d pixels", c.name, c.hex, n)
		if n < c.min {
			t.Errorf("%s (%s): %d pixels, want >= %d", c.name, c.hex, n, c.min)
		}
	}
	if p := os.Getenv("BRK_HTML_PNG"); p != "" {
		if b, err := os.ReadFile(out); err == nil {
			os.WriteFile(p, b, 0o644)
		}
	}
}

// TestHTMLConnectionsUnits: a connections-test report counts its levels
// in connections, in the charts and in the bracket.
func TestHTMLConnectionsUnits(t *testing.T) {
	la, fr := 64, 128
	r := &brk.Result{Schema: 1, Test: "connections", URL: "http://127.0.0.1:1/", Verdict: brk.VerdictBroken,
		Accept: "99.99", LastAccepted: &la, FirstRejected: &fr,
		Phases: []*brk.PhaseStats{{Index: 0, Level: 64, Accepted: true, SuccessPct: 100}, {Index: 1, Level: 128, SuccessPct: 90}}}
	var b strings.Builder
	if err := report.WriteHTML(&b, r, report.HTMLConditions{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.Contains(out, "level (concurrent connections)") || !strings.Contains(out, "(concurrent connections)</div>") ||
		strings.Contains(out, "concurrent requests") {
		t.Fatal("a connections report names its levels in requests")
	}
}

// A refined run's probes and the --server-pid figures reach the HTML table.
func TestHTMLProbeAndServerFigures(t *testing.T) {
	r := htmlResult()
	r.Phases[len(r.Phases)-1].Probe = true
	r.Phases[0].Server = []brk.ServerCPU{{PID: 4242, UserS: 0.5, SystemS: 0.25, UsPerResponse: 37.5, RSSBytes: 12_300_000}}
	r.Phases[1].Server = []brk.ServerCPU{{PID: 4242, Gone: true}}
	r.Phases[1].StatusCodes = map[string]uint64{"200": 7, "404": 3}
	doc := writeHTML(t, r)
	checkWellFormed(t, doc)
	for _, want := range []string{"(probe)", "server: pid 4242 user 0.50 s, system 0.25 s, 37.5 µs per successful response, RSS 12.3 MB", "pid 4242 gone", "statuses: 200×7, 404×3"} {
		if !strings.Contains(doc, want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
}

func TestHTMLSaysHTTP2(t *testing.T) {
	r := &brk.Result{Schema: 1, Test: "requests", URL: "http://127.0.0.1:1/", Protocol: "h2",
		Verdict: brk.VerdictInconclusive, Reason: "setup impossible: connection refused",
		Conns: 8, TimeoutMs: 1000, Accept: "99.99", Phases: []*brk.PhaseStats{}}
	doc := writeHTML(t, r)
	checkWellFormed(t, doc)
	if !strings.Contains(doc, "HTTP/2 (h2)") {
		t.Error("the report does not say HTTP/2")
	}
}

// The verdict and the summary sentence come first, above the charts.
func TestHTMLVerdictFirst(t *testing.T) {
	doc := writeHTML(t, htmlResult())
	v, held, chart := strings.Index(doc, `<div class="verdict`), strings.Index(doc, `<div class="held">Held `), strings.Index(doc, "<svg")
	if v < 0 || held < 0 || chart < 0 || v > chart || held > chart {
		t.Fatalf("verdict at %d, summary at %d, first chart at %d", v, held, chart)
	}
}

// lineAttr returns attribute attr of the first <line> with class cls in frag.
func lineAttr(t *testing.T, frag, cls, attr string) float64 {
	t.Helper()
	m := regexp.MustCompile(`<line class="` + regexp.QuoteMeta(cls) + `"[^>]*? ` + attr + `="([-0-9.]+)"`).FindStringSubmatch(frag)
	if m == nil {
		t.Fatalf("no <line class=%q %s=…>", cls, attr)
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return v
}

// The latency chart draws the timeout and the --max-p99/--max-p999 lines,
// labelled, in the order of their values; every per-level chart marks the
// break at the first rejected level, on the rejected point.
func TestHTMLLatencyLimitsAndBreak(t *testing.T) {
	r := htmlResult()
	r.Plan.MaxP999Ms = 30
	doc := writeHTML(t, r)
	checkWellFormed(t, doc)
	frags := svgFragments(t, doc)
	lat := frags["chart-latency"]
	for _, s := range []string{">timeout 140 ms</text>", ">p99 limit 20 ms</text>", ">p99.9 limit 30 ms</text>"} {
		if !strings.Contains(lat, s) {
			t.Errorf("latency chart lacks the label %q", s)
		}
	}
	yTimeout := lineAttr(t, lat, "hline timeout", "y1")
	y99 := lineAttr(t, lat, "hline limit p99", "y1")
	y999 := lineAttr(t, lat, "hline limit p999", "y1")
	if !(yTimeout < y999 && y999 < y99) {
		t.Errorf("lines at y %.1f (timeout 140), %.1f (p99.9 30), %.1f (p99 20): not in the order of their values", yTimeout, y999, y99)
	}
	// The p99 limit sits where the axis puts 20 ms: between the ticks
	// "0 ms" and the next one, in proportion.
	ticks := regexp.MustCompile(`<text x="\d+" y="([-0-9.]+)"[^>]*text-anchor="end">(\d+) ms</text>`).FindAllStringSubmatch(lat, -1)
	if len(ticks) < 2 {
		t.Fatalf("latency chart: %d y ticks", len(ticks))
	}
	y0, _ := strconv.ParseFloat(ticks[0][1], 64)
	v1, _ := strconv.ParseFloat(ticks[1][2], 64)
	y1, _ := strconv.ParseFloat(ticks[1][1], 64)
	if want := (y0 - 4) + (y1-y0)*20/v1; y99 < want-1 || y99 > want+1 {
		t.Errorf("p99 limit line at y %.1f, want %.1f (20 ms)", y99, want)
	}
	if !strings.Contains(frags["chart-success"], `class="hline sla"`) || !strings.Contains(frags["chart-success"], ">SLA 99.99 %</text>") {
		t.Error("success chart lost its SLA line")
	}
	// The break: the rejected point of the success chart is at x of the
	// break line, on all three charts.
	m := regexp.MustCompile(`<circle class="pt rejected" cx="([-0-9.]+)"`).FindStringSubmatch(frags["chart-success"])
	if m == nil {
		t.Fatal("no rejected point")
	}
	cx, _ := strconv.ParseFloat(m[1], 64)
	for _, id := range []string{"chart-success", "chart-rps", "chart-latency"} {
		f := frags[id]
		if n := strings.Count(f, `class="break"`); n != 1 {
			t.Errorf("%s: %d break lines, want 1", id, n)
			continue
		}
		if x := lineAttr(t, f, "break", "x1"); x < cx-0.11 || x > cx+0.11 {
			t.Errorf("%s: break at x %.1f, the rejected point at %.1f", id, x, cx)
		}
		if !strings.Contains(f, `data-level="40"`) || !strings.Contains(f, ">broke at 40</text>") || !strings.Contains(f, `class="break-band"`) {
			t.Errorf("%s: the break is not labelled and shaded", id)
		}
	}
}

// A timeout far above every latency is named, not drawn (the data would be
// flattened); a run without the plan's timeout uses the top level's; an
// inconclusive run marks the phase that ended it; a run that did not break
// marks nothing.
func TestHTMLLatencyLimitOffScaleAndMarks(t *testing.T) {
	r := htmlResult()
	r.Plan = brk.ResultPlan{}
	r.TimeoutMs = 1000
	frags := svgFragments(t, writeHTML(t, r))
	lat := frags["chart-latency"]
	if strings.Contains(lat, `class="hline timeout"`) || !strings.Contains(lat, "↑ timeout 1 s (above this scale)") {
		t.Errorf("a 1 s timeout over latencies below 40 ms: not named off scale")
	}
	if strings.Contains(lat, "limit") {
		t.Error("latency limits drawn for a run without any")
	}
	r.TimeoutMs = 100
	if lat := svgFragments(t, writeHTML(t, r))["chart-latency"]; !strings.Contains(lat, `class="hline timeout"`) || !strings.Contains(lat, ">timeout 100 ms</text>") {
		t.Error("the top level's timeout is not drawn when the plan lacks it")
	}

	r.Verdict, r.FirstRejected, r.Reason = brk.VerdictInconclusive, nil, "target unfulfilled"
	r.Phases[4].Inconclusive = true
	for id, f := range svgFragments(t, writeHTML(t, r)) {
		if !strings.Contains(f, ">inconclusive at 40</text>") || strings.Contains(f, "broke") {
			t.Errorf("%s: the inconclusive phase is not marked so", id)
		}
	}

	r = htmlResult()
	r.Verdict, r.FirstRejected = brk.VerdictDone, nil
	r.Phases = r.Phases[:4]
	for id, f := range svgFragments(t, writeHTML(t, r)) {
		if strings.Contains(f, `class="break`) {
			t.Errorf("%s: a break marked on a run that did not break", id)
		}
	}
}
