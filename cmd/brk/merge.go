package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/brk-bench/brk"
	"github.com/brk-bench/brk/report"
)

// maxReportBytes bounds a shard report brk merge reads.
const maxReportBytes = 256 << 20

// mergeCmd merges the JSON reports of every shard of one sharded run and
// judges the merged phases again: one verdict after the fact.
type mergeCmd struct {
	Reports []string `arg:"" name:"report" help:"Shard reports (--json of each shard), one per shard index." type:"path"`
	JSON    string   `name:"json" help:"Write the merged JSON report to PATH; - writes it to stdout and the human text to stderr." placeholder:"PATH|-"`
	Verbose bool     `short:"v" help:"Write each merged phase's full block instead of one line, as a run's -v does."`
}

func (c *mergeCmd) Run(e *env) error {
	var reports []*brk.Result
	var raws [][]byte
	for _, path := range c.Reports {
		r, b, err := loadReport(path)
		if err != nil {
			return refuse("%s: %v", path, err)
		}
		reports = append(reports, r)
		raws = append(raws, b)
	}
	verified, err := verifyShards(raws, c.Reports) // shard_flags.go
	if err != nil {
		return err
	}
	res, err := brk.MergeReportsNamed(reports, c.Reports, reasonNames())
	if err != nil {
		return refuse("merge: %v", err)
	}
	res.RunID = sharedRunID(reports) // prometheus.go
	e.secrets.Walk(res)
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
	fmt.Fprintf(text, "brk merge: %d shards of a %s test  %s\n", len(res.Shards), res.Test, res.URL)
	if verified {
		fmt.Fprintln(text, "  the shard reports' HMACs match BRK_TOKEN")
	} else {
		fmt.Fprintln(text, "  the shard reports were not verified: set BRK_TOKEN to check their HMACs")
	}
	for _, s := range res.Shards {
		fmt.Fprintf(text, "  shard %d: %d threads, phase 0 started %.1f ms late (latest phase start %.1f ms)\n",
			s.Index, s.Threads, s.StartLatenessMs, s.MaxLatenessMs)
	}
	fmt.Fprintln(text)
	// One line per phase and the summary sentence, as a run writes them;
	// -v the full blocks.
	for _, p := range res.Phases {
		if c.Verbose {
			report.WritePhase(text, res.Test, p)
		} else {
			protocol, _ := brk.ProtocolNamed(res.Protocol) // another name: HTTP/1.1's words
			report.WritePhaseLine(text, res.Test, p, res.Conns, protocol)
		}
	}
	if c.Verbose {
		report.WriteSummary(text, res)
	} else {
		report.WriteHeld(text, res)
	}
	e.code = res.Verdict.ExitCode()
	if c.JSON != "" {
		if err := writeJSON(e, jsonFile, res); err != nil {
			fmt.Fprintf(e.stderr, "brk: the --json report %s could not be written: %v\n", c.JSON, err)
			if e.code != exitInterrupted {
				e.code = exitReportFailed
			}
		}
	}
	fmt.Fprintln(text, report.FinalLine(res))
	return nil
}

func loadReport(path string) (*brk.Result, []byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxReportBytes+1))
	if err != nil {
		return nil, nil, err
	}
	if len(b) > maxReportBytes {
		return nil, nil, errors.New("report is over 256 MiB")
	}
	var r brk.Result
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, nil, fmt.Errorf("not a brk JSON report: %v", err)
	}
	if r.Schema != 1 {
		return nil, nil, fmt.Errorf("report schema %d, want 1", r.Schema)
	}
	return &r, b, nil
}
