package report

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/brk-bench/brk"
	"github.com/brk-bench/brk/internal/judge"
)

// Text is a brk.Observer that writes a run's human text to W as it runs:
// the conditions once the workers have started (WriteHeader), then one
// block per finished phase (WritePhase). Test is the test mode:
// it says what a level counts.
type Text struct {
	W      io.Writer
	Test   brk.Mode
	Target brk.Target
	Plan   brk.Plan
	// Verbose writes each phase's full block (WritePhase) instead of one
	// line (WritePhaseLine).
	Verbose bool
	// DefaultSLA says in the header that the plan's SLA is the command
	// line's default, given when no SLA flag is.
	DefaultSLA bool
}

// WorkersStarted writes the run's conditions.
func (x *Text) WorkersStarted(threads int) {
	writeHeader(x.W, x.Test, x.Target, x.Plan, threads, x.DefaultSLA)
}

// PhaseStarted writes nothing: a phase's block follows its end.
func (x *Text) PhaseStarted(brk.PhaseStart) {}

// Progress writes nothing: the text follows each phase's end (Live
// writes the live line).
func (x *Text) Progress(brk.Progress) {}

// PhaseFinished writes the phase's line, or its block when Verbose.
func (x *Text) PhaseFinished(s *brk.PhaseStats) {
	if x.Verbose {
		WritePhase(x.W, x.Test, s)
		return
	}
	if s.Index == 0 {
		fmt.Fprintln(x.W)
	}
	p := x.Plan
	p.DefaultsFor(x.Test)
	WritePhaseLine(x.W, x.Test, s, p.Conns, x.Target.Proto())
}

// Live is a Text that also keeps one live progress line on Out, rewritten
// in place (carriage return) each time the engine takes its once-a-second
// reading of the running phase (its Progress), and cleared before a
// phase's text. The CLI attaches it only when stderr is a terminal; Width
// bounds the line (0: 100 columns).
type Live struct {
	*Text
	Out   io.Writer
	Width int
	shown bool
	at    brk.PhaseStart // the running phase's start: its bracket so far and budget left
}

// PhaseStarted keeps the phase's start for the live line.
func (l *Live) PhaseStarted(p brk.PhaseStart) { l.at = p }

// Progress rewrites the live line (ProgressLine). It is called from the
// engine's reporter goroutine, not the caller's; the caller's goroutine
// writes only between phases, when no reading is taken.
func (l *Live) Progress(g brk.Progress) {
	phase := l.Plan.Phase
	if phase == 0 {
		phase = 10 * time.Second
	}
	width := l.Width
	if width <= 0 {
		width = 100
	}
	line := ProgressLine(g, l.Test, phase, l.at)
	if r := []rune(line); len(r) > width-1 {
		line = string(r[:width-1])
	}
	fmt.Fprintf(l.Out, "\r\x1b[K%s", line)
	l.shown = true
}

// PhaseFinished clears the live line, then writes the phase's text.
func (l *Live) PhaseFinished(s *brk.PhaseStats) {
	if l.shown {
		fmt.Fprint(l.Out, "\r\x1b[K")
		l.shown = false
	}
	l.Text.PhaseFinished(s)
}

// ProgressLine is the live reading of a running phase in one line: the
// phase and its level, elapsed of the phase's length, the bracket so far
// and at most how much of the budget is left (from the phase's start,
// at), the requests in flight (the mean over the last second), success
// so far, successes/s over the last second, and only the failures so far.
func ProgressLine(g brk.Progress, test brk.Mode, phase time.Duration, at brk.PhaseStart) string {
	var b strings.Builder
	fmt.Fprintf(&b, "… phase %d  %d %s  %.0f/%.0f s", g.Phase, g.Level, test.Unit(), g.Elapsed.Seconds(), phase.Seconds())
	switch {
	case at.Held > 0 && at.Broke > 0:
		fmt.Fprintf(&b, "  bracket %d–%d", at.Held, at.Broke)
	case at.Held > 0:
		fmt.Fprintf(&b, "  held %d", at.Held)
	case at.Broke > 0:
		fmt.Fprintf(&b, "  broke at %d", at.Broke)
	}
	if at.BudgetLeft > 0 {
		fmt.Fprintf(&b, "  ≤ %s left", judge.ShortDuration(max(at.BudgetLeft-g.Elapsed, 0).Round(time.Second)))
	}
	fmt.Fprintf(&b, "  in flight %.0f", g.MeanOutstanding)
	failed := uint64(0)
	for _, name := range brk.FailureCategories() {
		failed += g.Failed.Failure(name)
	}
	if done := g.Succeeded + failed; done > 0 {
		fmt.Fprintf(&b, "  success %s", Pct(100*float64(g.Succeeded)/float64(done)))
	}
	fmt.Fprintf(&b, "  %s ok/s", num(g.SuccessPerSec))
	if g.P99 > 0 {
		fmt.Fprintf(&b, "  p99 %s", Ms(float64(g.P99)/1e6))
	}
	if g.Scheduled > 0 {
		fmt.Fprintf(&b, "  %d scheduled, %d written", g.Scheduled, g.Written)
	}
	for _, name := range brk.FailureCategories() {
		if n := g.Failed.Failure(name); n > 0 {
			fmt.Fprintf(&b, "  %s: %d", name, n)
		}
	}
	return b.String()
}

// WriteProgress writes a live reading of the running phase as one line:
// phase, level, elapsed time, successes and successes/s, mean outstanding
// over the last second, and the failures so far by category.
func WriteProgress(w io.Writer, g brk.Progress) {
	if g.Scheduled > 0 {
		// The rate test: the schedule's progress, and what waits for a
		// slot or a response.
		fmt.Fprintf(w, "  … phase %d, level %d requests/s, %4.1f s: %d scheduled, %d written, %d ok (%.0f/s), outstanding %.1f, failures: %s\n",
			g.Phase, g.Level, g.Elapsed.Seconds(), g.Scheduled, g.Written, g.Succeeded, g.SuccessPerSec, g.MeanOutstanding, failureList(g.Failed))
		return
	}
	fmt.Fprintf(w, "  … phase %d, level %d, %4.1f s: %d ok (%.0f/s), outstanding %.1f, failures: %s\n",
		g.Phase, g.Level, g.Elapsed.Seconds(), g.Succeeded, g.SuccessPerSec, g.MeanOutstanding, failureList(g.Failed))
}
