package main

import (
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/brk-bench/brk/internal/testenv"
)

// helpFlagRE is a flag line of a command's --help: its name and, after
// "=", its placeholder or default.
// (Continuation lines of a description are indented further.)
var helpFlagRE = regexp.MustCompile(`(?m)^(?:  -\w, |      )--([a-z0-9-]+)(?:=(\S+))?`)

// valueFor is a value a flag's help line promises to take.
func valueFor(ph string) string {
	switch {
	case strings.HasPrefix(ph, `"`):
		return strings.Trim(ph, `"`) // its default
	case ph == "INT" || ph == "N" || ph == "PID" || ph == "PID,..." || ph == "N,..." || ph == "D,...":
		return "2"
	case ph == "FACTOR":
		return "1.5"
	case ph == "DURATION":
		return "1s"
	case ph == "HOST:PORT" || ph == "ADDR":
		return "127.0.0.1:9"
	case ph == "CODE,...":
		return "200,204"
	case ph == "1.2|1.3":
		return "1.3"
	case ph == "I/N":
		return "0/2"
	case strings.HasPrefix(ph, "uniform:"):
		return "uniform:1ms-2ms"
	case strings.ToUpper(ph) != ph || strings.ContainsAny(ph[:1], "0123456789"):
		return ph // a default such as 64, 10s, h1
	}
	return "x"
}

// TestHelpFlagsAccepted: every flag that a command's --help lists is
// accepted by that command's parser, with a value of the kind its help
// line names, so that no help text offers what the command refuses to
// parse.
func TestHelpFlagsAccepted(t *testing.T) {
	t.Parallel() // its subtests take their shares
	u := "http://127.0.0.1:9/"
	commands := map[string][]string{
		"req": {u}, "conn": {u}, "rate": {u}, "ab": {u, u},
		"fixture": nil, "demo": nil, "bench": nil, "merge": {"a.json", "b.json"},
		"compare": {"a.json", "b.json"},
	}
	for cmd, args := range commands {
		t.Run(cmd, func(t *testing.T) {
			testenv.Parallel(t, testenv.Busy) // parsing (a CPU under -race), timing nothing
			h := runBrk(t, cmd, "--help")
			if h.code != 0 {
				t.Fatalf("%s --help: exit %d\n%s", cmd, h.code, h)
			}
			flags := helpFlagRE.FindAllStringSubmatch(h.stdout, -1)
			if len(flags) < 2 { // --help and --version at least
				t.Fatalf("%s --help lists %d flags\n%s", cmd, len(flags), h.stdout)
			}
			// One parser for the command's flags: each Parse resets the
			// model to its defaults before it applies a line (kong's
			// Context.Reset), so no flag's value leaks into the next line;
			// a parser a line took ~60 ms of the race detector's time.
			var c cli
			exited := -1
			p, err := newParser(&c, io.Discard, io.Discard, &exited)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range flags {
				name, ph := f[1], f[2]
				if name == "help" || name == "version" {
					continue
				}
				line := append([]string{cmd}, args...)
				if ph == "" {
					line = append(line, "--"+name)
				} else {
					line = append(line, "--"+name+"="+valueFor(ph))
				}
				exited = -1
				if _, err := parseArgs(p, line); err != nil || exited >= 0 {
					t.Errorf("%s --help lists --%s (%s), but %q does not parse: %v", cmd, name, ph, strings.Join(line, " "), err)
				}
			}
		})
	}
}
