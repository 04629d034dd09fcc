package main

import (
	"os"

	"github.com/brk-bench/brk"
)

type connCmd struct {
	URL string `arg:"" optional:"" help:"http(s)://host[:port]/path (left out with --targets)"`
	levelFlags
	loadFlags
	targetsFlag
	latencyFlag
	shardFlags
	promFlags
	Requests int  `default:"1" help:"Requests per connection, written one at a time; the last carries Connection: close."`
	NoResume bool `help:"For https://, make every handshake a full one (no session resumption)."`
	// KeepAlive is brk.Plan.KeepAlive.
	KeepAlive bool `name:"keep-alive" help:"Keep each connection open, carrying requests one at a time until the phase's admission ends (then closed once its last response is in), instead of --requests each: a level of N connections is N requests in flight, one on each."`
}

// Run runs the connections test: --start, --pace and --max count
// concurrent connections.
func (c *connCmd) Run(e *env) error {
	if err := c.refuseUnserved(c.Start, c.Pace); err != nil {
		return err
	}
	c.warn(e.stderr)
	if err := c.checkURL(c.URL); err != nil {
		return err
	}
	t, err := c.target(c.URL, os.Stdin)
	if err != nil {
		return err
	}
	if err := c.targetsFlag.apply(&t, os.Stdin); err != nil {
		return err
	}
	t.TLS.NoResume = c.NoResume
	p, err := c.plan(brk.Connections{Requests: c.Requests, KeepAlive: c.KeepAlive}, c.Start, c.Pace, c.Max)
	if err != nil {
		return err
	}
	if c.Requests < 1 {
		return refuse("--requests must be at least 1")
	}
	if err := c.shardFlags.apply(&p); err != nil {
		return err
	}
	e.verbose, e.latency, e.tui = c.Verbose, c.Latency, c.TUI
	e.prom = &c.promFlags
	return runTest(e, t, p, c.JSON, c.Report, c.Quiet)
}
