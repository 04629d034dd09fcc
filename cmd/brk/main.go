// Command brk finds the HTTP load that breaks your SLA.
//
// It is a thin user of the brk library and its report package: it parses
// flags with kong, runs a test, prints one block per phase, and exits 0
// (done), 1 (broken), 2 (usage), 3 (inconclusive), 4 (the run ended but a
// requested --json or --report could not be written) or 130 (interrupted).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/alecthomas/kong"

	"github.com/brk-bench/brk"
	"github.com/brk-bench/brk/internal/redact"
)

// Exit codes: README.md's exit codes table (docs/cli.md has the details).
const (
	exitDone         = 0
	exitBroken       = 1
	exitUsage        = 2
	exitInconclusive = 3
	exitReportFailed = 4 // replaces 0, 1 and 3, not 130
	exitInterrupted  = 130
)

// usageError is a flag error found after parsing: exit 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func refuse(format string, args ...any) error {
	return usageError{fmt.Sprintf(format, args...)}
}

type cli struct {
	Version kong.VersionFlag `help:"Print brk's version and exit."`

	Req     reqCmd     `cmd:"" default:"withargs" help:"Requests test (default): raise concurrent requests per connection."`
	Conn    connCmd    `cmd:"" help:"Connections test: raise concurrent connections."`
	Rate    rateCmd    `cmd:"" help:"Open-model test: raise an arrival rate (requests/s) scheduled against the clock."`
	Fixture fixtureCmd `cmd:"" help:"Run the built-in fixture responder."`
	Demo    demoCmd    `cmd:"" help:"Find the break of a capacity-limited fixture started as a child process (~20 s)."`
	Ab      abCmd      `cmd:"" name:"ab" help:"A/B: the same plan against two URLs, a phase of each in turn, each ramp judged on its own."`
	Bench   benchCmd   `cmd:"" help:"Benchmark the client itself against a fixture child process: CPU per response and coverage at fixed loads, as CSV."`
	Merge   mergeCmd   `cmd:"" help:"Merge the JSON reports of every shard of one sharded run (--shard) into one report and verdict."`
	Compare compareCmd `cmd:"" help:"Compare the breaks of two runs' JSON reports: exit 0 no change or improved, 1 regressed, 3 cannot tell, 2 not comparable."`
}

// env is what a command needs from the process.
type env struct {
	// verbose writes each phase's full block (--verbose).
	verbose bool
	// latency writes the final pair's latency distribution (--latency).
	latency bool
	// tui shows the full-screen live view (--tui, tui.go).
	tui    bool
	ctx    context.Context
	stdout io.Writer
	stderr io.Writer
	code   int

	// prom is the run's --prometheus-* and --run-id flags (nil: none).
	prom *promFlags
	// secrets are kept out of everything brk writes (secrets.go).
	secrets *redact.Secrets
	// defaultSLA: a load test run with no SLA flag, judged by the default
	// SLA (DefaultMaxP99); its header says so.
	defaultSLA bool
}

func main() {
	// A closed stdout (brk … | head) must not kill the run before its
	// report files are written. Go kills a program that writes to a broken
	// pipe on fd 1 or 2 unless SIGPIPE is notified; then the write fails
	// with EPIPE instead. The channel is never read (Notify does not block),
	// and a notified signal is reset to its default in child processes.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// stickyWriter writes to w until a write fails (EPIPE from a closed pipe,
// a full disk): from then on it writes nothing and returns that error, so
// that the run goes on and finishes without writing to a dead stdout.
type stickyWriter struct {
	w   io.Writer
	err error
}

func (s *stickyWriter) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	n, err := s.w.Write(p)
	if err != nil {
		s.err = err
	}
	return n, err
}

// stdoutErr returns the error that stopped writes to stdout, if any.
func (e *env) stdoutErr() error {
	if s, ok := e.stdout.(*stickyWriter); ok {
		return s.err
	}
	return nil
}

func run(args []string, stdout, stderr io.Writer) int {
	sec := startSecrets()
	stdout = &stickyWriter{w: &redactWriter{w: stdout, sec: sec}}
	stderr = &redactWriter{w: stderr, sec: sec}
	args, code, done := words(args, stdout, stderr)
	if done {
		return code
	}
	var c cli
	exited := -1
	parser, err := newParser(&c, stdout, stderr, &exited)
	if err != nil {
		fmt.Fprintf(stderr, "brk: %v\n", err)
		return exitUsage
	}
	kctx, err := parseArgs(parser, args)
	if exited >= 0 {
		if exited != 0 {
			return exitUsage
		}
		return 0
	}
	if err != nil {
		if msg := foreignFlag(err); msg != "" {
			fmt.Fprintf(stderr, "brk: %s\n", msg)
			return exitUsage
		}
		if msg := otherTestFlag(parser, err); msg != "" {
			fmt.Fprintf(stderr, "brk: %s\n", msg)
			return exitUsage
		}
		fmt.Fprintf(stderr, "brk: %s\n", oneLine(err.Error())+durationHint(err.Error()))
		return exitUsage
	}
	addFlagSecrets(sec, kctx)
	if err := refuseEmpty(kctx); err != nil {
		fmt.Fprintf(stderr, "brk: %v\n", err)
		return exitUsage
	}
	if err := refuseTypedZeros(kctx); err != nil {
		fmt.Fprintf(stderr, "brk: %v\n", err)
		return exitUsage
	}
	// On a platform brk compiles for but cannot run on, every command is
	// refused like an unserved feature: exit 2, one line, no traffic.
	if err := brk.CheckPlatform(); err != nil {
		fmt.Fprintf(stderr, "brk: %v\n", err)
		return exitUsage
	}
	// Headroom: each locked worker thread needs a P whenever it runs, so
	// the controller and reporter goroutines must never make one wait.
	runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) + 1)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	e := &env{ctx: ctx, stdout: stdout, stderr: stderr, secrets: sec}
	if lf, ok := kctx.Selected().Target.Addr().Interface().(interface{ load() *loadFlags }); ok && !slaTyped(kctx) {
		lf.load().defaultSLA, e.defaultSLA = true, true
	}
	if err := kctx.Run(e); err != nil {
		var ue usageError
		if errors.As(err, &ue) {
			fmt.Fprintf(stderr, "brk: %s\n", oneLine(ue.msg))
			return exitUsage
		}
		fmt.Fprintf(stderr, "brk: %s\n", oneLine(err.Error()))
		if e.code == 0 {
			return exitInconclusive
		}
	}
	return e.code
}

type kongExit struct{}

// newParser is the command line's parser; an exit kong asks for (help,
// version) is recorded in exited and unwinds parseArgs.
func newParser(c *cli, stdout, stderr io.Writer, exited *int) (*kong.Kong, error) {
	return kong.New(c,
		kong.Name("brk"),
		kong.Description("Find the HTTP load that breaks your SLA."),
		kong.UsageOnError(),
		kong.Writers(stdout, stderr),
		kong.Exit(func(code int) { *exited = code; panic(kongExit{}) }),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true}),
		kong.Help(helpWithExamples),
		kong.Vars{"version": brk.Version()},
	)
}

// parseArgs runs kong's parser, turning its help/exit panics into a result.
func parseArgs(p *kong.Kong, args []string) (ctx *kong.Context, err error) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(kongExit); !ok {
				panic(r)
			}
		}
	}()
	return p.Parse(args)
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

var missingUnitRE = regexp.MustCompile(`missing unit in duration "([0-9.]+)"`)

// durationHint suggests a unit for a duration typed without one.
func durationHint(msg string) string {
	if m := missingUnitRE.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf(" (did you mean %sms or %ss?)", m[1], m[1])
	}
	return ""
}

// A flag given on the command line is judged by presence, not value: kong
// fills every default in before Run, so a zero in a field cannot tell "0
// typed" from "left out". refuseTypedZeros walks the flags typed
// (kctx.Path) through two tables, zeroRules and needsFlags, so that a new
// flag slots in as one row; a flag of another test needs no row at all
// (otherTestFlag).

// emptyMeaningful are the flags whose empty value is a value of its own,
// not "left out" (docs/cli.md lists them): --expect-body "" expects an
// empty body.
var emptyMeaningful = []string{"expect-body"}

// refuseEmpty refuses, before any traffic, a flag typed with an empty
// value (--run-id=, --targets ""), which would otherwise run as if it
// were left out, unless the empty value is one of its own
// (emptyMeaningful). A text flag is empty when its value is ""; a list
// flag (-H, --server-pid, --protocols) when it holds no item or an empty
// one. A number's empty value is refused by the parser already.
func refuseEmpty(kctx *kong.Context) error {
	for _, p := range kctx.Path {
		f := p.Flag
		if f == nil || !f.Target.IsValid() || slices.Contains(emptyMeaningful, f.Name) || !emptyValue(f.Target) {
			continue
		}
		name := "--" + f.Name
		if f.Short != 0 {
			name = fmt.Sprintf("-%c/--%s", f.Short, f.Name)
		}
		return fmt.Errorf("%s needs a value, not \"\" (leave the flag out for its default)", name)
	}
	return nil
}

// emptyValue reports whether v, a flag's value, is an empty text or a
// list that holds no item or an empty text.
func emptyValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.String:
		return v.Len() == 0
	case reflect.Pointer:
		return !v.IsNil() && v.Elem().Kind() == reflect.String && v.Elem().Len() == 0
	case reflect.Slice:
		if v.Len() == 0 {
			return true
		}
		for i := range v.Len() {
			if e := v.Index(i); e.Kind() == reflect.String && e.Len() == 0 {
				return true
			}
		}
	}
	return false
}

// zeroRule refuses a typed zero of a flag whose zero is no meaningful
// value: the library (or the command) reads 0 as "use the default" or
// "none", so the zero would silently run as if left out.
type zeroRule struct {
	flag string
	cmds []string // the commands it applies to (kong's command word); nil: every command with the flag
	why  string   // what leaving it out does
}

var zeroRules = []zeroRule{
	{"start", nil, "leave it out to start at --pace"},
	{"max", nil, "leave it out for no ceiling"},
	{"threads", []string{"req", "conn", "rate", "ab"}, "leave it out for the CPUs usable by the process"},
	{"threads", []string{"demo"}, "leave it out for 1"},
	{"phase", []string{"demo"}, "leave it out for 3s"},
	{"max-p99", nil, "leave it out for no p99 rule"},
	{"max-p999", nil, "leave it out for no p99.9 rule"},
	{"rate-depth", []string{"rate"}, "leave it out for 1 over HTTP/1.1, 128 streams with --http2"},
	{"seed", []string{"rate"}, "leave it out for a random seed, reported in the JSON"},
	{"shards", nil, "leave it out for a run on one box"},
	{"start-tolerance", nil, "leave it out for 1s"},
	{"drain-allowance", nil, "leave it out for --timeout + 1s"},
	{"join-timeout", nil, "leave it out for 2m"},
	{"duration", nil, "leave it out to search for the break, or give --pace for a ramp"},
}

// exclusion is a pair of flags that cannot be given together, and why.
type exclusion struct {
	flag, other string
	why         string
}

// durationWhy is what --duration does, as its exclusions say it.
const durationWhy = "--duration runs one phase of that length at one level (--start), no ramp"

var exclusions = []exclusion{
	{"duration", "phase", durationWhy + "; --phase is each phase's length of a ramp or search"},
	{"duration", "pace", durationWhy + "; --pace ramps the level"},
	{"duration", "max", durationWhy + "; --max is the ceiling of a ramp or search (give the level as --start)"},
	{"duration", "growth", durationWhy + "; --growth applies to the search"},
	{"duration", "resolution", durationWhy + "; --resolution applies to the search"},
	{"duration", "budget", durationWhy + "; --budget bounds a ramp's or a search's phases"},
	{"duration", "refine", durationWhy + "; --refine bisects a ramp's break"},
	{"duration", "repeat", durationWhy + "; --repeat confirms the levels of a ramp or search"},
	{"targets", "method", targetsWhy + "method (its request line)"},
	{"targets", "body-file", targetsWhy + "body (its @path line); --targets - and --body-file - would also share one stdin"},
	{"keep-alive", "requests", "--keep-alive carries requests on each connection until the phase ends; --requests N closes it after N"},
}

// testCommands are the test commands, as the refusal of another test's
// flag names them.
var testCommands = []struct{ cmd, name string }{
	{"req", "requests"}, {"conn", "connections"}, {"rate", "rate"}, {"ab", "brk ab"},
}

var unknownFlagRE = regexp.MustCompile(`^unknown flag --([a-z0-9-]+)`)

// otherTestFlag words kong's "unknown flag --X" when X is a flag of
// another test: "--X applies to the rate test only", as brk conn refuses
// --conn. Which tests take a flag is read from the commands themselves
// (kong's model), so a flag added to one test is refused by the others,
// its test named, with no table to keep. "" when X is no test's flag.
func otherTestFlag(p *kong.Kong, err error) string {
	m := unknownFlagRE.FindStringSubmatch(err.Error())
	if m == nil {
		return ""
	}
	var tests []string
	ab := false
	for _, tc := range testCommands {
		for _, n := range p.Model.Children {
			if n.Name != tc.cmd || !slices.ContainsFunc(n.Flags, func(f *kong.Flag) bool { return f.Name == m[1] }) {
				continue
			}
			if tc.cmd == "ab" {
				ab = true
			} else {
				tests = append(tests, tc.name)
			}
		}
	}
	var owner string
	switch len(tests) {
	case 0:
	case 1:
		owner = "the " + tests[0] + " test"
	default:
		owner = "the " + strings.Join(tests[:len(tests)-1], ", ") + " and " + tests[len(tests)-1] + " tests"
	}
	switch {
	case ab && owner != "":
		owner += " and brk ab"
	case ab:
		owner = "brk ab"
	case owner == "":
		return ""
	}
	return fmt.Sprintf("--%s applies to %s only", m[1], owner)
}

// slaFlags are the flags that state an SLA; given none, a load test
// judges the default SLA (DefaultMaxP99).
var slaFlags = []string{"accept", "timeout", "max-p99", "max-p999"}

// slaTyped reports whether the command line gave any of slaFlags (--sla
// is --accept's alias: kong names the flag, not the word typed).
func slaTyped(kctx *kong.Context) bool {
	for _, p := range kctx.Path {
		if p.Flag != nil && slices.Contains(slaFlags, p.Flag.Name) {
			return true
		}
	}
	return false
}

// needsFlag is a flag that means nothing without one of others (a
// default-valued one: a value check cannot see it was given).
type needsFlag struct {
	flag  string
	cmds  []string // the commands it applies to; nil: every command with the flag
	anyOf []string
	words string // the others, as the refusal names them
}

var needsFlags = []needsFlag{
	{"start-tolerance", nil, []string{"shard", "shards"}, "--shard I/N or --shards N"},
	{"join-timeout", nil, []string{"shard", "shards"}, "--shard I/N or --shards N"},
	{"requests", []string{"ab"}, []string{"connections"}, "--connections (brk ab runs the requests test without it)"},
	{"prometheus-label", nil, []string{"prometheus-remote-write"}, "--prometheus-remote-write URL"},
	{"prometheus-native-histograms", nil, []string{"prometheus-remote-write"}, "--prometheus-remote-write URL"},
}

// refuseTypedZeros refuses, before any traffic, --conn given to brk conn,
// a typed zero that zeroRules names and a flag without the one it needs
// (needsFlags).
func refuseTypedZeros(kctx *kong.Context) error {
	cmd, _, _ := strings.Cut(kctx.Command(), " ")
	for _, p := range kctx.Path {
		if f := p.Flag; f != nil && f.Name == "conn" && cmd == "conn" {
			return fmt.Errorf("--conn does not apply to the connections test: --start, --pace and --max count its connections")
		}
	}
	for _, p := range kctx.Path {
		f := p.Flag
		if f == nil || !f.Target.IsValid() || !f.Target.IsZero() {
			continue
		}
		for _, z := range zeroRules {
			if z.flag != f.Name || z.cmds != nil && !slices.Contains(z.cmds, cmd) {
				continue
			}
			if d, ok := f.Target.Interface().(time.Duration); ok {
				return fmt.Errorf("--%s %v: must be more than 0 (%s)", f.Name, d, z.why)
			}
			return fmt.Errorf("--%s 0: must be at least 1 (%s)", f.Name, z.why)
		}
	}
	typed := map[string]bool{}
	for _, p := range kctx.Path {
		if p.Flag != nil {
			typed[p.Flag.Name] = true
		}
	}
	for _, x := range exclusions {
		if typed[x.flag] && typed[x.other] {
			return fmt.Errorf("--%s and --%s cannot be combined: %s", x.flag, x.other, x.why)
		}
	}
	for _, n := range needsFlags {
		if typed[n.flag] && (n.cmds == nil || slices.Contains(n.cmds, cmd)) && !slices.ContainsFunc(n.anyOf, func(o string) bool { return typed[o] }) {
			return fmt.Errorf("--%s needs %s", n.flag, n.words)
		}
	}
	return nil
}
