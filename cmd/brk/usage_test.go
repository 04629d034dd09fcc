package main

import (
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/brk-bench/brk/bench"
	"github.com/brk-bench/brk/internal/testenv"
)

// TestFirstWords: what a new user types first. Bare brk is a short usage
// with four example lines and where to read more (exit 2); help
// [command] and version are words, not URLs.
func TestFirstWords(t *testing.T) {
	r := runBrk(t)
	if r.code != 2 || r.stdout != "" || strings.Count(r.stderr, "\n  brk ") != 4 || !strings.Contains(r.stderr, "Read more: brk help [command]") {
		t.Errorf("bare brk: want exit 2 with four examples and where to read more on stderr\n%s", r)
	}
	h := runBrk(t, "help")
	if h.code != 0 || !strings.HasPrefix(h.stdout, "Usage: brk") || !strings.Contains(h.stdout, "\nExamples:\n  brk ") {
		t.Errorf("brk help: want exit 0 with the usage and its examples\n%s", h)
	}
	c := runBrk(t, "help", "conn")
	if c.code != 0 || !strings.HasPrefix(c.stdout, "Usage: brk conn") || !strings.Contains(c.stdout, "--keep-alive") || !strings.Contains(c.stdout, "\nExamples:\n  brk conn ") {
		t.Errorf("brk help conn: want exit 0 with brk conn's help and examples\n%s", c)
	}
	f := runBrk(t, "fixture", "--help")
	if f.code != 0 || !strings.Contains(f.stdout, "\nRoutes (every other path answers 404):\n") {
		t.Errorf("brk fixture --help: want its routes\n%s", f)
	}
	for _, r := range bench.FixtureRoutes {
		if !strings.Contains(f.stdout, "\n  "+r.Path+" ") {
			t.Errorf("brk fixture --help does not list %s\n%s", r.Path, f)
		}
	}
	if n := runBrk(t, "help", "nope"); n.code != 2 || n.stderr != "brk: help nope: no such command; the commands are req, conn, rate, fixture, demo, ab, bench, merge, compare\n" {
		t.Errorf("brk help nope:\n%s", n)
	}
	v, fv := runBrk(t, "version"), runBrk(t, "--version")
	if v.code != 0 || !strings.HasPrefix(v.stdout, "brk ") || v.stdout != fv.stdout {
		t.Errorf("brk version: %s\nbrk --version: %s", v, fv)
	}
}

// TestForeignFlags: the flags of wrk, wrk2, hey, ab, oha and vegeta are
// answered with brk's way in one line, exit 2, not a guess.
func TestForeignFlags(t *testing.T) {
	u := "http://127.0.0.1:1/plain"
	for _, c := range []struct{ args []string }{
		{[]string{"-n", "1000", u}}, {[]string{"-z", "10s", u}}, {[]string{"-R", "100", u}}, {[]string{"-R100", u}},
		{[]string{"--rate", "100", u}}, {[]string{"--rate=100", u}}, {[]string{"-q", "100", u}}, {[]string{"-s", "x.lua", u}},
		{[]string{"-m", "POST", u}}, {[]string{"conn", u, "-n", "5"}},
	} {
		r := runBrk(t, c.args...)
		flag := c.args[0]
		if flag == "conn" {
			flag = c.args[2]
		}
		flag, _, _ = strings.Cut(flag, "=")
		if len(flag) > 2 && flag[1] != '-' {
			flag = flag[:2]
		}
		want := "brk: " + foreignFlags[flag] + "\n"
		if r.code != 2 || r.stderr != want {
			t.Errorf("brk %s: exit %d\n%s\nwant exit 2 with %q", strings.Join(c.args, " "), r.code, r.stderr, want)
		}
	}
}

// helpExamples are the example lines that end cmd's --help, as arguments
// after "brk".
func helpExamples(t *testing.T, cmd ...string) [][]string {
	t.Helper()
	h := runBrk(t, append(cmd, "--help")...)
	_, ex, ok := strings.Cut(h.stdout, "\nExamples:\n")
	if h.code != 0 || !ok {
		t.Fatalf("brk %v --help: no examples\n%s", cmd, h)
	}
	var out [][]string
	for _, line := range strings.Split(ex, "\n") {
		if !strings.HasPrefix(line, "  brk ") && line != "  brk" {
			continue
		}
		line, _, _ = strings.Cut(strings.TrimSpace(line), "   ") // the description
		out = append(out, strings.Fields(line)[1:])
	}
	if len(out) == 0 {
		t.Fatalf("brk %v --help: no example lines\n%s", cmd, h.stdout)
	}
	return out
}

// TestHelpExamples: every command's --help ends with examples; each
// parses as written (as TestReadmeCommandsParse checks those of
// README.md and docs/), and
// those that end on their own (a fixed load, a ramp to --max, brk demo's
// own test aside) run against the fixture like those of the docs, with
// 400ms phases.
func TestHelpExamples(t *testing.T) {
	testenv.Parallel(t, testenv.Waits)
	fx := startBrk(t, nil, "fixture", "--listen", "127.0.0.1:0")
	fx.waitFor("\n", 10*time.Second)
	first, _, _ := strings.Cut(fx.stdout.String(), "\n")
	base, _ := strings.CutPrefix(first, "listening on http://")
	for _, cmd := range append([]string{""}, commandWords()...) {
		var args []string
		if cmd != "" {
			args = []string{cmd}
		}
		for _, ex := range helpExamples(t, args...) {
			var c cli
			exited := -1
			p, err := newParser(&c, io.Discard, io.Discard, &exited)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := parseArgs(p, ex); err != nil || exited >= 0 {
				t.Errorf("brk %s --help: example %q does not parse: %v", cmd, strings.Join(ex, " "), err)
				continue
			}
			bounded := slices.Contains(ex, "-d") || slices.Contains(ex, "--max")
			if !bounded || !slices.ContainsFunc(ex, func(a string) bool { return strings.HasPrefix(a, "http://") }) {
				continue
			}
			a := readmeSubstitute(ex, base, "", "", false)
			if !slices.Contains(a, "-d") && !slices.Contains(a, "--phase") {
				a = append(a, "--phase", "400ms")
			}
			for i := range a {
				if a[i] == "-d" && i+1 < len(a) {
					a[i+1] = "400ms"
				}
			}
			r := runBrk(t, a...)
			if busyInconclusive(r) {
				t.Logf("brk %s --help: example %q: inconclusive on a busy box, as it should be there", cmd, strings.Join(ex, " "))
				continue
			}
			if r.code != 0 && r.code != 1 || !verdictLine(lastLine(r.stdout)) {
				t.Errorf("brk %s --help: example %q ended %d, want a verdict\n%s", cmd, strings.Join(ex, " "), r.code, r)
			}
			if slices.Contains(ex, "-d") && !regexp.MustCompile(`(?m)^  one level, no ramp: `).MatchString(r.stdout) || slices.Contains(ex, "-d") && strings.Contains(r.stdout, "phase 1 ") {
				t.Errorf("%q: want one phase at one level\n%s", strings.Join(a, " "), r.stdout)
			}
		}
	}
}
