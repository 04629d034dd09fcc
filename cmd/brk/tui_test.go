//go:build linux

package main

// --tui: the live view drawn in tmux (capture-pane), its layout on a
// simulated 80×24 screen, what it asks of the terminal, and its
// fallbacks and refusals. Linux, as cpu_test.go (runScript, shq).

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"
	"github.com/gdamore/tcell/v2/terminfo"

	"github.com/brk-bench/brk"
	"github.com/brk-bench/brk/bench"
	"github.com/brk-bench/brk/internal/e2ekit"
	"github.com/brk-bench/brk/internal/metrics"
	"github.com/brk-bench/brk/internal/testenv"
	"github.com/brk-bench/brk/report"
)

// tmuxPane is one tmux server of a test's own (its own socket), running
// one pane.
type tmuxPane struct {
	t    *testing.T
	sock string
}

var tmuxServers atomic.Int64

// startTmux runs the shell command line in a detached cols×rows pane of a
// tmux server of its own, killed when the test ends.
func startTmux(t *testing.T, cols, rows int, line string) *tmuxPane {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		testenv.SkipOrFail(t, "tmux not found: %v", err)
	}
	// The socket lives in the test's temporary directory, removed with it.
	p := &tmuxPane{t: t, sock: filepath.Join(t.TempDir(), fmt.Sprintf("tmux-%d", tmuxServers.Add(1)))}
	if out, err := p.tmux("-f", "/dev/null", "new-session", "-d", "-x", fmt.Sprint(cols), "-y", fmt.Sprint(rows), line); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	t.Cleanup(func() { _, _ = p.tmux("kill-server") })
	return p
}

// tmux runs a tmux command on the pane's server, bounded.
func (p *tmuxPane) tmux(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "tmux", append([]string{"-u", "-S", p.sock}, args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// screen is the pane's visible text; history adds its scrollback.
func (p *tmuxPane) screen(history bool) string {
	p.t.Helper()
	args := []string{"capture-pane", "-p"}
	if history {
		args = append(args, "-S", "-")
	}
	out, err := p.tmux(args...)
	if err != nil {
		p.t.Fatalf("tmux capture-pane: %v\n%s", err, out)
	}
	return out
}

// alternate reports whether the pane shows the alternate screen (the
// view's).
func (p *tmuxPane) alternate() bool {
	p.t.Helper()
	out, err := p.tmux("display-message", "-p", "#{alternate_on}")
	if err != nil {
		p.t.Fatalf("tmux display-message: %v\n%s", err, out)
	}
	return strings.TrimSpace(out) == "1"
}

// waitScreen polls the visible pane until ok holds, and returns it.
func (p *tmuxPane) waitScreen(what string, within time.Duration, ok func(string) bool) string {
	p.t.Helper()
	deadline := time.Now().Add(within)
	for {
		s := p.screen(false)
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("no %s within %v; the pane:\n%s", what, within, s)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// tuiLine is the pane's shell line: brk with args, then whether the
// terminal's modes are as before, and brk's exit code; the pane then
// stays (a bounded sleep) to be captured.
func tuiLine(args ...string) string {
	q := []string{"LC_ALL=C.UTF-8", shq(brkBin)}
	for _, a := range args {
		q = append(q, shq(a))
	}
	return `s0=$(stty -g); ` + strings.Join(q, " ") + `; rc=$?; ` +
		`if [ "$(stty -g)" = "$s0" ]; then echo TTY-RESTORED; else echo TTY-CHANGED; fi; echo "brk exit $rc"; sleep 120`
}

var tuiRowRE = regexp.MustCompile(`(?m)^\s+0\s+4\s+grow\s+accepted\s`)

// TestTUITmux: the view in a 100×30 tmux pane shows the header, the four
// charts and a row per finished phase while the search runs; when it
// ends the terminal is as before (main screen, the same modes), and the
// text report with its verdict follows. On a busy box a phase may end
// otherwise (a busy suite run: phase 0 inconclusive, the client
// saturated while other processes used 1.6 cores, before the view showed
// a row): where brk judged a phase busy, the run is made again, then
// skipped (e2ekit.AgainOnBusy).
func TestTUITmux(t *testing.T) {
	testenv.Parallel(t, testenv.Waits)
	fx := startFixture(t, bench.FixtureConfig{})
	for attempt := 1; ; attempt++ {
		path := filepath.Join(t.TempDir(), "r.json")
		p := startTmux(t, 100, 30, tuiLine("--tui", fx.URL("/plain"), "--conn", "4", "--max", "2", "--phase", "1500ms",
			"--threads", "1", "--timeout", "1s", "--json", path))
		view := p.waitScreen("view with a phase row, or brk's exit", 20*time.Second, func(s string) bool {
			return strings.Contains(s, "brk exit ") || strings.Contains(s, "brk requests test") && tuiRowRE.MatchString(s)
		})
		if strings.Contains(view, "brk exit ") {
			all := p.screen(true)
			if e2ekit.AgainOnBusy(t, attempt, e2ekit.BusyPhases(readResult(t, path)), "brk ended before the view showed phase 0 held:\n"+all) {
				continue
			}
			t.Fatalf("brk ended before the view showed phase 0 held; the pane:\n%s", all)
		}
		for _, want := range []string{"ok/s", "success", "p99", "level", "phase     level  role    verdict", "Ctrl-C stops the run"} {
			if !strings.Contains(view, want) {
				t.Errorf("the view lacks %q:\n%s", want, view)
			}
		}
		if !regexp.MustCompile(`(?m)^ok/s\s+[\d,]+\s+\S*[▁▂▃▄▅▆▇█]`).MatchString(view) {
			t.Errorf("no ok/s bar in the view:\n%s", view)
		}
		if !p.alternate() {
			t.Errorf("the view is not on the alternate screen")
		}
		end := p.waitScreen("exit", 30*time.Second, func(s string) bool { return strings.Contains(s, "brk exit ") })
		if p.alternate() {
			t.Errorf("the alternate screen is still on after brk exited")
		}
		all := p.screen(true)
		if !strings.Contains(end, "TTY-RESTORED") {
			t.Errorf("want the terminal's modes restored:\n%s", all)
		}
		if !strings.Contains(end, "brk exit 0") {
			if !t.Failed() && e2ekit.AgainOnBusy(t, attempt, e2ekit.BusyPhases(readResult(t, path)), "not Done:\n"+all) {
				continue
			}
			t.Fatalf("want exit 0:\n%s", all)
		}
		lines := strings.Split(strings.TrimRight(all, "\n"), "\n")
		verdict := -1
		for i, l := range lines {
			if l == "TTY-RESTORED" && i > 0 {
				verdict = i - 1
			}
		}
		if verdict < 0 || lines[verdict] != "Done (8 concurrent requests)" {
			t.Errorf("the line before TTY-RESTORED is not the verdict Done (8 concurrent requests):\n%s", all)
		}
		if !strings.Contains(all, "brk requests test") || !strings.Contains(all, "phase 1  8 concurrent requests") {
			t.Errorf("no text report on the main screen:\n%s", all)
		}
		if strings.Contains(all, "Ctrl-C stops the run") {
			t.Errorf("the view's text is left on the main screen:\n%s", all)
		}
		return
	}
}

// TestTUIInterrupt: Ctrl-C typed in the view's terminal interrupts the
// run as without --tui (exit 130, Interrupted) and restores the terminal.
func TestTUIInterrupt(t *testing.T) {
	testenv.Parallel(t, testenv.Waits)
	fx := startFixture(t, bench.FixtureConfig{})
	p := startTmux(t, 100, 30, tuiLine("--tui", fx.URL("/plain"), "--conn", "4", "--max", "1", "--phase", "20s",
		"--threads", "1", "--timeout", "1s"))
	p.waitScreen("a running phase with a reading", 20*time.Second, func(s string) bool {
		return strings.Contains(s, "running…") && regexp.MustCompile(`(?m)^ok/s\s+[\d,]+\s+\S*[▁▂▃▄▅▆▇█]`).MatchString(s)
	})
	if out, err := p.tmux("send-keys", "C-c"); err != nil {
		t.Fatalf("tmux send-keys: %v\n%s", err, out)
	}
	end := p.waitScreen("exit", 15*time.Second, func(s string) bool { return strings.Contains(s, "brk exit ") })
	all := p.screen(true)
	if !strings.Contains(end, "brk exit 130") || !strings.Contains(end, "TTY-RESTORED") {
		t.Errorf("want exit 130 and the terminal's modes restored:\n%s", all)
	}
	if !strings.Contains(all, "\nInterrupted\n") {
		t.Errorf("no Interrupted verdict:\n%s", all)
	}
	if p.alternate() {
		t.Errorf("the alternate screen is still on after brk exited")
	}
}

// TestTUICtrlZ: Ctrl-Z stops brk with the main screen back (the view's
// alternate screen left, its modes restored as at its end), fg brings the
// view back, and the run ends with its report as usual. The pane's shell has job control
// (set -m); it resumes brk with fg 3 s after the stop. The terminal's
// modes after a stop are the shell's to set (an interactive shell restores
// its own), so the test checks the screen, not stty.
func TestTUICtrlZ(t *testing.T) {
	testenv.Parallel(t, testenv.Waits)
	fx := startFixture(t, bench.FixtureConfig{})
	q := []string{"LC_ALL=C.UTF-8", shq(brkBin)}
	for _, a := range []string{"--tui", fx.URL("/plain"), "--conn", "4", "--max", "1", "--phase", "8s", "--threads", "1", "--timeout", "1s"} {
		q = append(q, shq(a))
	}
	script := `set -m; ` + strings.Join(q, " ") + `; echo "stopped $?"; sleep 3; fg >/dev/null; echo "brk exit $?"; sleep 120`
	p := startTmux(t, 100, 30, "bash --norc -c "+shq(script))
	p.waitScreen("a running phase with a reading", 20*time.Second, func(s string) bool {
		return strings.Contains(s, "running…") && regexp.MustCompile(`(?m)^ok/s\s+[\d,]+\s+\S*[▁▂▃▄▅▆▇█]`).MatchString(s)
	})
	if out, err := p.tmux("send-keys", "C-z"); err != nil {
		t.Fatalf("tmux send-keys: %v\n%s", err, out)
	}
	stopped := p.waitScreen("the stop", 10*time.Second, func(s string) bool { return strings.Contains(s, "stopped ") })
	if p.alternate() {
		t.Errorf("the alternate screen is still on while brk is stopped:\n%s", stopped)
	}
	if !strings.Contains(stopped, "stopped 147") || strings.Contains(stopped, "Ctrl-C stops the run") {
		t.Errorf("want brk stopped (SIGSTOP, 147) and the view gone from the main screen:\n%s", stopped)
	}
	p.waitScreen("the view again after fg", 15*time.Second, func(s string) bool {
		return p.alternate() && strings.Contains(s, "brk requests test") && strings.Contains(s, "Ctrl-C stops the run")
	})
	end := p.waitScreen("exit", 30*time.Second, func(s string) bool { return strings.Contains(s, "brk exit ") })
	if p.alternate() {
		t.Errorf("the alternate screen is still on after brk exited")
	}
	// The stop counts against the phase it spans (its requests in
	// flight time out), so the verdict may be any: the report must follow.
	all := p.screen(true)
	if !regexp.MustCompile(`brk exit [013]\b`).MatchString(end) || !strings.Contains(all, "phase 0  4 concurrent requests") {
		t.Errorf("want exit 0, 1 or 3 and the text report:\n%s", all)
	}
}

// TestTUINotTerminal: with stderr not a terminal, --tui draws nothing
// (no escape sequence anywhere) and the run reports as without it: Done,
// or, on a box too busy for the client, the inconclusive verdict brk
// gives there (a busy suite run: "the client was saturated: workers 95 %
// busy", exit 3).
func TestTUINotTerminal(t *testing.T) {
	testenv.Parallel(t, testenv.Waits)
	fx := startFixture(t, bench.FixtureConfig{})
	args := []string{"--tui", fx.URL("/plain"), "--conn", "4", "--max", "1", "--phase", "1500ms", "--threads", "1", "--timeout", "1s"}
	t.Run("pipes", func(t *testing.T) {
		testenv.Parallel(t, testenv.Waits)
		r := runBrk(t, args...)
		if !doneOrClientBusy(r) {
			t.Errorf("exit %d, want 0 (or 3, or 1 with its phase busy, on a busy box) and the verdict\n%s", r.code, r)
		}
		if strings.Contains(r.stdout+r.stderr, "\x1b") {
			t.Errorf("escape sequences without a terminal\n%q", r.stdout+r.stderr)
		}
		if r.stderr != "" {
			t.Errorf("stderr %q, want nothing", r.stderr)
		}
	})
	t.Run("stdout a terminal", func(t *testing.T) {
		testenv.Parallel(t, testenv.Waits)
		errFile := t.TempDir() + "/stderr.txt"
		q := []string{shq(brkBin)}
		for _, a := range args {
			q = append(q, shq(a))
		}
		r := runScript(t, strings.Join(q, " ")+" 2>"+shq(errFile))
		b, err := os.ReadFile(errFile)
		if err != nil {
			t.Fatal(err)
		}
		if !doneOrClientBusy(r) {
			t.Errorf("exit %d, want 0 (or 3, or 1 with its phase busy, on a busy box) and the verdict on the terminal\n%s", r.code, r)
		}
		if strings.Contains(r.stdout, "\x1b") || bytes.Contains(b, []byte("\x1b")) {
			t.Errorf("escape sequences with stderr a file\n--- terminal:\n%q\n--- stderr:\n%q", r.stdout, b)
		}
	})
}

// doneOrClientBusy reports whether r ended Done at 4 concurrent requests,
// or inconclusive where brk said the box or the client was too busy, or
// broken where brk said its one phase ran on a busy box (a busy suite run:
// 4 timeouts of 1,407 at 1 s, "busy: 1 of 1 phases ran on a busy box …
// the break is the server's under that load").
func doneOrClientBusy(r result) bool {
	return r.code == 0 && strings.Contains(r.stdout, "Done (4 concurrent requests)") ||
		busyInconclusive(r) || r.code == 3 && strings.Contains(r.stdout, "Inconclusive: the client was saturated") ||
		r.code == 1 && strings.Contains(r.stdout, "busy: 1 of 1 phases ran on a busy box")
}

// TestTUIRefused: --tui with --quiet, and on brk ab, is refused before
// any traffic.
func TestTUIRefused(t *testing.T) {
	u := "http://127.0.0.1:9/"
	for _, args := range [][]string{{"--tui", "--quiet", u}, {"conn", "--tui", "--quiet", u}, {"ab", "--tui", u, u}} {
		r := runBrk(t, args...)
		if r.code != 2 || !strings.Contains(r.stderr, "--tui") || strings.Count(strings.TrimRight(r.stderr, "\n"), "\n") != 0 {
			t.Errorf("want exit 2 and one line naming --tui\n%s", r)
		}
	}
}

// TestTUITerminfo: the screen asks the terminal for no input of any kind
// (a keyboard protocol would turn Ctrl-C into an escape sequence instead
// of SIGINT), even for an xterm, for which tcell asks for them all.
func TestTUITerminfo(t *testing.T) {
	t.Setenv("TERM", "xterm-256color")
	asks := []string{"\x1b[>1u", "\x1b[>4;2m", "\x1b[?9001h", "\x1b[?1004h", "\x1b[?2004h", "\x1b[?1000h", "\x1b[?1006h"}
	draw := func(ti func() (*terminfo.Terminfo, error)) string {
		t.Helper()
		info, err := ti()
		if err != nil {
			t.Fatal(err)
		}
		tty := &fakeTty{drained: make(chan struct{})}
		s, err := tcell.NewTerminfoScreenFromTtyTerminfo(tty, info)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Init(); err != nil {
			t.Fatal(err)
		}
		s.SetContent(0, 0, 'x', nil, tcell.StyleDefault)
		s.Show()
		s.Fini()
		return tty.String()
	}
	plain := draw(func() (*terminfo.Terminfo, error) { return tcell.LookupTerminfo("xterm-256color") })
	if !strings.Contains(plain, "\x1b[>1u") {
		t.Fatalf("control: tcell's own xterm screen no longer asks for the kitty keyboard protocol; this test tells nothing\n%q", plain)
	}
	ours := draw(tuiTerminfo)
	for _, a := range asks {
		if strings.Contains(ours, a) {
			t.Errorf("the view's screen writes %q, which makes the terminal send input\n%q", a, ours)
		}
	}
	if !strings.Contains(ours, "\x1b[?1049h") || !strings.Contains(ours, "\x1b[?1049l") {
		t.Errorf("the view's screen does not enter and leave the alternate screen\n%q", ours)
	}
}

// fakeTty is a tcell.Tty that records what is written to it.
type fakeTty struct {
	mu      sync.Mutex
	out     bytes.Buffer
	drained chan struct{}
	once    sync.Once
}

func (f *fakeTty) Start() error { return nil }
func (f *fakeTty) Stop() error  { return nil }
func (f *fakeTty) Drain() error {
	f.once.Do(func() { close(f.drained) })
	return nil
}
func (f *fakeTty) NotifyResize(func()) {}
func (f *fakeTty) WindowSize() (tcell.WindowSize, error) {
	return tcell.WindowSize{Width: 80, Height: 24}, nil
}
func (f *fakeTty) Read([]byte) (int, error) { <-f.drained; return 0, io.EOF }
func (f *fakeTty) Write(b []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.out.Write(b)
}
func (f *fakeTty) Close() error { return nil }
func (f *fakeTty) String() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.out.String()
}

// simRows is the simulated screen's text, one string per row, read
// under the view's lock (GetContents hands out the screen's own cells,
// which a redraw on a resize writes).
func simRows(v *tuiView, s tcell.SimulationScreen) []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	cells, w, h := s.GetContents()
	rows := make([]string, h)
	for y := range h {
		var b strings.Builder
		for x := range w {
			r := cells[y*w+x].Runes
			if len(r) == 0 {
				b.WriteByte(' ')
			} else {
				b.WriteString(string(r))
			}
		}
		rows[y] = strings.TrimRight(b.String(), " ")
	}
	return rows
}

// simView is a requests test's view of plan on an 80×24 simulated
// screen, its workers started; the text it writes goes to text.
func simView(t *testing.T, plan brk.Plan) (v *tuiView, sim tcell.SimulationScreen, text *bytes.Buffer) {
	t.Helper()
	sim = tcell.NewSimulationScreen("UTF-8")
	if err := sim.Init(); err != nil {
		t.Fatal(err)
	}
	sim.SetSize(80, 24)
	text = &bytes.Buffer{}
	v = newTUIView(&report.Text{W: text, Test: brk.ModeRequests, Target: brk.Target{URL: "http://127.0.0.1:9/plain"}, Plan: plan},
		sim, func(s string) string { return s })
	t.Cleanup(v.close)
	v.WorkersStarted(1)
	return v, sim, text
}

// TestTUILayout: on an 80×24 screen, after 12 phases, the view shows the
// header, the four charts (a column per reading), the last phases with a
// count of the earlier ones, the running phase and the key line at the
// bottom; resized to 100×30 it is redrawn to the new size.
func TestTUILayout(t *testing.T) {
	v, sim, text := simView(t, brk.Plan{Conns: 8, Start: 1, Pace: 1, Max: 13, Phase: time.Second, Timeout: 100 * time.Millisecond, Accept: 99.99})
	const phases = 12
	for i := range phases + 1 {
		level := 8 * (i + 1)
		v.PhaseStarted(brk.PhaseStart{Index: i, Level: level, Role: "ramp", Depth: i + 1})
		g := brk.Progress{Phase: i, Level: level, Elapsed: time.Second, Succeeded: uint64(100 * (i + 1)), SuccessPerSec: float64(100 * (i + 1)), MeanOutstanding: float64(level)}
		g.Latency[40] = uint64(100 * (i + 1))
		v.Progress(g)
		if i == phases {
			break // the running phase
		}
		ps := brk.PhaseStats{Index: i, Level: level, Role: "ramp", Depth: i + 1, Accepted: i < phases-1, SuccessPct: 100,
			RequestsPerSec: float64(100 * (i + 1)), LatencyMs: brk.Latency{P99: 12.5}, Counts: brk.Counts{Attempted: 10, Succeeded: 10}}
		if !ps.Accepted {
			ps.SuccessPct = 90
			ps.Reason = fmt.Sprintf("success 90%% (9 of 10) is below --accept 99.99%% at %d concurrent requests", level)
		}
		v.PhaseFinished(&ps)
	}
	rows := simRows(v, sim)
	screen := strings.Join(rows, "\n")
	if len(rows) != 24 {
		t.Fatalf("%d rows, want 24", len(rows))
	}
	if !strings.HasPrefix(rows[0], "brk requests test  http://127.0.0.1:9/plain") {
		t.Errorf("row 0 %q, want the header's first line\n%s", rows[0], screen)
	}
	if !strings.HasPrefix(rows[23], "Ctrl-C stops the run") || !strings.HasSuffix(rows[23], "…") {
		t.Errorf("row 23 %q, want the key line cut at 80 columns\n%s", rows[23], screen)
	}
	for _, name := range []string{"ok/s", "success", "p99", "level"} {
		var row string
		for _, r := range rows {
			if strings.HasPrefix(r, name+" ") {
				row = r
			}
		}
		if row == "" {
			t.Errorf("no %s chart\n%s", name, screen)
			continue
		}
		if n := len([]rune(row)) - 18; n != phases+1 {
			t.Errorf("%s chart row %q has %d columns, want one per reading (%d)\n%s", name, row, n, phases+1, screen)
		}
	}
	for _, want := range []string{
		"phase 12 ramp  104 concurrent requests  1/1 s",
		"… 8 earlier phases", // 4 rows left for phases at 24 rows: 8, 9, 10, 11
		"   11        96  ramp    REJECTED       1,200      90 %   12.5 ms  success 90% …",
		"   12       104  ramp    running…",
	} {
		if !strings.Contains(screen, want) {
			t.Errorf("the view lacks %q\n%s", want, screen)
		}
	}
	if !strings.Contains(text.String(), "phase 11") {
		t.Errorf("the text observer did not get the phases\n%s", text.String())
	}

	sim.SetSize(100, 30)
	if err := sim.PostEvent(tcell.NewEventResize(100, 30)); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		rows = simRows(v, sim)
		if len(rows) == 30 && strings.HasSuffix(rows[29], "follows the view") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not redrawn at 100×30 within 5 s\n%s", strings.Join(rows, "\n"))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestTUIShortPhases: phases shorter than a second have no reading of
// their own; each finished one still gets a column (its whole phase's),
// and a phase that had readings gets none more.
func TestTUIShortPhases(t *testing.T) {
	v, sim, _ := simView(t, brk.Plan{Conns: 8, Start: 1, Pace: 1, Max: 4, Phase: 400 * time.Millisecond, Timeout: 100 * time.Millisecond, Accept: 99.99})
	finish := func(i int, pct float64) {
		ps := brk.PhaseStats{Index: i, Level: 8 * (i + 1), Role: "ramp", Depth: i + 1, Accepted: pct == 100, SuccessPct: pct,
			RequestsPerSec: 300, LatencyMs: brk.Latency{P99: 40}, Counts: brk.Counts{Attempted: 10, Succeeded: uint64(pct / 10)}}
		v.PhaseFinished(&ps)
	}
	for i := range 3 {
		v.PhaseStarted(brk.PhaseStart{Index: i, Level: 8 * (i + 1), Role: "ramp", Depth: i + 1})
		finish(i, 100)
	}
	// A phase with a reading: that reading is its column.
	v.PhaseStarted(brk.PhaseStart{Index: 3, Level: 32, Role: "ramp", Depth: 4})
	v.Progress(brk.Progress{Phase: 3, Level: 32, Elapsed: time.Second, Succeeded: 5, SuccessPerSec: 5})
	finish(3, 50)
	if len(v.samples) != 4 {
		t.Fatalf("%d columns for 4 phases, want one each: %+v", len(v.samples), v.samples)
	}
	if c := v.samples[0]; c.okps != 300 || c.success != 100 || c.p99 != 40*time.Millisecond || c.level != 8 {
		t.Errorf("a short phase's column %+v, want its totals (300 ok/s, 100 %%, p99 40 ms, level 8)", c)
	}
	rows := simRows(v, sim)
	for _, r := range rows {
		// The charts' lower rows, whose every column shows a bar.
		if strings.Contains(r, "0–100 %") || strings.Contains(r, "log, max") {
			if n := len([]rune(r)) - 18; n != 4 {
				t.Errorf("chart row %q has %d columns, want 4\n%s", r, n, strings.Join(rows, "\n"))
			}
		}
	}
}

// TestTUISecondsThatBreakTheSLA: a second whose success fell below
// Plan.Accept is marked in the success chart, and one whose p99 rose above
// Plan.MaxP99 in the p99 chart, whatever the phase's verdict; the other
// seconds, and the other charts, keep the phase's colour.
func TestTUISecondsThatBreakTheSLA(t *testing.T) {
	v, sim, _ := simView(t, brk.Plan{Conns: 8, Start: 1, Max: 1, Phase: 3 * time.Second, Timeout: time.Second, Accept: 99, MaxP99: 50 * time.Millisecond})
	v.PhaseStarted(brk.PhaseStart{Index: 0, Level: 8, Role: "ramp", Depth: 1})
	// Second 1: 100 % and fast; second 2: 95 % (5 failed) and fast; second
	// 3: 100 % and slow (p99 in a bucket near 200 ms).
	var g brk.Progress
	for i, sec := range []struct {
		ok, failed uint64
		bucket     int
	}{{100, 0, 40}, {95, 5, 40}, {100, 0, metrics.CoarseIndex(200_000)}} {
		g.Phase, g.Level, g.Elapsed = 0, 8, time.Duration(i+1)*time.Second
		g.Succeeded += sec.ok
		g.SuccessPerSec = float64(sec.ok)
		g.Failed.Timeout += sec.failed
		g.Latency[sec.bucket] += sec.ok
		v.Progress(g)
	}
	style := func(prefix string, col int) tcell.Style {
		v.mu.Lock()
		defer v.mu.Unlock()
		cells, w, h := sim.GetContents()
		for y := range h {
			row := ""
			for x := range 16 {
				if r := cells[y*w+x].Runes; len(r) > 0 {
					row += string(r)
				}
			}
			if strings.HasPrefix(row, prefix) {
				// The chart's bottom row is the next one.
				return cells[(y+1)*w+18+col].Style
			}
		}
		t.Fatalf("no %s chart", prefix)
		return tcell.StyleDefault
	}
	for _, c := range []struct {
		chart  string
		col    int
		breach bool
	}{
		{"success", 0, false}, {"success", 1, true}, {"success", 2, false},
		{"p99", 0, false}, {"p99", 1, false}, {"p99", 2, true},
		{"ok/s", 1, false}, {"ok/s", 2, false},
	} {
		if got := style(c.chart, c.col) == tuiBreach; got != c.breach {
			t.Errorf("%s chart, second %d: marked %v, want %v", c.chart, c.col+1, got, c.breach)
		}
	}
}
