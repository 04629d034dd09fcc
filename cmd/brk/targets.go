package main

import (
	"io"
	"os"
	"path/filepath"

	"github.com/brk-bench/brk"
	"github.com/brk-bench/brk/targets"
)

// targetsFlag is --targets, on brk req, brk conn and brk rate: a request
// mix read from a targets file (docs/targets.md). brk ab has none: its two
// sides are two URLs, and a mix per side would need two files; kong
// refuses the flag there, naming the tests that take it.
type targetsFlag struct {
	Targets string `help:"Send a request mix: the targets in FILE (vegeta's format, plus \"# weight N\" and \"# expect-status C,...\" lines; docs/targets.md), on one origin; - reads stdin. The URL argument is then left out." placeholder:"FILE|-"`
}

// targetsWhy is what --targets does, as its exclusions say it.
const targetsWhy = "--targets gives each target its own "

// checkURL refuses a URL argument with --targets, and neither.
func (f *targetsFlag) checkURL(url string) error {
	switch {
	case f.Targets != "" && url != "":
		return refuse("the URL argument and --targets cannot be combined: the targets file names every URL")
	case f.Targets == "" && url == "":
		return refuse(`expected "<url>" (or --targets FILE)`)
	}
	return nil
}

// apply reads the targets file into t's mix (nothing without
// --targets): every refusal names the file and the line, before any
// traffic. -H headers apply to every target (t.Headers, before the
// target's own).
func (f *targetsFlag) apply(t *brk.Target, stdin io.Reader) error {
	if f.Targets == "" {
		return nil
	}
	var (
		r         io.Reader
		name, dir string
	)
	if f.Targets == "-" {
		r, name = stdin, "stdin"
	} else {
		file, err := os.Open(f.Targets)
		if err != nil {
			return refuse("--targets: %v", err)
		}
		defer file.Close()
		r, name, dir = file, f.Targets, filepath.Dir(f.Targets)
	}
	ts, err := targets.Parse(r, name, dir)
	if err != nil {
		return refuse("--targets: %v", err)
	}
	t.URL = ""
	t.Mix = make([]brk.Request, len(ts))
	for i, x := range ts {
		req := brk.Request{Method: x.Method, URL: x.URL, Body: x.Body, Weight: x.Weight, ExpectStatus: x.ExpectStatus}
		for _, h := range x.Header {
			req.Headers = append(req.Headers, brk.Header{Name: h[0], Value: h[1]})
		}
		t.Mix[i] = req
	}
	return nil
}
