package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/brk-bench/brk/internal/testenv"
)

// docPage is one page of the documentation: README.md or a docs/*.md.
type docPage struct {
	name string // as the repository names it: README.md, docs/cli.md
	text string
}

// docPages returns README.md, then every docs/*.md in name order: the
// pages whose commands the README tests parse and run, in that order (the
// README's quick start starts the fixture the docs' commands use).
func docPages(t *testing.T) []docPage {
	t.Helper()
	names, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	var pages []docPage
	for _, n := range append([]string{"../../README.md"}, names...) {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, docPage{name: strings.TrimPrefix(n, "../../"), text: string(b)})
	}
	if len(pages) < 2 {
		t.Fatalf("no docs/*.md beside README.md")
	}
	return pages
}

// docPageNamed returns the page of docPages with that name.
func docPageNamed(t *testing.T, name string) docPage {
	t.Helper()
	for _, p := range docPages(t) {
		if p.name == name {
			return p
		}
	}
	t.Fatalf("no page %s", name)
	return docPage{}
}

// readmeCommands returns the brk command lines of the shell blocks of
// README.md and of every docs/*.md page, in docPages' order (continuations
// joined, comments and the shell's redirections cut), each as its
// arguments after "brk", each line prefixed with its page ("docs/cli.md:
// brk …") in lines, and the other commands of those blocks as they are.
func readmeCommands(t *testing.T) (brkArgs [][]string, lines []string, other []string) {
	t.Helper()
	for _, page := range docPages(t) {
		blocks := regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(page.text, -1)
		for _, b := range blocks {
			text := strings.ReplaceAll(b[1], "\\\n", " ")
			for _, line := range strings.Split(text, "\n") {
				line, _, _ = strings.Cut(line, "#")
				for _, shell := range []string{" > ", " | ", " 2>"} { // the shell's part
					line, _, _ = strings.Cut(line, shell)
				}
				line = strings.TrimSuffix(strings.TrimSpace(line), "&")
				switch f := strings.Fields(line); {
				case len(f) > 0 && f[0] == "brk":
					brkArgs, lines = append(brkArgs, f[1:]), append(lines, page.name+": "+line)
				case len(f) > 2 && f[0] == "go" && f[1] == "run" && f[2] == "./cmd/brk":
					brkArgs, lines = append(brkArgs, f[3:]), append(lines, page.name+": "+line)
				case len(f) > 0:
					other = append(other, line)
				}
			}
		}
	}
	return brkArgs, lines, other
}

// TestReadmeCommandsParse: every brk command line in the shell blocks of
// README.md and docs/*.md is a command line brk accepts as written (its flags, values and
// arguments parse); TestReadmeCommandsRun runs them.
func TestReadmeCommandsParse(t *testing.T) {
	cmds, lines, _ := readmeCommands(t)
	for i, args := range cmds {
		var c cli
		exited := -1
		p, err := newParser(&c, io.Discard, io.Discard, &exited)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := parseArgs(p, args); err != nil || exited >= 0 {
			t.Errorf("command %q does not parse: %v", lines[i], err)
		}
	}
	if len(cmds) < 5 {
		t.Fatalf("found %d brk commands in the shell blocks of README.md and docs/", len(cmds))
	}
}

// TestReadmeCommandsRun runs every brk command of the shell blocks of
// README.md and docs/*.md (docPages' order), in order, and checks it does
// what the page says. They run as
// written but for these substitutions, so that each is short and stays on
// this machine: every --phase is 400ms (the demo's 1s) and --repeat 1;
// the addresses of the README's servers (127.0.0.1:8080, svc:8080, the
// quick start's "$URL") are
// the fixture's that the README's `brk fixture` line started (on a free
// port), the coordinator box0:7070 a free loopback port shard 0 listens on
// before the other shards start (startCoordinator), and
// /tmp/fixture-nethttp the example built by the README's `go build` line
// into a temporary directory. A command this test does not know fails
// it: add its case here. The other commands need nothing of each other,
// and they run three at a time (one after another they were cmd/brk's
// longest test, 54 s), each against a fixture of its own started as the
// last `brk fixture` line before it says, so that no search shares the
// fixture's capacity with another; the test takes three waiting tests'
// shares. The shards start last, together, against the fixture that line
// started.
func TestReadmeCommandsRun(t *testing.T) {
	testenv.ParallelFirst(t, 3*testenv.Waits)
	cmds, lines, other := readmeCommands(t)
	exampleBin := filepath.Join(t.TempDir(), "fixture-nethttp")
	built := false
	for _, o := range other {
		if strings.HasPrefix(o, "go build -o /tmp/fixture-nethttp ") {
			pkg := "github.com/brk-bench/brk/" + strings.TrimPrefix(strings.Fields(o)[4], "./")
			if out, err := exec.Command("go", "build", "-o", exampleBin, pkg).CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", o, err, out)
			}
			built = true
		}
	}
	childEnv(t, "BRK_TOKEN", "readme-token")
	var fixture string       // host:port of the README's fixture, once started
	var fixtureArgs []string // its command line, for a command's own copy of it
	var shardArgs [][]string // the shards' commands, started once the others have run
	var shardLines []string
	var shardFixture string       // the fixture the shards share
	var runs []func(t *testing.T) // the commands that run three at a time, in order
	for i, args := range cmds {
		line := lines[i]
		demo := len(args) > 0 && args[0] == "demo"
		a := readmeSubstitute(args, fixture, "", exampleBin, demo)
		switch {
		case demo && !testing.Short():
			// TestQuickStartFreshCheckout runs it as written, in a fresh
			// copy of the repository, and checks what this case would.
			t.Logf("%s: run by TestQuickStartFreshCheckout", line)
		case demo:
			r := runTimed(t, 32, func() []string { return a })
			expect(t, r, 0, "Broken (32 concurrent requests)")
			if !strings.Contains(r.stderr, "demo: brk found the predicted break, between 24 and 32") {
				t.Errorf("%s: no conclusion on stderr:\n%s", line, r.stderr)
			}
		case a[0] == "fixture":
			fixture, fixtureArgs = startReadmeFixture(t, line, a), a
		case a[0] == "bench":
			if slices.Contains(a, exampleBin) && !built {
				t.Fatalf("%s: no page builds /tmp/fixture-nethttp before it", line)
			}
			runs = append(runs, func(t *testing.T) {
				r := runBrk(t, a...)
				rows := benchCSV(t, r)
				reps := 1
				if m := regexp.MustCompile(`× (\d+) repetitions;`).FindStringSubmatch(r.stderr); m != nil {
					reps, _ = strconv.Atoi(m[1])
				} else if !strings.Contains(r.stderr, "× 1 repetition;") {
					t.Errorf("%s: no repetitions in the header\n%s", line, r)
				}
				if r.code != 0 || len(rows) != 2*reps {
					t.Errorf("%s: exit %d with %d CSV rows for %d repetitions, want 0 with one per depth (2) and repetition\n%s",
						line, r.code, len(rows), reps, r)
				}
			})
		case a[0] == "rate" && len(a) > 1 && strings.HasPrefix(a[1], "http"):
			if fixture == "" {
				t.Fatalf("%s: no page starts a fixture before it", line)
			}
			if !slices.Contains(a, "--pace") || !slices.Contains(a, "--max") {
				t.Fatalf("%s: a rate command here is a ramp to --max (its case checks no search)", line)
			}
			fixtureArgs := fixtureArgs
			runs = append(runs, func(t *testing.T) {
				a := readmeSubstitute(args, startReadmeFixture(t, line, fixtureArgs), "", exampleBin, demo)
				r := runBrk(t, a...)
				if r.code != 0 && r.code != 1 || !verdictLine(lastLine(r.stdout)) || !strings.Contains(lastLine(r.stdout), "requests/s)") {
					t.Errorf("%s: ended %d, want a verdict in requests/s (done or broken)\n%s", line, r.code, r)
				}
			})
		case strings.HasPrefix(a[0], "http"):
			if fixture == "" {
				t.Fatalf("%s: no page starts a fixture before it", line)
			}
			if i := slices.Index(a, "--shard"); i >= 0 {
				shardArgs, shardLines, shardFixture = append(shardArgs, args), append(shardLines, line), fixture
				continue
			}
			fixtureArgs := fixtureArgs
			runs = append(runs, func(t *testing.T) {
				a := readmeSubstitute(args, startReadmeFixture(t, line, fixtureArgs), "", exampleBin, demo)
				r := runBrk(t, a...)
				if busyInconclusive(r) {
					t.Logf("%s: inconclusive on a busy box, as it should be there: %s", line, lastLine(r.stdout))
					return
				}
				if r.code != 0 && r.code != 1 || !verdictLine(lastLine(r.stdout)) {
					t.Errorf("%s: ended %d, want a verdict (done or broken)\n%s", line, r.code, r)
				}
				if !slices.Contains(a, "--pace") { // the search: an adjacent pair, its resolution and cost
					m := regexp.MustCompile(`Held (\d+) .*; broke at (\d+) .*; resolution 1; \d+ phases in `).FindStringSubmatch(r.stdout)
					if m == nil || !strings.Contains(r.stdout, "searching for the break from 8 concurrent requests (8 connections × 1 request), ×2 per phase") {
						t.Errorf("%s: no search header or summary\n%s", line, r)
					} else if held, _ := strconv.Atoi(m[1]); m[2] != strconv.Itoa(held+1) {
						t.Errorf("%s: held %s, broke at %s: not adjacent\n%s", line, m[1], m[2], r)
					}
				}
			})
		default:
			t.Errorf("command %q: TestReadmeCommandsRun has no case for it", line)
		}
	}
	t.Run("commands", func(t *testing.T) {
		slots := make(chan struct{}, 3)
		for i, run := range runs {
			t.Run(strconv.Itoa(i), func(t *testing.T) {
				t.Parallel() // three at a time, on the test's shares
				slots <- struct{}{}
				defer func() { <-slots }()
				run(t)
			})
		}
	})
	// The shards run together and end with the same verdict.
	if len(shardArgs) != 3 {
		t.Fatalf("%d shard commands in README.md and docs/, want 3", len(shardArgs))
	}
	var shards []*proc
	coord := "" // the coordinator's address, once shard 0 listens (startCoordinator)
	for i, args := range shardArgs {
		a := slices.Index(args, "--shard")
		switch {
		case strings.HasPrefix(args[a+1], "0/"):
			var p0 *proc
			coord, p0 = startCoordinator(t, func(c string) *proc {
				return startBrk(t, nil, readmeSubstitute(args, shardFixture, c, exampleBin, false)...)
			})
			shards = append(shards, p0)
		case coord == "":
			t.Fatalf("%s: a shard before shard 0 (which listens first)", shardLines[i])
		default:
			shards = append(shards, startBrk(t, nil, readmeSubstitute(args, shardFixture, coord, exampleBin, false)...))
		}
	}
	var first result
	for i, p := range shards {
		r := p.wait()
		if busyInconclusive(r) {
			t.Logf("%s: inconclusive on a busy box, as it should be there", shardLines[i])
		} else if r.code != 0 && r.code != 1 || !verdictLine(lastLine(r.stdout)) {
			t.Errorf("%s: ended %d, want a verdict\n%s", shardLines[i], r.code, r)
		}
		if i == 0 {
			first = r
		} else if lastLine(r.stdout) != lastLine(first.stdout) {
			t.Errorf("shard %d ended %q, shard 0 %q", i, lastLine(r.stdout), lastLine(first.stdout))
		}
	}
}

// startReadmeFixture starts the fixture of a README command line (its
// arguments substituted: a free port) and returns its host:port.
func startReadmeFixture(t *testing.T, line string, args []string) string {
	t.Helper()
	p := startBrk(t, nil, args...)
	p.waitFor("\n", 10*time.Second)
	first, _, _ := strings.Cut(p.stdout.String(), "\n")
	base, ok := strings.CutPrefix(first, "listening on http://")
	if !ok {
		t.Fatalf("%s: said %q", line, first)
	}
	return base
}

// readmeSubstitute applies TestReadmeCommandsRun's substitutions to one
// README command's arguments.
func readmeSubstitute(args []string, fixture, coord, exampleBin string, demo bool) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--phase" && i+1 < len(args):
			out = append(out, a, "400ms")
			i++
			continue
		case a == "--repeat" && i+1 < len(args):
			out = append(out, a, "1")
			i++
			continue
		case a == "--listen" && i+1 < len(args):
			out = append(out, a, "127.0.0.1:0")
			i++
			continue
		}
		if a == `"$URL"` || a == "$URL" { // the quick start's fixture, kept in URL
			a = "http://" + fixture + "/plain"
		}
		a = strings.ReplaceAll(a, "127.0.0.1:8080", fixture)
		// The docs' service at svc:8080/api is the fixture's /plain (the
		// fixture answers 404 elsewhere: a user's mistake, no verdict).
		a = strings.ReplaceAll(a, "svc:8080/api", fixture+"/plain")
		a = strings.ReplaceAll(a, "svc:8080", fixture)
		a = strings.ReplaceAll(a, "box0:7070", coord)
		a = strings.ReplaceAll(a, "/tmp/fixture-nethttp", exampleBin)
		out = append(out, a)
	}
	if demo {
		out = append(out, "--phase", "1s")
	}
	return out
}

// busyInconclusive reports whether a run ended inconclusive because the
// box was busy and its runs of a level disagreed (docs/search.md), or
// because a rate test's client fell behind its schedule on a busy box: on
// a machine loaded by other work that is the honest end, not a failure.
func busyInconclusive(r result) bool {
	return r.code == 3 && (strings.Contains(r.stdout, "the box was busy in ") ||
		strings.Contains(r.stdout, "fell behind its arrival schedule") && strings.Contains(r.stdout, "ran on a busy box"))
}
