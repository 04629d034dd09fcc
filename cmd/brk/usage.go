package main

import (
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/brk-bench/brk"
	"github.com/brk-bench/brk/bench"
)

// What a new user types first: bare brk, the words help and version, and
// the flags of other load testers.

// rootExamples are the four command lines bare brk and brk --help show.
var rootExamples = []example{
	{"brk http://127.0.0.1:8080/plain", "search for the break: 64 connections, the level ×2 per phase, then bisection (at most 5m)"},
	{"brk -c 100 -d 30s -t 4 http://127.0.0.1:8080/plain", "a fixed load, as wrk: 100 connections, 1 request in flight on each, for 30s"},
	{"brk rate --start 1000 -d 30s http://127.0.0.1:8080/plain", "an open model: 1000 requests/s offered against the clock for 30s"},
	{"brk demo", "the whole product in ~20 s against a built-in fixture"},
}

// example is one command line of a help text and what it does.
type example struct{ line, does string }

// commandExamples end each command's --help (kong's command word; "" is
// brk --help).
var commandExamples = map[string][]example{
	"": rootExamples,
	"req": {
		{"brk req http://127.0.0.1:8080/plain", "search for the break over 64 connections (the level counts concurrent requests)"},
		{"brk req -c 8 --start 1 --pace 1 --phase 10s http://127.0.0.1:8080/plain", "a linear ramp: 8, 16, 24, … concurrent requests, 10s each"},
		{"brk req -c 100 -d 30s http://127.0.0.1:8080/plain", "one fixed load: 100 connections × 1 request for 30s"},
	},
	"conn": {
		{"brk conn http://127.0.0.1:8080/plain", "search for the break in concurrent connections, one request each"},
		{"brk conn --keep-alive --start 8 --pace 8 --max 64 --phase 10s http://127.0.0.1:8080/plain", "a keep-alive connection ramp: 8, 16, 24, … 64 connections, each carrying requests one at a time"},
		{"brk conn --requests 10 --start 50 -d 30s http://127.0.0.1:8080/plain", "one fixed load: 50 connections at once, each closed after 10 requests"},
	},
	"rate": {
		{"brk rate http://127.0.0.1:8080/plain", "search for the break in requests/s from 100, ×2 per phase"},
		{"brk rate --start 1000 -d 30s http://127.0.0.1:8080/plain", "hold 1000 requests/s for 30s"},
		{"brk rate --start 500 --pace 500 --max 2000 --phase 10s --timeout 30ms --arrivals poisson http://127.0.0.1:8080/plain", "a linear ramp of poisson arrivals to 2000 requests/s, 10s each"},
	},
	"fixture": {
		{"brk fixture --listen 127.0.0.1:0 --capacity 4 --service 10ms", "a capacity-limited responder on a free port (it prints its address)"},
		{"brk fixture --tls --ca-out ca.pem", "HTTPS with a self-signed certificate, for --cacert ca.pem"},
	},
	"demo": {
		{"brk demo", "find the predicted break of a built-in fixture (~20 s)"},
		{"brk demo --http2", "the same over HTTP/2 (h2c)"},
	},
	"ab": {
		{"brk ab http://127.0.0.1:8080/plain http://127.0.0.1:8081/plain", "the same search against two services, a phase of each in turn"},
	},
	"bench": {
		{"brk bench", "CPU per response and coverage of this client at fixed loads, as CSV"},
	},
	"merge": {
		{"brk merge shard0.json shard1.json", "one verdict from the --json reports of a sharded run's shards"},
	},
	"compare": {
		{"brk compare old.json new.json", "did the break move beyond both runs' intervals? (exit 1: regressed)"},
	},
}

// readMore is where bare brk and brk help send a reader.
const readMore = `Read more: brk help [command] (or brk COMMAND --help), and README.md at https://github.com/brk-bench/brk`

// writeShortUsage is bare brk's text.
func writeShortUsage(w io.Writer) {
	fmt.Fprintln(w, "Usage: brk [command] URL [flags]   — find the HTTP load that breaks your SLA")
	fmt.Fprintln(w)
	writeExamples(w, rootExamples)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands: req (the default), conn, rate, fixture, demo, ab, bench, merge, compare; brk version prints the version.")
	fmt.Fprintln(w, readMore)
}

func writeExamples(w io.Writer, ex []example) {
	width := 0
	for _, e := range ex {
		width = max(width, len(e.line))
	}
	for _, e := range ex {
		fmt.Fprintf(w, "  %-*s   %s\n", width, e.line, e.does)
	}
}

// helpWithExamples is kong's help followed by the command's examples.
func helpWithExamples(options kong.HelpOptions, ctx *kong.Context) error {
	if err := kong.DefaultHelpPrinter(options, ctx); err != nil {
		return err
	}
	cmd := ""
	if n := ctx.Selected(); n != nil {
		cmd = n.Name
	}
	ex, ok := commandExamples[cmd]
	if !ok {
		return nil
	}
	if cmd == "fixture" {
		writeRoutes(ctx.Stdout)
	}
	fmt.Fprintln(ctx.Stdout)
	fmt.Fprintln(ctx.Stdout, "Examples:")
	writeExamples(ctx.Stdout, ex)
	if cmd == "" {
		fmt.Fprintln(ctx.Stdout)
		fmt.Fprintln(ctx.Stdout, readMore)
	}
	return nil
}

// writeRoutes lists the fixture's routes (brk fixture --help).
func writeRoutes(w io.Writer) {
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Routes (every other path answers 404):")
	for _, r := range bench.FixtureRoutes {
		fmt.Fprintf(w, "  %-10s %s\n", r.Path, r.Answers)
	}
}

// commandWords are kong's command words, for brk help COMMAND.
func commandWords() []string {
	var c cli
	exited := -1
	p, err := newParser(&c, io.Discard, io.Discard, &exited)
	if err != nil {
		return nil
	}
	var words []string
	for _, n := range p.Model.Children {
		words = append(words, n.Name)
	}
	return words
}

// words handles the words brk takes before its parser: bare brk, brk
// help [command] and brk version. It returns the arguments to parse, or
// done with the exit code.
func words(args []string, stdout, stderr io.Writer) (parse []string, code int, done bool) {
	switch {
	case len(args) == 0:
		writeShortUsage(stderr)
		return nil, exitUsage, true
	case args[0] == "version" && len(args) == 1:
		fmt.Fprintln(stdout, brk.Version())
		return nil, 0, true
	case args[0] == "help":
		switch len(args) {
		case 1:
			return []string{"--help"}, 0, false
		case 2:
			if cmds := commandWords(); !slices.Contains(cmds, args[1]) {
				fmt.Fprintf(stderr, "brk: help %s: no such command; the commands are %s\n", args[1], strings.Join(cmds, ", "))
				return nil, exitUsage, true
			}
			return []string{args[1], "--help"}, 0, false
		}
		fmt.Fprintln(stderr, "brk: help takes at most one command: brk help [command]")
		return nil, exitUsage, true
	}
	return args, 0, false
}

// foreignFlags answer the flags of other load testers (wrk, wrk2, hey, ab,
// oha, vegeta) with brk's way, keyed by the flag as kong names it in
// "unknown flag X".
var foreignFlags = map[string]string{
	"-n":     "-n (a request count, as in ab, hey, oha) has no equivalent: brk runs for a time — -d/--duration D holds one load for D, --phase D is each phase of a ramp or search",
	"-z":     "-z (hey's duration) is -d/--duration D in brk: one phase of length D at one level (brk -c 100 -d 30s URL)",
	"-R":     "-R (wrk2's rate) is the rate test in brk: brk rate --start R -d D URL offers R requests/s for D",
	"--rate": "--rate (vegeta's, oha's -q) is the rate test in brk: brk rate --start R -d D URL offers R requests/s for D",
	"-q":     "-q (a rate, as in hey and oha) is the rate test in brk: brk rate --start R -d D URL offers R requests/s for D",
	"-s":     "-s (wrk's Lua script) has no equivalent: brk runs no scripts; -H, --method, --body-file, --expect-status and --expect-body shape the requests and judge the responses",
	"-m":     "-m (hey's method) is --method M in brk",
}

var unknownAnyFlagRE = regexp.MustCompile(`^unknown flag (-[A-Za-z]|--[a-z0-9-]+)`)

// foreignFlag is the answer to kong's "unknown flag X" when X is another
// tool's flag, or "".
func foreignFlag(err error) string {
	m := unknownAnyFlagRE.FindStringSubmatch(err.Error())
	if m == nil {
		return ""
	}
	return foreignFlags[m[1]]
}
