package main

import (
	"fmt"
	"io"

	"github.com/brk-bench/brk"
	"github.com/brk-bench/brk/report"
)

// observer picks the observer for a run: the human text, plus one live
// progress line rewritten once a second on stderr, never on stdout, only
// when stderr is a terminal and --quiet is not given.
func observer(text *report.Text, stderr io.Writer, quiet bool) brk.Observer {
	if quiet {
		return text
	}
	f, ok := terminal(stderr)
	if !ok {
		return text
	}
	return &report.Live{Text: text, Out: stderr, Width: termWidth(f.Fd())}
}

// liveRun is the live side of a run: its observer, and for --tui the
// view and the writer that holds the human text while the view owns the
// terminal.
type liveRun struct {
	view *tuiView
	hold *holdWriter
}

// holdText is the writer the run's human text goes to: text itself, or
// with --tui, when both stderr (the view's terminal) and text are
// terminals, a writer that holds the text until end (it would scribble
// over the view). Piped or redirected, the text streams as without --tui.
func (l *liveRun) holdText(e *env, text io.Writer) io.Writer {
	if !e.tui {
		return text
	}
	if _, ok := terminal(e.stderr); !ok {
		return text
	}
	if _, ok := terminal(text); !ok {
		return text
	}
	l.hold = &holdWriter{w: text, holding: true}
	return l.hold
}

// observer is the run's observer: with --tui the view on stderr's
// terminal, falling back to observer's (the progress line, or none) when
// stderr is not a terminal or the view cannot start (said on stderr).
func (l *liveRun) observer(e *env, text *report.Text, quiet bool) brk.Observer {
	if e.tui && !quiet {
		if _, ok := terminal(e.stderr); ok {
			v, err := startTUI(text, e.stderr, e.secrets.String)
			if err == nil {
				l.view = v
				return v
			}
			l.end() // nothing is held without a view
			fmt.Fprintf(e.stderr, "brk: --tui: %v; showing the progress line instead\n", err)
		}
	}
	return observer(text, e.stderr, quiet)
}

// end ends the view, restoring the terminal, then writes the text it
// held. It may be called more than once.
func (l *liveRun) end() {
	if l.view != nil {
		l.view.close()
	}
	if l.hold != nil {
		l.hold.release()
	}
}
