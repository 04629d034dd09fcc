package main

import (
	"fmt"
	"os"

	"github.com/brk-bench/brk"
)

// rateLevels are the rate test's level flags, in requests/s.
type rateLevels struct {
	Start int  `help:"Offered requests/s in phase 0 (default: --pace, or 100 for the search)."`
	Pace  *int `placeholder:"INT" help:"Requests/s added each phase: a linear ramp. Without it brk searches for the break (--growth, --resolution, --budget)."`
	Max   int  `help:"Ceiling in requests/s; reaching it ends the run Done."`
}

type rateCmd struct {
	URL string `arg:"" optional:"" help:"http(s)://host[:port]/path (left out with --targets)"`
	rateLevels
	loadFlags
	targetsFlag
	latencyFlag
	shardFlags
	promFlags
	RateDepth int    `help:"Most outstanding requests per connection (default 1 over HTTP/1.1: no pipelining unless asked; 128 streams with --http2, never more than the server's stream limit)."`
	Arrivals  string `default:"uniform" enum:"uniform,poisson" help:"Arrival schedule: uniform (arrival k at phase start + k/rate) or poisson (exponential gaps)."`
	Seed      uint64 `placeholder:"N" help:"Seed of the poisson schedule, 1 to 2^53-1, for a repeatable run (default: a random one, reported in the JSON)."`
}

// Run runs the rate test: --start, --pace and --max are requests/s
// offered on a schedule against the clock over --conn connections.
func (c *rateCmd) Run(e *env) error {
	if err := c.refuseUnserved(c.Start, c.Pace); err != nil {
		return err
	}
	c.warn(e.stderr)
	if c.RateDepth < 0 {
		return refuse("--rate-depth must be at least 1")
	}
	if c.Seed != 0 && c.Arrivals != "poisson" {
		return refuse("--seed applies to --arrivals poisson")
	}
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
	depth := c.RateDepth
	if depth == 0 {
		depth = t.Proto().DefaultRateDepth()
	}
	p, err := c.plan(brk.Rate{Conns: c.Conn, Depth: depth, Arrivals: c.Arrivals, Seed: c.Seed}, c.Start, c.Pace, c.Max)
	if err != nil {
		return err
	}
	if err := c.shardFlags.apply(&p); err != nil {
		return err
	}
	if err := brk.Validate(t, p); err != nil {
		return refuseLib(err)
	}
	if w := brk.RateSlotWarning(p); w != nil {
		fmt.Fprintf(e.stderr, "brk: warning: %s\n", flagWords(w))
	}
	e.verbose, e.latency, e.tui = c.Verbose, c.Latency, c.TUI
	e.prom = &c.promFlags
	return runTest(e, t, p, c.JSON, c.Report, c.Quiet)
}
