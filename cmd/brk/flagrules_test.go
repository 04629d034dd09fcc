package main

import (
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/brk-bench/brk/internal/testenv"
)

// helpFlags is every flag (name → placeholder or default) that cmd's
// --help lists, less --help and --version.
func helpFlags(t *testing.T, cmd string) map[string]string {
	t.Helper()
	h := runBrk(t, cmd, "--help")
	if h.code != 0 {
		t.Fatalf("%s --help: exit %d\n%s", cmd, h.code, h)
	}
	out := map[string]string{}
	for _, f := range helpFlagRE.FindAllStringSubmatch(h.stdout, -1) {
		if f[1] != "help" && f[1] != "version" {
			out[f[1]] = f[2]
		}
	}
	if len(out) < 3 {
		t.Fatalf("%s --help lists %d flags\n%s", cmd, len(out), h.stdout)
	}
	return out
}

var (
	durationRE = regexp.MustCompile(`^([0-9]+(ns|us|µs|ms|s|m|h))+$`)
	intRE      = regexp.MustCompile(`^[0-9]+$`)
)

// zeroMeaningful are the numeric flags whose typed zero is a documented
// value of its own, not "left out".
var zeroMeaningful = []string{
	"bench --threads",        // 0: the CPUs usable by the process
	"bench --server-threads", // 0: the responder's default
	"fixture --capacity",     // 0: unlimited
	"fixture --service",      // 0: no service time
}

// TestTypedZeroEveryFlag: every numeric flag that a command's --help
// lists, typed as zero, is refused before any traffic (exit 2, one line
// naming the flag) unless its zero is a value of its own
// (zeroMeaningful): a typed zero never runs as if the flag were left
// out. New flags are covered as soon as --help lists them.
func TestTypedZeroEveryFlag(t *testing.T) {
	testenv.Parallel(t, testenv.Busy)
	u := "http://127.0.0.1:1/plain"
	commands := map[string][]string{
		"req": {u}, "conn": {u}, "rate": {u, "--arrivals", "poisson"}, "ab": {u, u},
		"fixture": {"--listen", "127.0.0.1:0"}, "demo": nil, "bench": nil,
	}
	for cmd, args := range commands {
		for name, ph := range helpFlags(t, cmd) {
			var zero string
			switch {
			case ph == "DURATION" || durationRE.MatchString(ph):
				zero = "0s"
			case ph == "INT" || ph == "N" || ph == "PID,..." || ph == "N,..." || ph == "D,..." || intRE.MatchString(ph):
				zero = "0"
			default:
				continue // not a number
			}
			flag := cmd + " --" + name
			if slices.Contains(zeroMeaningful, flag) {
				continue
			}
			t.Run(cmd+"/"+name, func(t *testing.T) {
				line := append(append([]string{cmd}, args...), "--"+name+"="+zero)
				r := runBrk(t, line...)
				if r.code != 2 || strings.Count(r.stderr, "\n") != 1 || !strings.HasPrefix(r.stderr, "brk: ") || !strings.Contains(r.stderr, "--"+name) {
					t.Errorf("brk %s: want exit 2 with one line naming --%s\n%s", strings.Join(line, " "), name, r)
				}
			})
		}
	}
}

// TestOtherTestsFlags: every flag that one test's --help lists and
// another test's does not is refused by that other test before any
// traffic (exit 2), naming the test it belongs to, as brk conn refuses
// --conn — never accepted silently (brk req --rate-depth=0 ran), never
// kong's bare "unknown flag". A flag added to a test is covered at once.
func TestOtherTestsFlags(t *testing.T) {
	testenv.Parallel(t, testenv.Waits)
	u := "http://127.0.0.1:1/plain"
	tests := map[string][]string{"req": {u}, "conn": {u}, "rate": {u}, "ab": {u, u}}
	flags := map[string]map[string]string{}
	for cmd := range tests {
		flags[cmd] = helpFlags(t, cmd)
	}
	n := 0
	for cmd, args := range tests {
		foreign := map[string]string{} // a flag of another test → its placeholder
		for other := range tests {
			for name, ph := range flags[other] {
				if _, ok := flags[cmd][name]; !ok {
					foreign[name] = ph
				}
			}
		}
		for name, ph := range foreign {
			n++
			t.Run(cmd+"/"+name, func(t *testing.T) {
				line := append([]string{cmd}, args...)
				if ph == "" {
					line = append(line, "--"+name)
				} else {
					line = append(line, "--"+name+"="+valueFor(ph))
				}
				r := runBrk(t, line...)
				want := regexp.MustCompile(`^brk: --` + regexp.QuoteMeta(name) + ` applies to (the [a-z, ]+ tests?|brk ab)\b.* only\n$`)
				if r.code != 2 || !want.MatchString(r.stderr) {
					t.Errorf("brk %s: want exit 2 and \"brk: --%s applies to <its test> only\"\n%s", strings.Join(line, " "), name, r)
				}
			})
		}
	}
	if n < 10 {
		t.Errorf("only %d flags of other tests found", n)
	}
}

// TestZeroMeaningfulAccepted: the zeros that are values of their own
// parse and pass the typed-zero rules (brk bench --threads 0 is the
// CPUs usable by the process, not a refusal).
func TestZeroMeaningfulAccepted(t *testing.T) {
	for _, f := range zeroMeaningful {
		cmd, flag, _ := strings.Cut(f, " ")
		var c cli
		exited := -1
		p, err := newParser(&c, io.Discard, io.Discard, &exited)
		if err != nil {
			t.Fatal(err)
		}
		kctx, err := parseArgs(p, []string{cmd, flag + "=0"})
		if err != nil || exited >= 0 {
			t.Fatalf("%s=0 does not parse: %v", f, err)
		}
		if err := refuseTypedZeros(kctx); err != nil {
			t.Errorf("%s=0 refused: %v", f, err)
		}
	}
}

// valueFlags is every flag of command cmd that takes a value (not a
// switch), read from the kong model, so that a flag added later is
// covered at once.
func valueFlags(t *testing.T, cmd string) []string {
	t.Helper()
	var c cli
	exited := -1
	p, err := newParser(&c, io.Discard, io.Discard, &exited)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, n := range p.Model.Children {
		if n.Name != cmd {
			continue
		}
		for _, f := range n.Flags {
			if !f.IsBool() && !f.IsCounter() {
				names = append(names, f.Name)
			}
		}
	}
	if len(names) == 0 {
		t.Fatalf("brk %s: no flag takes a value", cmd)
	}
	return names
}

// TestEmptyEveryFlag: every flag that takes a value, given an empty one
// (--run-id=, --targets=), is refused before any traffic (exit 2, one
// line naming the flag) unless an empty value is a value of its own
// (emptyMeaningful): an empty value never runs as if the flag were left
// out (issue 29 item 7).
func TestEmptyEveryFlag(t *testing.T) {
	testenv.Parallel(t, testenv.Busy)
	u := "http://127.0.0.1:1/plain"
	commands := map[string][]string{
		"req": {u}, "conn": {u}, "rate": {u, "--arrivals", "poisson"}, "ab": {u, u},
		"fixture": {"--listen", "127.0.0.1:0"}, "demo": nil, "bench": nil, "merge": {"a.json"},
	}
	n := 0
	for cmd, args := range commands {
		for _, name := range valueFlags(t, cmd) {
			if slices.Contains(emptyMeaningful, name) {
				continue
			}
			n++
			t.Run(cmd+"/"+name, func(t *testing.T) {
				line := append(append([]string{cmd}, args...), "--"+name+"=")
				r := runBrk(t, line...)
				if r.code != 2 || strings.Count(r.stderr, "\n") != 1 || !strings.HasPrefix(r.stderr, "brk: ") || !strings.Contains(r.stderr, "--"+name) {
					t.Errorf("brk %s: want exit 2 with one line naming --%s\n%s", strings.Join(line, " "), name, r)
				}
			})
		}
	}
	if n < 40 {
		t.Errorf("only %d flags that take a value found", n)
	}
}

// TestEmptyMeaningfulAccepted: the flags whose empty value is a value of
// its own (--expect-body "" expects an empty body) parse it and pass the
// empty-value rule.
func TestEmptyMeaningfulAccepted(t *testing.T) {
	for _, cmd := range []string{"req", "conn", "rate", "ab"} {
		for _, flag := range emptyMeaningful {
			var c cli
			exited := -1
			p, err := newParser(&c, io.Discard, io.Discard, &exited)
			if err != nil {
				t.Fatal(err)
			}
			args := []string{cmd, "http://127.0.0.1:1/", "--" + flag, ""}
			if cmd == "ab" {
				args = append(args[:2], append([]string{"http://127.0.0.1:1/"}, args[2:]...)...)
			}
			kctx, err := parseArgs(p, args)
			if err != nil || exited >= 0 {
				t.Fatalf("%s --%s '': does not parse: %v", cmd, flag, err)
			}
			if err := refuseEmpty(kctx); err != nil {
				t.Errorf("%s --%s '' refused: %v", cmd, flag, err)
			}
		}
	}
}
