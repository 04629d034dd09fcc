package main

import (
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestReadmeCommandsParse: every brk command line in the README's shell
// blocks is a command line brk accepts as written (its flags, values and
// arguments parse). The ones that load a server run in other tests
// (TestReadmeRealRun, TestDemo, the bench and shard tests).
func TestReadmeCommandsParse(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(string(readme), -1)
	n := 0
	for _, b := range blocks {
		text := strings.ReplaceAll(b[1], "\\\n", " ")
		for _, line := range strings.Split(text, "\n") {
			line, _, _ = strings.Cut(line, "#")
			for _, shell := range []string{" > ", " | ", " 2>"} { // the shell's part
				line, _, _ = strings.Cut(line, shell)
			}
			line = strings.TrimSuffix(strings.TrimSpace(line), "&")
			var args []string
			switch f := strings.Fields(line); {
			case len(f) > 0 && f[0] == "brk":
				args = f[1:]
			case len(f) > 2 && f[0] == "go" && f[1] == "run" && f[2] == "./cmd/brk":
				args = f[3:]
			default:
				continue
			}
			n++
			var c cli
			exited := -1
			p, err := newParser(&c, io.Discard, io.Discard, &exited)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := parseArgs(p, args); err != nil || exited >= 0 {
				t.Errorf("README command %q does not parse: %v", line, err)
			}
		}
	}
	if n < 5 {
		t.Fatalf("found %d brk commands in the README's shell blocks", n)
	}
}

// TestReadmeRealRun runs the README's "real run" as written, but for the
// phase length, against the fixture it starts the same way.
func TestReadmeRealRun(t *testing.T) {
	fx := startBrk(t, nil, "fixture", "--listen", "127.0.0.1:0", "--capacity", "4", "--service", "2ms")
	fx.waitFor("\n", 10*time.Second)
	line, _, _ := strings.Cut(fx.stdout.String(), "\n")
	base, ok := strings.CutPrefix(line, "listening on ")
	if !ok {
		t.Fatalf("fixture said %q", line)
	}
	r := runBrk(t, base+"/plain", "--conn", "64", "--start", "2", "--pace", "2", "--phase", "400ms", "--timeout", "16ms",
		"--accept", "99.99", "--threads", "2")
	if r.code != 0 && r.code != 1 || !verdictLine(lastLine(r.stdout)) {
		t.Fatalf("the README's real run ended %d\n%s", r.code, r)
	}
}
