package report_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"html"
	"image"
	"image/png"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
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
		Plan: brk.Plan{Conns: 8, Start: 1, Pace: 1,
			Phase: time.Second, Timeout: 140 * time.Millisecond, Accept: 99.99, Threads: 2, MaxP99: 20 * time.Millisecond},
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

// perLevel are the charts against the level.
var perLevel = []string{"chart-success", "chart-rps", "chart-latency"}

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
	if _, ok := frags["chart-percentiles"]; !ok {
		t.Error("no percentile curve chart")
	}
	_, timeline := frags["chart-timeline"]
	_, narrow := frags["chart-timeline-narrow"]
	n := len(frags)
	if _, margin := frags["chart-margin"]; margin { // the judged phases' margins
		n--
	}
	if _, scatter := frags["chart-scatter"]; scatter { // sampled responses: a run measured in this process
		n--
	}
	if n != 4 && !(n == 6 && timeline && narrow) {
		t.Errorf("%d charts, want 4 (and the margin chart, the timeline, wide and narrow, and the scatter)", len(frags))
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
		"SLA 99.99 %", `class="tag cb">client-bound`, "<dt>client_bound</dt><dd>yes</dd>", "loadbox-1", "2025-03-04T05:06:07Z", "linux / amd64",
		"<dt>Timeout per request</dt><dd>140 ms</dd>", "<dt>Success needed</dt><dd>at least 99.99 % of requests in a phase</dd>",
		"<dt>Worker threads</dt><dd>2</dd>", "<dt>Connections</dt><dd>8, opened once</dd>",
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

// htmlInterruptedResult is htmlResult stopped (Ctrl-C) during its last
// phase: held 32, the phase at 40 interrupted.
func htmlInterruptedResult() *brk.Result {
	r := htmlResult()
	r.Verdict, r.Reason, r.FirstRejected = brk.VerdictInterrupted, "interrupted", nil
	r.Phases[4].Accepted, r.Phases[4].Interrupted = false, true
	r.Phases[4].Reason = ""
	return r
}

// htmlFixedResult is a fixed load (-d): htmlResult's phase 2 alone, the
// plan one level.
func htmlFixedResult() *brk.Result {
	r := htmlResult()
	p := r.Phases[2]
	p.Index = 0
	r.Phases = []*brk.PhaseStats{p}
	r.Verdict, r.Reason, r.LastAccepted, r.FirstRejected = brk.VerdictDone, "", htmlI(p.Level), nil
	r.Plan.Start, r.Plan.Pace, r.Plan.Max = p.Level, 0, p.Level
	return r
}

func TestHTMLInterrupted(t *testing.T) {
	r := htmlInterruptedResult()
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
	for _, id := range perLevel {
		if f := frags[id]; !strings.Contains(f, ">interrupted</text>") {
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
	t.Parallel() // Chromium (and a short run), timing nothing
	r := htmlRealRun(t)
	doc := writeHTML(t, r)
	checkWellFormed(t, doc)
	checkCharts(t, doc, len(r.Phases))
	checkSelfContained(t, doc, r)
	if !strings.Contains(doc, html.EscapeString(report.FinalLine(r))) {
		t.Errorf("report lacks the final line %q", report.FinalLine(r))
	}
	// The run measured in this process: its scatter holds every phase's
	// sampled responses (fewer than 2,000 each here: all of them).
	sc, ok := svgFragments(t, doc)["chart-scatter"]
	want := 0
	for _, p := range r.Phases {
		want += len(p.Scatter)
		if n := int(p.Counts.Succeeded); len(p.Scatter) == 0 || len(p.Scatter) > 2000 {
			t.Errorf("phase %d: %d sampled responses of %d succeeded, want 1…2000", p.Index, len(p.Scatter), n)
		}
	}
	if !ok || dataPoints(t, sc) != want {
		t.Errorf("the scatter chart (present: %v) does not hold the %d sampled responses", ok, want)
	}
	if p := os.Getenv("BRK_HTML_REAL_OUT"); p != "" {
		os.WriteFile(p, []byte(doc), 0o644)
	}
}

// chromium runs headless Chromium on doc (written to a file) with args
// added and returns its stdout and the directory it ran in. It skips the
// test where Chromium is missing (fails it where the CI requires it).
func chromium(t *testing.T, doc string, args ...string) (string, string) {
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
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	all := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + filepath.Join(dir, "profile")}, args...)
	cmd := exec.CommandContext(ctx, bin, append(all, "file://"+page)...)
	cmd.Env = append(os.Environ(), "HOME="+dir)
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.Bytes())
	}
	return stdout.String(), dir
}

// screenshot renders doc with headless Chromium at 1200×2400 and decodes
// the PNG.
func screenshot(t *testing.T, doc string) (image.Image, string) {
	t.Helper()
	return screenshotAt(t, doc, 1200, 2400)
}

// screenshotAt renders doc in a width×height window and decodes the PNG.
func screenshotAt(t *testing.T, doc string, width, height int) (image.Image, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "report.png")
	chromium(t, doc, fmt.Sprintf("--window-size=%d,%d", width, height), "--screenshot="+out)
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

// palette counts an image's pixels by colour (0xrrggbb).
type palette map[uint32]int

// paletteOf reads img once: its screenshot's 3 million pixels, read
// through image.At for every colour asked, took seconds under -race.
func paletteOf(img image.Image) palette {
	p := palette{}
	bd := img.Bounds()
	for y := bd.Min.Y; y < bd.Max.Y; y++ {
		for x := bd.Min.X; x < bd.Max.X; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			p[r>>8<<16|g>>8<<8|b>>8]++
		}
	}
	return p
}

// countColour counts pixels within tol of the colour "#rrggbb" per channel.
func countColour(p palette, hex string, tol int) int {
	v, _ := strconv.ParseUint(hex[1:], 16, 32)
	wr, wg, wb := int(v>>16), int(v>>8&0xff), int(v&0xff)
	near := func(a, b int) bool { return a-b <= tol && b-a <= tol }
	n := 0
	for c, k := range p {
		if near(int(c>>16), wr) && near(int(c>>8&0xff), wg) && near(int(c&0xff), wb) {
			n += k
		}
	}
	return n
}

func TestHTMLRenderChromium(t *testing.T) {
	t.Parallel() // Chromium (and a short run), timing nothing
	r := htmlResult()
	img, out := screenshot(t, writeHTML(t, r))
	bd := img.Bounds()
	if bd.Dx() < 1000 || bd.Dy() < 1000 {
		t.Fatalf("screenshot %v, want about 1200×2400", bd)
	}
	// Not blank: a good share of the page is neither the background nor white.
	colours := paletteOf(img)
	plain := countColour(colours, "#f6f7f9", 2) + countColour(colours, "#ffffff", 2)
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
		n := countColour(colours, c.hex, 10)
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
	for _, want := range []string{`<span class="tag">probe</span>`, "server: pid 4242 user 0.50 s, system 0.25 s, 37.5 µs per successful response, RSS 12.3 MB", "pid 4242 gone", "statuses: 200×7, 404×3"} {
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
	r.Plan.MaxP999 = 30 * time.Millisecond
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
	r.Plan = brk.Plan{}
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
	frags = svgFragments(t, writeHTML(t, r))
	for _, id := range perLevel {
		if f := frags[id]; !strings.Contains(f, ">inconclusive at 40</text>") || strings.Contains(f, "broke") {
			t.Errorf("%s: the inconclusive phase is not marked so", id)
		}
	}
	// A search whose client could not drive 80 bisected below it to 40:
	// the mark is at the lowest inconclusive level above the last accepted.
	hi := *r.Phases[4]
	hi.Level = 80
	r.Phases = append(r.Phases[:4:4], &hi, r.Phases[4]) // 80 ran first
	frags = svgFragments(t, writeHTML(t, r))
	for _, id := range perLevel {
		if f := frags[id]; !strings.Contains(f, ">inconclusive at 40</text>") || strings.Contains(f, "inconclusive at 80") {
			t.Errorf("%s: the lowest inconclusive level is not the one marked", id)
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

// htmlWideResult is a long rate run with every optional figure filled and
// every text long: what the page must lay out within 1280 px.
func htmlWideResult() *brk.Result {
	long := strings.Repeat("x", 64)
	var ps []*brk.PhaseStats
	for i := range 24 {
		level := 100000 + 25000*i
		p := &brk.PhaseStats{
			Index: i, Level: level, Depth: 64, Accepted: i < 20, Probe: i >= 20,
			DurationS: 61.25, ActiveS: 60,
			Counts: brk.Counts{Attempted: 123456789, Succeeded: 120000000, Timeout: 1234567, Transport: 234567,
				Abandoned: 345678, Connect: 45678, ConnectTimeout: 5678901, Status: 678901, Body: 78901, Protocol: 8901},
			StatusCodes: map[string]uint64{"200": 119999999, "201": 1, "404": 678000, "500": 901, "503": 77777, "other": 3},
			BodySamples: []string{long, "second"},
			SuccessPct:  97.2000036, RequestsPerSec: 1959183.7,
			LatencyMs: brk.Latency{Count: 120000000, Mean: 12345.678, P50: 23456.789, P90: 34567.891,
				P99: 45678.912, P999: 56789.123, Max: 59999.999},
			SetupLatencyMs:  brk.Latency{Count: 4096, Mean: 1234.5, P50: 1000, P90: 2000, P99: 3000, P999: 4000, Max: 5000},
			MeanOutstanding: 262143.9, TargetCoveragePct: 99.9, TargetReachedOnce: 4096, TimeAtTargetPct: 98.7,
			BlockedWrites: 9876543, MaxSendDelayMs: 12345.678, MaxLatenessMs: 2345.678,
			Setups:        brk.Setups{Attempted: 4096, Established: 4000, Failed: 50, TimedOut: 40, Abandoned: 6, Resumed: 3999},
			TLS:           &brk.TLSStats{Version: "TLS 1.3", Cipher: "TLS_CHACHA20_POLY1305_SHA256", Group: "X25519MLKEM768", Resumed: 3999},
			ClientCPU:     brk.ClientCPU{UserS: 1234.567, SystemS: 2345.678, UsPerResponse: 123.45},
			MachineCPUPct: htmlF(99.9), WorkerBusyPct: htmlF(97.5), ClientBound: i%3 == 0,
			ProtocolFault: "bad chunk size " + long, SetupError: "dial tcp 127.0.0.1:1: connect: connection refused " + long,
			ResetsSent: 123456, GoAwaysReceived: 12, StreamsReplayed: 345, PeerMaxStreams: func() *int64 { v := int64(100); return &v }(),
			IdleCloses:   4321,
			SetupsPerSec: 65.3,
			Server: []brk.ServerCPU{{PID: 123456, UserS: 1234.5, SystemS: 234.5, UsPerResponse: 12.5, RSSBytes: 12_300_000_000},
				{PID: 123457, Gone: true}},
			Rate: &brk.RateStats{Scheduled: 123456789, Written: 123000000, ExpiredUnsent: 456789,
				OfferedPerSec: 2057613.2, AchievedPerSec: 1959183.7,
				SendLagMs:    brk.Latency{Count: 123000000, P50: 12345.678, P99: 23456.789, Max: 59999.999},
				ServiceMs:    brk.Latency{Count: 120000000, P50: 12345.678, P99: 23456.789},
				ClientLagMs:  brk.Latency{Count: 123456789, P99: 34567.891},
				ShortfallPct: 12.345},
		}
		tl := &brk.Timeline{StartS: 0.25 + 61.5*float64(i), WidthS: 1}
		for j := range 62 {
			tl.Points = append(tl.Points, brk.TimelinePoint{Succeeded: uint64(1950000 + 1000*(j%7)), Failed: uint64(50000 * (j % 3)), P99Ms: 45678.912 + float64(j)})
		}
		tl.Points[61].Succeeded /= 4 // the last point spans 0.25 s
		tl.Points[61].Failed /= 4
		p.Timeline = tl
		if !p.Accepted {
			p.Reason = "success 97.2000 % (120000000 of 123456789) is below --accept 99.99 % at " + strconv.Itoa(level) + " requests/s; p99 45678.912 ms is above --max-p99 50 ms"
		}
		ps = append(ps, p)
	}
	la, fr := ps[19].Level, ps[20].Level
	return &brk.Result{
		Schema: 1, Test: brk.ModeRate, URL: "https://" + strings.Repeat("very-long-host-name.", 6) + "example.test:8443/" + strings.Repeat("path/", 30) + "?q=" + long,
		Protocol: "h2", TLS: true,
		Verdict: brk.VerdictBroken, Reason: ps[20].Reason, LastAccepted: &la, FirstRejected: &fr,
		Threads: 64, Conns: 4096, TimeoutMs: 60000, RateDepth: 64, Arrivals: "poisson", Seed: 18446744073709551615,
		Accept: "99.99", Version: "v1.2.3-0.20250101000000-0123456789ab+dirty", Command: "brk rate " + long,
		Baseline: &brk.Baseline{DurationS: 60, MachineCPUPct: htmlF(3.5), ClientCPU: brk.ClientCPU{UserS: 0.01, SystemS: 0.02}},
		Plan: brk.Plan{Conns: 4096, Start: 100000, Pace: 25000, Max: 1000000,
			Phase: 60 * time.Second, Timeout: 60 * time.Second, Accept: 99.99, Threads: 64, MaxP99: 50 * time.Millisecond, MaxP999: 80 * time.Millisecond,
			Refine: true, Repeat: 3, RateDepth: 64, Arrivals: "poisson", Seed: 18446744073709551615},
		Phases: ps,
	}
}

// measureScript, added to the page in the test only, writes the page's
// widths into the DOM: the document's scroll width, the viewport's width,
// every table wrapper's scroll and client widths, and the rightmost edge
// of any element with its name — first with every <details> closed, then
// with every one open.
const measureScript = `<script>
(function () {
  function measure() {
    var de = document.documentElement;
    var r = {doc: de.scrollWidth, body: document.body.scrollWidth, view: de.clientWidth, right: 0, el: "", wraps: []};
    document.querySelectorAll("body *").forEach(function (e) {
      var b = e.getBoundingClientRect();
      if (b.width > 0 && b.right > r.right) { r.right = b.right; r.el = e.tagName + "." + (e.getAttribute("class") || ""); }
    });
    document.querySelectorAll(".tablewrap").forEach(function (t) { r.wraps.push([t.scrollWidth, t.clientWidth]); });
    return r;
  }
  var closed = measure();
  document.querySelectorAll("details").forEach(function (d) { d.open = true; });
  var open = measure();
  var p = document.createElement("pre");
  p.id = "measure";
  p.textContent = JSON.stringify({closed: closed, open: open, details: document.querySelectorAll("details").length});
  document.body.appendChild(p);
})();
</script>`

type pageWidths struct {
	Doc, Body, View int
	Right           float64
	El              string
	Wraps           [][2]int
}

// measureAt loads doc (the measuring script added) in a width-pixel
// window and returns its widths with the <details> closed and open.
func measureAt(t *testing.T, doc string, width int) (closed, open pageWidths, details int) {
	t.Helper()
	page := strings.Replace(doc, "</body>", measureScript+"\n</body>", 1)
	out, _ := chromium(t, page, fmt.Sprintf("--window-size=%d,1000", width), "--virtual-time-budget=5000", "--dump-dom")
	m := regexp.MustCompile(`(?s)<pre id="measure">(.*?)</pre>`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("the measuring script wrote nothing:\n%.2000s", out)
	}
	var v struct {
		Closed, Open pageWidths
		Details      int
	}
	if err := json.Unmarshal([]byte(html.UnescapeString(m[1])), &v); err != nil {
		t.Fatalf("measure %q: %v", m[1], err)
	}
	return v.Closed, v.Open, v.Details
}

func checkNoSideScroll(t *testing.T, what string, w pageWidths, width int) {
	t.Helper()
	t.Logf("%s: document %d, body %d, viewport %d px; rightmost %s at %.1f; tables (scroll, client) %v", what, w.Doc, w.Body, w.View, w.El, w.Right, w.Wraps)
	if w.View > width || w.View < width-20 {
		t.Fatalf("%s: viewport %d px, want about %d", what, w.View, width)
	}
	if w.Doc > w.View || w.Body > w.View {
		t.Errorf("%s: the page scrolls sideways: document %d, body %d px wide in a %d px viewport", what, w.Doc, w.Body, w.View)
	}
	if w.Right > float64(w.View)+0.5 {
		t.Errorf("%s: %s reaches %.1f px, beyond the %d px viewport", what, w.El, w.Right, w.View)
	}
	if len(w.Wraps) == 0 {
		t.Errorf("%s: no tables measured", what)
	}
	for i, s := range w.Wraps {
		if s[0] > s[1] {
			t.Errorf("%s: table %d scrolls sideways: %d px of content in %d px", what, i, s[0], s[1])
		}
	}
}

// TestHTMLNoSideScroll1280: a long run with every optional figure filled
// (TLS, HTTP/2, rate schedule, server CPU, probes, body samples, many
// status codes, long texts) reads at 1280 px without scrolling sideways,
// with the phases' <details> closed and open.
func TestHTMLNoSideScroll1280(t *testing.T) {
	t.Parallel() // Chromium (and a short run), timing nothing
	r := htmlWideResult()
	doc := writeHTML(t, r)
	checkWellFormed(t, doc)
	closed, open, details := measureAt(t, doc, 1280)
	if details != len(r.Phases) {
		t.Errorf("%d <details>, want one per phase (%d)", details, len(r.Phases))
	}
	checkNoSideScroll(t, "details closed", closed, 1280)
	checkNoSideScroll(t, "details open", open, 1280)
	if p := os.Getenv("BRK_HTML_WIDE_OUT"); p != "" {
		os.WriteFile(p, []byte(doc), 0o644)
	}
}

// Every figure the phase table showed before it was folded is still in
// the page: each failure category's count, mean latency, load, client CPU,
// machine CPU, and the notes; and the new ones: TLS, HTTP/2, setups.
func TestHTMLPhaseFiguresKept(t *testing.T) {
	r := htmlWideResult()
	doc := writeHTML(t, r)
	for _, s := range []string{
		"<dt>timeout</dt><dd>1234567</dd>", "<dt>connect_timeout</dt><dd>5678901</dd>", "<dt>protocol</dt><dd>8901</dd>",
		"<div>connect_timeout 5678901</div>", "<dt>mean</dt><dd>12345.678</dd>", "<dt>p99.9</dt><dd>56789.123</dd>",
		"<dt>mean outstanding</dt><dd>262143.9</dd>", "<dt>coverage %</dt><dd>99.9</dd>",
		"<dt>CPU µs/response</dt><dd>123.45</dd>", "<dt>machine CPU %</dt><dd>99.9</dd>",
		"<dt>cipher</dt><dd>TLS_CHACHA20_POLY1305_SHA256</dd>", "<dt>GOAWAYs received</dt><dd>12</dd>",
		"<dt>server stream limit</dt><dd>100</dd>", "<dt>idle closes</dt><dd>4321</dd>", "<dt>resumed</dt><dd>3999</dd>", "<dt>expired unsent</dt><dd>456789</dd>",
		"statuses: 200×119999999, 201×1, 404×678000, 500×901, 503×77777, other×3",
		"server: pid 123456 user 1234.50 s", "pid 123457 gone", "protocol fault: bad chunk size",
		"setup error: dial tcp", "first differing body: <code>&#34;xxxx", `<span class="tag">probe</span>`,
		`<td>120000000<div class="per">of 123456789</div></td>`,
	} {
		if !strings.Contains(doc, s) {
			t.Errorf("report lacks %q", s)
		}
	}
	// An accepted phase without failures says so.
	r2 := htmlResult()
	if doc := writeHTML(t, r2); !strings.Contains(doc, `<span class="none">none</span>`) || !strings.Contains(doc, "<div>timeout 1000</div>") {
		t.Error("the failures column does not list only the failures that happened")
	}
}

// htmlTimelineResult is a run of three phases with timelines: a warm-up,
// a stall (a second of failures only, no responses) and a rejected phase
// whose last point is cut short by the phase's end, then an empty point
// past it.
func htmlTimelineResult() *brk.Result {
	r := htmlResult()
	r.Phases = r.Phases[2:]
	pt := func(ok, fail uint64, p99 float64) brk.TimelinePoint {
		return brk.TimelinePoint{Succeeded: ok, Failed: fail, P99Ms: p99}
	}
	r.Phases[0].DurationS = 3
	r.Phases[0].Timeline = &brk.Timeline{StartS: 0.5, WidthS: 1, Points: []brk.TimelinePoint{pt(2000, 0, 8), pt(4000, 0, 7), pt(4100, 0, 7)}}
	r.Phases[1].DurationS = 4
	r.Phases[1].Timeline = &brk.Timeline{StartS: 3.5, WidthS: 1, Points: []brk.TimelinePoint{pt(4200, 0, 9), pt(0, 300, 0), pt(3000, 20, 120), pt(4300, 0, 10)}}
	r.Phases[2].DurationS = 2.5
	r.Phases[2].Timeline = &brk.Timeline{StartS: 7.5, WidthS: 1, Points: []brk.TimelinePoint{pt(4000, 500, 30), pt(3900, 600, 35), pt(1000, 250, 40), pt(0, 0, 0)}}
	return r
}

// pathAttr returns attribute attr of the <path> of series name.
func pathAttr(t *testing.T, frag, name, attr string) string {
	t.Helper()
	m := regexp.MustCompile(`<path class="series" data-series="` + regexp.QuoteMeta(name) + `"[^>]*? ` + attr + `="([^"]*)"`).FindStringSubmatch(frag)
	if m == nil {
		t.Fatalf("timeline: no %s path with %s", name, attr)
	}
	return m[1]
}

// The timeline chart: successes/s, failures/s and p99 per span, rates over
// each span's length (the last one cut short by the phase's end, the empty
// one past it skipped), a gap in p99 where a span had no responses, each
// phase's start marked with its level and the data starting there.
func TestHTMLTimeline(t *testing.T) {
	r := htmlTimelineResult()
	doc := writeHTML(t, r)
	checkWellFormed(t, doc)
	checkSelfContained(t, doc, r)
	tl, ok := svgFragments(t, doc)["chart-timeline"]
	if !ok {
		t.Fatal("no timeline chart")
	}
	if n := dataPoints(t, tl); n != 10 {
		t.Errorf("timeline: %d points, want 10 (3 + 4 + 3; the span past the phase's end skipped)", n)
	}
	for series, want := range map[string]string{
		"successes/s": "2000 4000 4100 4200 0 3000 4300 4000 3900 2000",
		"failures/s":  "0 0 0 0 300 20 0 500 600 500",
		"p99 ms":      "8 7 7 9 - 120 10 30 35 40",
	} {
		if got := pathAttr(t, tl, series, "data-values"); got != want {
			t.Errorf("timeline %s: %q, want %q", series, got, want)
		}
	}
	// The p99 line has a gap at the stall: it starts anew after it (and at
	// each phase): 4 subpaths. The rates run on through the stall: 3.
	for series, want := range map[string]int{"p99 ms": 4, "successes/s": 3, "failures/s": 3} {
		if n := strings.Count(pathAttr(t, tl, series, "d"), "M"); n != want {
			t.Errorf("timeline %s: %d subpaths, want %d", series, n, want)
		}
	}
	// Each phase's start is marked, with its level, where its data starts.
	marks := regexp.MustCompile(`<line class="phase-mark" data-phase="(\d+)" data-level="(\d+)" x1="([-0-9.]+)"`).FindAllStringSubmatch(tl, -1)
	if len(marks) != 3 {
		t.Fatalf("%d phase marks, want 3", len(marks))
	}
	starts := regexp.MustCompile(`M([-0-9.]+) `).FindAllStringSubmatch(pathAttr(t, tl, "successes/s", "d"), -1)
	for i, m := range marks {
		if want := strconv.Itoa(r.Phases[i].Level); m[2] != want || !strings.Contains(tl, ">"+want+"</text>") {
			t.Errorf("phase mark %d: level %s, want %s, labelled", i, m[2], want)
		}
		if m[3] != starts[i][1] {
			t.Errorf("phase %d: marked at x %s, its data starts at x %s", i, m[3], starts[i][1])
		}
	}
	for _, s := range []string{"seconds since the run's start", ">successes/s</text>", ">failures/s</text>", "p99 (ms)"} {
		if !strings.Contains(tl, s) {
			t.Errorf("timeline lacks %q", s)
		}
	}
}

// Without timelines (every real run until the engine fills them) there is
// no timeline chart, and no empty box for one.
func TestHTMLNoTimeline(t *testing.T) {
	r := htmlTimelineResult()
	for _, p := range r.Phases {
		p.Timeline = nil
	}
	r.Phases[1].Timeline = &brk.Timeline{StartS: 1, WidthS: 1}
	doc := writeHTML(t, r)
	if strings.Contains(doc, "chart-timeline") || strings.Contains(doc, "over time") {
		t.Error("a timeline chart for a run without timelines")
	}
	if n := len(svgFragments(t, doc)); n != 4 {
		t.Errorf("%d charts, want 4 (3 per level, the percentile curve)", n)
	}
}

// The timeline renders in Chromium (its three series' colours are on the
// page) and the page still fits 1280 px.
func TestHTMLTimelineRenders(t *testing.T) {
	t.Parallel() // Chromium (and a short run), timing nothing
	doc := writeHTML(t, htmlTimelineResult())
	img, out := screenshotAt(t, doc, 1280, 1600)
	colours := paletteOf(img)
	for _, c := range []struct{ name, hex string }{
		{"successes/s", "#4dac26"}, {"failures/s", "#e66101"}, {"p99", "#c51b7d"},
	} {
		if n := countColour(colours, c.hex, 10); n < 300 {
			t.Errorf("timeline %s (%s): %d pixels, want >= 300", c.name, c.hex, n)
		}
	}
	closed, _, _ := measureAt(t, doc, 1280)
	checkNoSideScroll(t, "timeline page", closed, 1280)
	if p := os.Getenv("BRK_HTML_TIMELINE_PNG"); p != "" {
		if b, err := os.ReadFile(out); err == nil {
			os.WriteFile(p, b, 0o644)
		}
	}
}

// runConditions returns the run conditions' labels and values in order.
func runConditions(t *testing.T, doc string) [][2]string {
	t.Helper()
	m := regexp.MustCompile(`(?s)<dl class="cond">(.*?)</dl>`).FindStringSubmatch(doc)
	if m == nil {
		t.Fatal("no run conditions")
	}
	var out [][2]string
	for _, kv := range regexp.MustCompile(`(?s)<dt>(.*?)</dt><dd>(.*?)</dd>`).FindAllStringSubmatch(m[1], -1) {
		v := strings.NewReplacer("<code>", "", "</code>", "").Replace(kv[2])
		out = append(out, [2]string{html.UnescapeString(kv[1]), html.UnescapeString(v)})
	}
	return out
}

// The run conditions are labelled in words, as a person reads them, never
// as a flag or a JSON field, and their values carry their units.
func TestHTMLConditionsLabels(t *testing.T) {
	flagLike := regexp.MustCompile(`_|--|^[a-z]+$|(?i)\b(ms|pct|conns)\b`)
	for _, tc := range []struct {
		name string
		r    *brk.Result
		want [][2]string
	}{
		{"requests", htmlResult(), [][2]string{
			{"Command line", htmlConditions().Command},
			{"Test", "requests: raises concurrent requests phase by phase"},
			{"HTTP version", "HTTP/1.1, plain TCP"},
			{"Worker threads", "2"}, {"Connections", "8, opened once"},
			{"Outstanding requests per connection", "1, then +1 each phase; no maximum: until a phase is rejected (level = 8 connections × this)"},
			{"Phase length", "1 s of admission, then the drain"},
			{"Timeout per request", "140 ms"},
			{"Success needed", "at least 99.99 % of requests in a phase"},
			{"Latency limits", "p99 at most 20 ms"},
			{"Load machine", "loadbox-1"}, {"CPUs on the load machine", "16"}, {"Operating system", "linux / amd64"},
			{"Started", "2025-03-04T05:06:07Z"}, {"Report schema version", "1"},
		}},
		{"rate", htmlWideResult(), [][2]string{
			{"Test", "rate: raises the offered requests/s phase by phase (an open model)"},
			{"HTTP version", "HTTP/2 (h2) over TLS"},
			{"Worker threads", "64"}, {"Connections", "4096, opened once"},
			{"Offered rate", "100000 requests/s, then +25000 each phase; up to 1000000 requests/s"},
			{"Outstanding requests per connection, at most", "64"},
			{"Arrivals", "poisson (seed 18446744073709551615)"},
			{"Phase length", "60 s of admission, then the drain"},
			{"Timeout per request", "60 s"},
			{"Latency limits", "p99 at most 50 ms; p99.9 at most 80 ms"},
			{"Refinement", "after the break, bisect down to adjacent levels; a level that must be confirmed runs up to 3 times (the majority decides)"},
			{"Idle baseline", "60.00 s idle: machine CPU 3.5 %; client user 0.010 s, system 0.020 s"},
			{"brk version", "v1.2.3-0.20250101000000-0123456789ab+dirty"},
		}},
	} {
		conds := runConditions(t, writeHTML(t, tc.r))
		got := map[string]string{}
		for _, kv := range conds {
			if flagLike.MatchString(kv[0]) {
				t.Errorf("%s: condition labelled %q, a flag's or field's name", tc.name, kv[0])
			}
			got[kv[0]] = kv[1]
		}
		for _, w := range tc.want {
			if v, ok := got[w[0]]; !ok || v != w[1] {
				t.Errorf("%s: %q = %q, want %q", tc.name, w[0], v, w[1])
			}
		}
	}
	c := &brk.Result{Schema: 1, Test: brk.ModeConnections, URL: "http://127.0.0.1:1/", Verdict: brk.VerdictDone,
		Threads: 1, Requests: 3, TimeoutMs: 2500, Accept: "99",
		Plan: brk.Plan{Start: 64, Pace: 64, Max: 256, Phase: 500 * time.Millisecond, Timeout: 2500 * time.Millisecond, Requests: 3}}
	got := map[string]string{}
	for _, kv := range runConditions(t, writeHTML(t, c)) {
		got[kv[0]] = kv[1]
	}
	for k, v := range map[string]string{"Requests per connection": "3", "Concurrent connections": "64 connections, then +64 each phase; up to 256 connections",
		"Phase length": "500 ms of admission, then the drain", "Timeout per request": "2.5 s"} {
		if got[k] != v {
			t.Errorf("connections: %q = %q, want %q", k, got[k], v)
		}
	}
	c.Command = "brk conn --requests 3 http://127.0.0.1:1/"
	if doc := writeHTML(t, c); !strings.Contains(doc, "<code>brk requests --conns 8") {
		t.Error("the conditions' command line is not preferred")
	}
	var b bytes.Buffer
	if err := report.WriteHTML(&b, c, report.HTMLConditions{}); err != nil || !strings.Contains(b.String(), "<dd><code>brk conn --requests 3 http://127.0.0.1:1/</code></dd>") {
		t.Error("without the conditions' command line, the Result's is not shown")
	}
	if _, ok := got["Connections"]; ok {
		t.Error("connections test: a fixed connection count shown")
	}
}

// htmlSearchResult is a search's report: levels visited out of order
// (8, 16, 32 held; 64, 48, 40, 36, 34, 33 rejected), the final pair 32/33
// at phases 2 and 8.
func htmlSearchResult() *brk.Result {
	levels := []int{8, 16, 32, 64, 48, 40, 36, 34, 33}
	roles := []string{"grow", "grow", "grow", "grow", "bisect", "bisect", "bisect", "bisect", "bisect"}
	var ps []*brk.PhaseStats
	for i, l := range levels {
		p := htmlPhase(i, (l+7)/8, 4000, 4000, 400, 2.5*float64(l))
		p.Level, p.Role, p.Probe = l, roles[i], roles[i] == "bisect"
		if l > 32 {
			p.Accepted = false
			p.Counts.Succeeded, p.SuccessPct = 3000, 75
			p.Reason = "success 75% (3000 of 4000) is below --accept 99.99%"
		}
		ps = append(ps, p)
	}
	return &brk.Result{
		Schema: 1, Test: "requests", URL: "http://127.0.0.1:8080/plain", Protocol: "http/1.1",
		Verdict: brk.VerdictBroken, Reason: ps[8].Reason,
		LastAccepted: htmlI(32), FirstRejected: htmlI(33), FinalPair: &brk.FinalPair{HeldPhase: htmlI(2), BrokePhase: htmlI(8), HeldRuns: 1, HeldOf: 1, BrokeRun: 1, BrokeOf: 1},
		Threads: 1, Conns: 8, TimeoutMs: 100, Accept: "99.99", Phases: ps,
		Plan: brk.Plan{Conns: 8, Start: 1, Search: &brk.Search{Growth: 2, ResolutionPct: 1}, Budget: 300 * time.Second,
			Phase: time.Second, Timeout: 100 * time.Millisecond, Accept: 99.99, Threads: 1, Repeat: 1},
	}
}

// A search's report: the phase table tags each phase's role, each
// per-level chart draws its line in level order and numbers every point
// with its phase (its place in the run order), the break mark is the
// final pair's, and the conditions describe the search. Chromium lays the
// numbers out at their points: each "run" label sits above the point of
// its phase.
func TestHTMLSearchOutOfOrder(t *testing.T) {
	r := htmlSearchResult()
	doc := writeHTML(t, r)
	checkWellFormed(t, doc)
	for _, want := range []string{`<span class="tag">grow</span>`, `<span class="tag">bisect</span>`, "broke at 33"} {
		if !strings.Contains(doc, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if conds := runConditions(t, doc); !slices.ContainsFunc(conds, func(c [2]string) bool {
		return c[0] == "Search" && strings.Contains(c[1], "×2 per phase") && strings.Contains(c[1], "1 % of the last accepted level")
	}) {
		t.Errorf("conditions %v lack the search", conds)
	}
	frags := svgFragments(t, doc)
	for _, id := range []string{"chart-success", "chart-rps", "chart-latency"} {
		frag := frags[id]
		m := regexp.MustCompile(`<polyline points="([^"]+)"`).FindStringSubmatch(frag)
		if m == nil {
			t.Fatalf("%s: no line", id)
		}
		last := -1.0
		for _, xy := range strings.Fields(m[1]) {
			x, _ := strconv.ParseFloat(strings.Split(xy, ",")[0], 64)
			if x < last {
				t.Fatalf("%s: the line goes back from x %.1f to %.1f: not in level order", id, last, x)
			}
			last = x
		}
		runs := regexp.MustCompile(`<text class="run"[^>]*>(\d+)</text>`).FindAllStringSubmatch(frag, -1)
		if id != "chart-latency" && len(runs) != len(r.Phases) {
			t.Fatalf("%s: %d run numbers, want %d", id, len(runs), len(r.Phases))
		}
	}
	// Rendered: every run number of the success chart sits above the
	// point of its phase (same x, within a few pixels).
	page := strings.Replace(doc, "</body>", `<script>
(function () {
  var out = [];
  var svg = document.getElementById("chart-success");
  var pts = svg.querySelectorAll("circle.pt");
  var runs = svg.querySelectorAll("text.run");
  for (var i = 0; i < runs.length; i++) {
    var b = runs[i].getBBox(), c = pts[i];
    out.push([+runs[i].textContent, b.x + b.width / 2, +c.getAttribute("cx"), b.y + b.height, +c.getAttribute("cy")]);
  }
  var p = document.createElement("pre"); p.id = "runs"; p.textContent = JSON.stringify(out); document.body.appendChild(p);
})();
</script></body>`, 1)
	out, _ := chromium(t, page, "--window-size=1280,1000", "--virtual-time-budget=5000", "--dump-dom")
	m := regexp.MustCompile(`(?s)<pre id="runs">(.*?)</pre>`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("the script wrote nothing:\n%.2000s", out)
	}
	var got [][5]float64
	if err := json.Unmarshal([]byte(html.UnescapeString(m[1])), &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(r.Phases) {
		t.Fatalf("%d rendered run numbers, want %d", len(got), len(r.Phases))
	}
	for i, g := range got {
		if int(g[0]) != i || math.Abs(g[1]-g[2]) > 3 || g[3] > g[4] {
			t.Errorf("run number %v: phase %d's label at x %.1f (bottom %.1f), its point at x %.1f y %.1f", g[0], i, g[1], g[3], g[2], g[4])
		}
	}
}
