package main

import (
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
