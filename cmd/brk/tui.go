package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gdamore/tcell/v2"
	"github.com/gdamore/tcell/v2/terminfo"

	"github.com/brk-bench/brk"
	"github.com/brk-bench/brk/internal/metrics"
	"github.com/brk-bench/brk/report"
)

// The --tui live view: a full-screen view of the run on stderr's
// terminal, drawn with tcell. It shows the run's header, the running
// phase (report.ProgressLine's words), one column a second of
// successes/s, success % and p99 over the whole run and the level of
// each second, and a table of the phases so far. The human text goes on
// as without it; when it would go to a terminal (stdout, or stderr with
// --json -) it is held (holdWriter) and written once the screen is
// restored.

// holdWriter holds what is written to w while holding, and writes it
// through once released.
type holdWriter struct {
	mu      sync.Mutex
	w       io.Writer
	buf     bytes.Buffer
	holding bool
}

func (h *holdWriter) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.holding {
		return h.buf.Write(p)
	}
	return h.w.Write(p)
}

// release writes what was held and stops holding. It may be called more
// than once.
func (h *holdWriter) release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.holding {
		return
	}
	h.holding = false
	_, _ = h.w.Write(h.buf.Bytes()) // a failure is the stickyWriter's to report
	h.buf.Reset()
}

// tuiSample is one second of a phase (or a whole phase shorter than a
// second): one column of the charts.
type tuiSample struct {
	phase, level int
	okps         float64
	success      float64 // percent of the second's completions; -1: none completed
	p99          time.Duration
}

// tuiMaxSamples bounds the seconds kept (the charts show the last that fit).
const tuiMaxSamples = 4096

// tuiView is the --tui observer: the text observer, plus the screen.
type tuiView struct {
	*report.Text
	screen tcell.Screen
	redact func(string) string
	blocks []rune // the chart's bar runes, empty to full
	loop   chan struct{}
	// unwatch ends the watch on Ctrl-Z (nil: none).
	unwatch func()

	mu     sync.Mutex
	closed bool
	// suspended: brk was stopped from the terminal (Ctrl-Z) and the
	// terminal is restored; nothing is drawn until it is resumed.
	suspended bool
	header    []string
	at        brk.PhaseStart
	running   bool          // a phase is running (PhaseStarted, not yet PhaseFinished)
	last      *brk.Progress // the running phase's last reading
	samples   []tuiSample
	phases    []brk.PhaseStats
	// The running phase's totals at its last reading, for the
	// per-second success and p99.
	prevPhase            int
	prevSucc, prevFailed uint64
	prevLat              [metrics.CoarseBuckets]uint64
}

// tuiTerminfo is the terminal's description with the features that make
// a terminal send input left out: brk reads no keys, so a keyboard
// protocol (kitty's, xterm's modifyOtherKeys, which would send Ctrl-C as
// an escape sequence instead of raising SIGINT), focus or mouse reports
// and bracketed paste are never asked for.
func tuiTerminfo() (*terminfo.Terminfo, error) {
	name := os.Getenv("TERM")
	if name == "" || name == "dumb" {
		return nil, fmt.Errorf("TERM is %q", name)
	}
	ti, err := tcell.LookupTerminfo(name)
	if err != nil {
		return nil, err
	}
	c := *ti
	// tcell takes a name starting with "xterm" for an xterm clone and
	// asks for those features; the copy is named apart.
	c.Name = "brk-" + c.Name
	c.Aliases = nil
	c.XTermLike = false
	c.Mouse = ""
	return &c, nil
}

// startTUI starts the view on stderr's terminal; an error says why it
// could not (the caller then shows the progress line).
func startTUI(text *report.Text, stderr io.Writer, redact func(string) string) (*tuiView, error) {
	f, ok := terminal(stderr)
	if !ok {
		return nil, errors.New("stderr is not a terminal")
	}
	ti, err := tuiTerminfo()
	if err != nil {
		return nil, err
	}
	tty, err := newStderrTty(f)
	if err != nil {
		return nil, err
	}
	s, err := tcell.NewTerminfoScreenFromTtyTerminfo(tty, ti)
	if err != nil {
		return nil, err
	}
	if err := s.Init(); err != nil {
		return nil, err
	}
	v := newTUIView(text, s, redact)
	v.unwatch = watchStop(v, f)
	return v, nil
}

// suspend restores the terminal (main screen, its modes) and draws
// nothing until resume.
func (v *tuiView) suspend() {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.closed || v.suspended {
		return
	}
	v.suspended = true
	_ = v.screen.Suspend()
}

// resume takes the terminal again after suspend and draws the view.
func (v *tuiView) resume() {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.closed || !v.suspended || v.screen.Resume() != nil {
		return
	}
	v.suspended = false
	v.screen.Sync()
	v.draw()
}

// newTUIView draws the view on s, an initialised screen.
func newTUIView(text *report.Text, s tcell.Screen, redact func(string) string) *tuiView {
	v := &tuiView{Text: text, screen: s, redact: redact, loop: make(chan struct{}), prevPhase: -1}
	v.blocks = []rune(" ▁▂▃▄▅▆▇█")
	if cs := strings.ToUpper(s.CharacterSet()); cs != "UTF-8" && cs != "UTF8" {
		v.blocks = []rune(" .:-=+*#@")
	}
	go v.events()
	v.mu.Lock()
	v.draw()
	v.mu.Unlock()
	return v
}

// events redraws on a resize until the screen is finished.
func (v *tuiView) events() {
	defer close(v.loop)
	for {
		ev := v.screen.PollEvent()
		if ev == nil {
			return
		}
		if _, ok := ev.(*tcell.EventResize); ok {
			v.mu.Lock()
			if !v.closed {
				v.screen.Sync()
				v.draw()
			}
			v.mu.Unlock()
		}
	}
}

// close restores the terminal; it may be called more than once.
func (v *tuiView) close() {
	v.mu.Lock()
	if v.closed {
		v.mu.Unlock()
		return
	}
	v.closed = true
	v.mu.Unlock()
	if v.unwatch != nil {
		v.unwatch()
	}
	v.screen.Fini()
	select {
	case <-v.loop:
	case <-time.After(2 * time.Second):
	}
}

// guard restores the terminal before a panic in the view goes on: the
// reporter's goroutine would end the process without the caller's
// deferred restore.
func (v *tuiView) guard() {
	if r := recover(); r != nil {
		v.closed = true // v.mu is held: guard is deferred under it
		v.screen.Fini()
		panic(r)
	}
}

// WorkersStarted writes the text's header and shows it.
func (v *tuiView) WorkersStarted(threads int) {
	v.Text.WorkersStarted(threads)
	var b bytes.Buffer
	h := *v.Text
	h.W = &b
	h.WorkersStarted(threads)
	lines := strings.Split(strings.TrimRight(v.redact(b.String()), "\n"), "\n")
	v.mu.Lock()
	defer v.mu.Unlock()
	defer v.guard()
	v.header = lines
	v.draw()
}

// PhaseStarted shows the phase's start: its level, the bracket so far
// and the budget left.
func (v *tuiView) PhaseStarted(p brk.PhaseStart) {
	v.Text.PhaseStarted(p)
	v.mu.Lock()
	defer v.mu.Unlock()
	defer v.guard()
	v.at, v.running, v.last = p, true, nil
	v.draw()
}

// Progress adds the second's column to the charts. It is called from
// the engine's reporter goroutine.
func (v *tuiView) Progress(g brk.Progress) {
	v.mu.Lock()
	defer v.mu.Unlock()
	defer v.guard()
	if v.closed {
		return
	}
	if g.Phase != v.prevPhase {
		v.prevPhase, v.prevSucc, v.prevFailed = g.Phase, 0, 0
		v.prevLat = [metrics.CoarseBuckets]uint64{}
	}
	failed := uint64(0)
	for _, name := range brk.FailureCategories() {
		failed += g.Failed.Failure(name)
	}
	s := tuiSample{phase: g.Phase, level: g.Level, okps: g.SuccessPerSec, success: -1}
	ds, df := g.Succeeded-v.prevSucc, failed-v.prevFailed
	if ds+df > 0 {
		s.success = 100 * float64(ds) / float64(ds+df)
	}
	s.p99 = time.Duration(metrics.LiveP99Us(&g.Latency, &v.prevLat)) * time.Microsecond
	v.prevSucc, v.prevFailed, v.prevLat = g.Succeeded, failed, g.Latency
	v.samples = append(v.samples, s)
	if len(v.samples) > tuiMaxSamples {
		v.samples = v.samples[len(v.samples)-tuiMaxSamples:]
	}
	v.last = &g
	v.draw()
}

// PhaseFinished writes the phase's text and adds its row to the table.
func (v *tuiView) PhaseFinished(s *brk.PhaseStats) {
	v.Text.PhaseFinished(s)
	v.mu.Lock()
	defer v.mu.Unlock()
	defer v.guard()
	v.phases = append(v.phases, *s)
	if n := len(v.samples); n == 0 || v.samples[n-1].phase != s.Index {
		// A phase shorter than a second had no reading: its column is
		// the whole phase's.
		c := tuiSample{phase: s.Index, level: s.Level, okps: s.RequestsPerSec, success: -1,
			p99: time.Duration(s.LatencyMs.P99 * float64(time.Millisecond))}
		if s.Counts.Attempted > 0 {
			c.success = s.SuccessPct
		}
		v.samples = append(v.samples, c)
	}
	v.running, v.last = false, nil
	v.draw()
}

var (
	tuiBold     = tcell.StyleDefault.Bold(true)
	tuiDim      = tcell.StyleDefault.Dim(true)
	tuiAccepted = tcell.StyleDefault.Foreground(tcell.ColorGreen)
	tuiRejected = tcell.StyleDefault.Foreground(tcell.ColorRed).Bold(true)
	tuiBreach   = tcell.StyleDefault.Foreground(tcell.ColorYellow).Bold(true)
)

// put writes str at x, y, clipped at the screen's width (the last
// column then shows "…"); it returns the column after it.
func (v *tuiView) put(x, y int, str string, st tcell.Style) int {
	w, h := v.screen.Size()
	if y < 0 || y >= h {
		return x
	}
	r := []rune(str)
	for i, c := range r {
		if x >= w {
			break
		}
		if x == w-1 && i < len(r)-1 {
			c = '…'
		}
		v.screen.SetContent(x, y, c, nil, st)
		x++
	}
	return x
}

// draw draws the whole view; v.mu is held.
func (v *tuiView) draw() {
	if v.closed || v.suspended {
		return
	}
	s := v.screen
	s.Clear()
	w, h := s.Size()
	y := 0
	for i, l := range v.header {
		if i == 4 {
			break
		}
		st := tcell.StyleDefault
		if i == 0 {
			st = tuiBold
		}
		v.put(0, y, l, st)
		y++
	}
	if len(v.header) == 0 {
		v.put(0, y, "brk: starting the workers…", tuiBold)
		y++
	}
	y++
	y = v.drawStatus(y, w)
	y++
	// The phase table takes what the charts leave, at least 4 rows
	// under its head; a chart is two rows high when that fits.
	rows := 2
	if h-y-1-4*rows-1-5 < 0 {
		rows = 1
	}
	y = v.drawCharts(y, w, rows)
	y++
	v.drawPhases(y, w, h-1)
	v.put(0, h-1, "Ctrl-C stops the run and reports what it measured; the text report follows the view", tuiDim)
	s.Show()
}

// drawStatus is the running phase in report.ProgressLine's words, its
// fields wrapped over at most two rows.
func (v *tuiView) drawStatus(y, w int) int {
	var line string
	switch {
	case v.running:
		g := brk.Progress{Phase: v.at.Index, Level: v.at.Level}
		if v.last != nil {
			g = *v.last
		}
		phase := v.Plan.Phase
		if phase == 0 {
			phase = 10 * time.Second
		}
		line = strings.TrimPrefix(report.ProgressLine(g, v.Test, phase, v.at), "… ")
		if v.last == nil {
			// No reading yet (the first comes a second into the phase):
			// the phase's start, not zeros.
			if i := strings.Index(line, "  in flight "); i > 0 {
				line = line[:i] + "  first reading at 1 s"
			}
		}
		if v.at.Role != "" {
			if a, b, ok := strings.Cut(line, "  "); ok {
				line = a + " " + v.at.Role + "  " + b
			}
		}
	case len(v.phases) > 0:
		line = fmt.Sprintf("between phases: %d done", len(v.phases))
	default:
		line = "waiting for the first phase"
	}
	fields := strings.Split(line, "  ")
	x, rows := 0, 0
	for _, f := range fields {
		n := len([]rune(f))
		if x > 0 && x+2+n > w && rows == 0 {
			y, x, rows = y+1, 0, 1
		}
		if x > 0 {
			x += 2
		}
		st := tcell.StyleDefault
		if x == 0 && rows == 0 {
			st = tuiBold
		}
		x = v.put(x, y, f, st)
	}
	return y + 1
}

// drawCharts draws the four series, each rows high.
func (v *tuiView) drawCharts(y, w, rows int) int {
	const label = 17
	cw := w - label - 1
	if cw < 4 {
		return y
	}
	samples := v.samples
	if len(samples) > cw {
		samples = samples[len(samples)-cw:]
	}
	last := tuiSample{success: -1}
	if len(samples) > 0 {
		last = samples[len(samples)-1]
	}
	var okMax, p99Max float64
	levelMax := 1
	for _, s := range samples {
		okMax = math.Max(okMax, s.okps)
		p99Max = math.Max(p99Max, float64(s.p99))
		levelMax = max(levelMax, s.level)
	}
	verdict := map[int]tcell.Style{} // a finished phase's columns take its verdict's colour
	for _, p := range v.phases {
		verdict[p.Index] = tuiStyle(&p)
	}
	type chart struct {
		name, now, scale string
		value            func(tuiSample) float64 // 0..1, negative: no bar
		breach           func(tuiSample) bool    // the second broke the SLA's term this chart shows
	}
	accept, maxP99 := v.Plan.Accept, v.Plan.MaxP99
	if accept == 0 {
		accept = brk.DefaultAccept
	}
	never := func(tuiSample) bool { return false }
	success := "—"
	if last.success >= 0 {
		success = report.Pct(last.success)
	}
	p99 := "—"
	if last.p99 > 0 {
		p99 = report.Ms(float64(last.p99) / 1e6)
	}
	charts := []chart{
		{"ok/s", commas(int64(math.Round(last.okps))), "max " + commas(int64(math.Round(okMax))), func(s tuiSample) float64 {
			return frac(s.okps, okMax)
		}, never},
		{"success", success, "0–100 %", func(s tuiSample) float64 {
			if s.success < 0 {
				return -1
			}
			return s.success / 100
		}, func(s tuiSample) bool { return s.success >= 0 && accept > 0 && s.success < accept }},
		{"p99", p99, "max " + report.Ms(p99Max/1e6), func(s tuiSample) float64 {
			if s.p99 <= 0 {
				return -1
			}
			return frac(float64(s.p99), p99Max)
		}, func(s tuiSample) bool { return maxP99 > 0 && s.p99 > maxP99 }},
		{"level", strconv.Itoa(last.level), "log, max " + strconv.Itoa(levelMax), func(s tuiSample) float64 {
			if s.level <= 0 {
				return -1
			}
			return frac(math.Log2(float64(s.level))+1, math.Log2(float64(levelMax))+1)
		}, never},
	}
	if len(samples) == 0 {
		for i := range charts {
			charts[i].now = "—"
		}
	}
	for _, c := range charts {
		v.put(0, y, fmt.Sprintf("%-8s%8s", c.name, c.now), tuiBold)
		if rows > 1 {
			v.put(0, y+1, fmt.Sprintf("%16s", c.scale), tuiDim)
		}
		eighths := 8 * rows
		for i, s := range samples {
			f := c.value(s)
			if f < 0 {
				continue
			}
			n := int(math.Round(f * float64(eighths)))
			if n == 0 && f > 0 {
				n = 1 // a value above zero shows
			}
			st, ok := verdict[s.phase]
			if !ok {
				st = tcell.StyleDefault
			}
			if c.breach(s) {
				st = tuiBreach // whatever the phase's verdict: this second broke the term
			}
			for r := range rows { // r 0 is the bottom row
				fill := min(max(n-8*r, 0), 8)
				v.screen.SetContent(label+1+i, y+rows-1-r, v.blocks[fill], nil, st)
			}
		}
		y += rows
	}
	return y
}

// frac is v of top, 0 when top is 0.
func frac(v, top float64) float64 {
	if top <= 0 {
		return 0
	}
	return math.Min(v/top, 1)
}

// tuiStyle is the style of a phase's verdict.
func tuiStyle(p *brk.PhaseStats) tcell.Style {
	switch {
	case p.Interrupted || p.Inconclusive || p.NotJudged:
		return tcell.StyleDefault
	case p.Accepted:
		return tuiAccepted
	}
	return tuiRejected
}

// tuiVerdict is a phase's verdict in the table's words.
func tuiVerdict(p *brk.PhaseStats) string {
	switch {
	case p.Interrupted:
		return "cut short"
	case p.Inconclusive:
		return "no verdict"
	case p.NotJudged:
		return "not judged"
	case p.Accepted:
		return "accepted"
	}
	return "REJECTED"
}

// shortReason is a rejection's reason without its counts and level:
// "success 34.44% (166 of 482) is below --accept 99.99% at 64 concurrent
// requests" reads "success 34.44% is below --accept 99.99%".
func shortReason(r string) string {
	for {
		i := strings.Index(r, " (")
		if i < 0 {
			break
		}
		j := strings.IndexByte(r[i:], ')')
		if j < 0 {
			break
		}
		r = r[:i] + r[i+j+1:]
	}
	if i := strings.LastIndex(r, " at "); i > 0 {
		r = r[:i]
	}
	return r
}

// drawPhases is the table of the phases so far (the last that fit
// between y and end), then the running phase.
func (v *tuiView) drawPhases(y, w, end int) {
	const head = "phase     level  role    verdict        ok/s   success       p99  reason"
	if y >= end {
		return
	}
	v.put(0, y, head, tuiBold)
	y++
	room := end - y
	if v.running {
		room--
	}
	if room < 0 {
		return
	}
	phases := v.phases
	if len(phases) > room {
		if room > 0 {
			phases = phases[len(phases)-room+1:]
			v.put(0, y, fmt.Sprintf("… %d earlier phases", len(v.phases)-len(phases)), tuiDim)
			y++
		} else {
			phases = nil
		}
	}
	for i := range phases {
		p := &phases[i]
		row := fmt.Sprintf("%5d %9d  %-6s  ", p.Index, p.Level, p.Role)
		x := v.put(0, y, row, tcell.StyleDefault)
		x = v.put(x, y, fmt.Sprintf("%-10s", tuiVerdict(p)), tuiStyle(p))
		success := report.Pct(p.SuccessPct)
		if p.Counts.Attempted == 0 {
			success = "—"
		}
		v.put(x, y, fmt.Sprintf(" %9s %9s %9s  %s", commas(int64(math.Round(p.RequestsPerSec))), success,
			report.Ms(p.LatencyMs.P99), shortReason(p.Reason)), tcell.StyleDefault)
		y++
	}
	if v.running && y < end {
		v.put(0, y, fmt.Sprintf("%5d %9d  %-6s  %s", v.at.Index, v.at.Level, v.at.Role, "running…"), tuiBold)
	}
}

// commas writes n with thousands separators.
func commas(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
