package main

import (
	"fmt"
	"io"
	"os"

	"brk"
)

// progressPrinter adds the live line: once a second on stderr, never on
// stdout, only when stderr is a terminal and --quiet is not given.
type progressPrinter struct {
	*printer
	live io.Writer
}

func (p *progressPrinter) Progress(g brk.Progress) {
	f := g.Failed
	fmt.Fprintf(p.live, "  … phase %d, level %d, %4.1f s: %d ok (%.0f/s), outstanding %.1f, failures: timeout %d, transport %d, abandoned %d, connect %d, connect_timeout %d, status %d, body %d, protocol %d\n",
		g.Phase, g.Level, g.Elapsed.Seconds(), g.Succeeded, g.SuccessPerSec, g.MeanOutstanding,
		f.Timeout, f.Transport, f.Abandoned, f.Connect, f.ConnectTimeout, f.Status, f.Body, f.Protocol)
}

// observer picks the observer for a run.
func observer(p *printer, stderr io.Writer, quiet bool) brk.Observer {
	if quiet {
		return p
	}
	if f, ok := stderr.(*os.File); !ok || !isTerminal(f.Fd()) {
		return p
	}
	return &progressPrinter{printer: p, live: stderr}
}
