package report

import (
	"fmt"
	"io"

	"github.com/brk-bench/brk"
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
}

// WorkersStarted writes the run's conditions.
func (x *Text) WorkersStarted(threads int) { WriteHeader(x.W, x.Test, x.Target, x.Plan, threads) }

// PhaseStarted writes nothing: a phase's block follows its end.
func (x *Text) PhaseStarted(brk.Phase) {}

// PhaseFinished writes the phase's line, or its block when Verbose.
func (x *Text) PhaseFinished(s *brk.PhaseStats) {
	if x.Verbose {
		WritePhase(x.W, x.Test, s)
		return
	}
	if s.Index == 0 {
		fmt.Fprintln(x.W)
	}
	WritePhaseLine(x.W, x.Test, s)
}

// Live is a Text that also writes the live progress line to Out each time
// the engine takes its once-a-second reading of the running phase: it is a
// brk.ProgressObserver. The CLI attaches it only when stderr is a terminal.
type Live struct {
	*Text
	Out io.Writer
}

// Progress writes one live line (WriteProgress). It is called from the
// engine's reporter goroutine, not the caller's.
func (l *Live) Progress(g brk.Progress) { WriteProgress(l.Out, g) }

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
