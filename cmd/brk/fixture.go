package main

import (
	"fmt"
	"os"
	"time"

	"github.com/brk-bench/brk"
	"github.com/brk-bench/brk/bench"
	"github.com/brk-bench/brk/report"
)

type fixtureCmd struct {
	Listen      string        `default:"127.0.0.1:8080" help:"Listen address."`
	Capacity    int           `help:"At most this many requests in service at once (0 = unlimited); the rest queue."`
	Service     time.Duration `help:"Service time of each request."`
	DelayDist   string        `help:"Draw each service time from uniform:A-B (a slow upstream) or lognormal:MEDIAN,SIGMA (a heavy tail)." placeholder:"uniform:A-B"`
	KeepWorking bool          `help:"Keep serving a request whose client has gone (a backend that cannot cancel its work): after a timeout its slot stays taken for the whole service time."`
	TLS         bool          `name:"tls" help:"Serve HTTPS (ALPN h2 and http/1.1) with an ephemeral self-signed certificate; plain HTTP serves HTTP/1.1 and h2c (prior knowledge)."`
	CAOut       string        `name:"ca-out" help:"With --tls, write the certificate (its own CA) as PEM to PATH, for --cacert." placeholder:"PATH"`
	Child       bool          `help:"Speak the fixture contract on stdin/stdout (brk bench's child); the configuration comes from stdin."`
}

func (c *fixtureCmd) Run(e *env) error {
	if c.Child {
		return c.serveChild(e)
	}
	err := bench.ServeFixture(e.ctx, bench.FixtureConfig{
		Addr: c.Listen, Capacity: c.Capacity, Service: c.Service, DelayDist: c.DelayDist,
		KeepWorking: c.KeepWorking, TLS: c.TLS, CAPath: c.CAOut,
	}, e.stdout)
	if err != nil {
		return refuse("%v", err)
	}
	return nil
}

type demoCmd struct {
	Phase   time.Duration `default:"3s" help:"Phase length."`
	Threads int           `default:"1" help:"Client worker threads."`
	HTTP2   bool          `name:"http2" help:"Run the demo over HTTP/2 (h2c): the level counts concurrent streams."`
}

// Run starts the fixture of bench.Demo (capacity K=4, service D=50ms) and
// drives 8 connections against it: with C requests outstanding the latency
// is C·D/K, so level 8·d has latency 100·d ms. With a 380 ms timeout, 3 per
// connection (300 ms) passes and 4 (400 ms) breaks.
func (c *demoCmd) Run(e *env) error {
	d := bench.Demo()
	// The fixture runs as a child process: in this process it would share
	// the Go runtime (and its scheduler) with the client's workers.
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	fx, err := bench.StartFixtureProcess(exe, d.Fixture)
	if err != nil {
		return err
	}
	defer fx.Close()
	fmt.Fprintf(e.stdout, "demo: fixture at %s with capacity %d and service %s: latency ≈ concurrent × %s / %d\n",
		fx.Addr(), d.Fixture.Capacity, d.Fixture.Service, d.Fixture.Service, d.Fixture.Capacity)
	fmt.Fprintf(e.stdout, "demo: predicted break between %d and %d concurrent requests (timeout %s)\n\n",
		d.Plan.Conns*d.LastPass, d.Plan.Conns*(d.LastPass+1), d.Plan.Timeout)
	p := d.Plan
	p.Phase = c.Phase
	p.Threads = c.Threads
	res, err := runTestResult(e, brk.Target{URL: fx.URL("/plain"), ExpectBody: []byte("ok"), Protocol: http2Flag(c.HTTP2)}, p, "", "", false)
	if err != nil || res.Verdict == brk.VerdictInterrupted {
		return err
	}
	// The demo's answer is whether brk found the break the model
	// predicts: exit 0 when it did, 1 (or 3) with the reason when not.
	lo, hi := d.Plan.Conns*d.LastPass, d.Plan.Conns*(d.LastPass+1)
	if res.Verdict == brk.VerdictBroken && res.LastAccepted != nil && *res.LastAccepted == lo && res.FirstRejected != nil && *res.FirstRejected == hi {
		fmt.Fprintf(e.stderr, "demo: brk found the predicted break, between %d and %d concurrent requests (exit 0)\n", lo, hi)
		e.code = exitDone
		return nil
	}
	fmt.Fprintf(e.stderr, "demo: the break was predicted between %d and %d concurrent requests; this run ended %s (a loaded machine breaks early; run again with the machine idle)\n",
		lo, hi, report.FinalLine(res))
	if e.code == exitDone {
		e.code = exitBroken
	}
	return nil
}
