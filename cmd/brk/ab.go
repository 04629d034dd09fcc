package main

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/brk-bench/brk"
	"github.com/brk-bench/brk/report"
)

type abCmd struct {
	URLA string `arg:"" name:"url-a" help:"http(s)://host[:port]/path of side A"`
	URLB string `arg:"" name:"url-b" help:"http(s)://host[:port]/path of side B"`
	levelFlags
	loadFlags
	Connections bool `help:"Run the connections test on both sides instead of the requests test."`
	Requests    int  `default:"1" help:"With --connections: requests per connection."`
}

// Run runs the same plan against two targets, a phase of each in turn.
func (c *abCmd) Run(e *env) error {
	if err := c.refuseUnserved(c.Start, c.Pace); err != nil {
		return err
	}
	c.warn(e.stderr)
	if c.Report != "" {
		return refuse("brk ab writes no HTML report; use --json for both sides' reports")
	}
	if c.TUI {
		return refuse("brk ab has no live view (--tui); it applies to brk, brk conn and brk rate")
	}
	var load brk.Load = brk.Requests{Conns: c.Conn}
	if c.Connections {
		load = brk.Connections{Requests: c.Requests}
	}
	p, err := c.plan(load, c.Start, c.Pace, c.Max)
	if err != nil {
		return err
	}
	if c.Requests < 1 {
		return refuse("--requests must be at least 1")
	}
	a, err := c.target(c.URLA, os.Stdin)
	if err != nil {
		return err
	}
	b, err := c.target(c.URLB, bytes.NewReader(nil))
	if err != nil {
		return err
	}
	b.Body = a.Body // --body-file - was read once, for both sides
	for _, t := range []brk.Target{a, b} {
		if err := brk.Validate(t, p); err != nil {
			return refuseLib(err)
		}
	}
	// The plan as AB reads it, which the report's words read.
	if p, err = p.Resolved(); err != nil {
		return refuseLib(err)
	}
	mode := p.Mode()
	text := e.stdout
	if c.JSON == "-" {
		text = e.stderr
	}
	var jsonFile *reportFile
	if c.JSON != "" && c.JSON != "-" {
		f, err := createReport(c.JSON)
		if err != nil {
			return refuse("--json: %v", err)
		}
		defer f.abort()
		jsonFile = f
	}
	addTargetSecrets(e.secrets, a)
	addTargetSecrets(e.secrets, b)
	side := func(name string, t brk.Target) brk.Observer {
		return redacting(e.secrets, &report.Text{W: &prefixWriter{w: text, prefix: name + "│ ", bol: true}, Test: mode, Target: t, Plan: p, DefaultSLA: e.defaultSLA})
	}
	res, err := brk.AB(e.ctx, a, b, p, side("A", a), side("B", b))
	if err != nil {
		return refuseLib(err)
	}
	res.A.Command, res.B.Command = commandLine(), commandLine()
	e.secrets.Walk(res)
	report.WriteAB(text, res)
	e.code = res.ExitCode()
	if c.JSON != "" {
		if err := writeJSON(e, jsonFile, res); err != nil {
			fmt.Fprintf(e.stderr, "brk: the --json report %s could not be written: %v\n", c.JSON, err)
			if e.code != exitInterrupted {
				e.code = exitReportFailed
			}
		}
	}
	return nil
}

// prefixWriter starts every line with prefix.
type prefixWriter struct {
	w      io.Writer
	prefix string
	bol    bool // at the beginning of a line
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	var out []byte
	for _, c := range b {
		if p.bol {
			out = append(out, p.prefix...)
			p.bol = false
		}
		out = append(out, c)
		if c == '\n' {
			p.bol = true
		}
	}
	if _, err := p.w.Write(out); err != nil {
		return 0, err
	}
	return len(b), nil
}
