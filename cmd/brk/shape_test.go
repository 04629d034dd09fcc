package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/brk-bench/brk"
	"github.com/brk-bench/brk/bench"

	"github.com/brk-bench/brk/internal/e2ekit"
	"github.com/brk-bench/brk/internal/testenv"
)

// The shape of what a user reads — the text's lines and the JSON report's
// fields — is recorded in testdata/shape, numbers and timings aside, so
// that a refactoring that means to change nothing a user sees is checked
// against the output of the binary before it. BRK_SHAPE_BIN runs another
// binary (the one before a change) and -update-shape records its output.
var updateShape = flag.Bool("update-shape", false, "record testdata/shape from the binary under test")

var (
	numberRE = regexp.MustCompile(`[0-9]+(\.[0-9]+)?`)
	pluralRE = regexp.MustCompile(`\bN ([a-z]+)s\b`)
	spacesRE = regexp.MustCompile(` +`)
	// clientBoundRE is the summary's note on client-bound phases: whether
	// it appears is a measurement of the machine (its worker threads were
	// 90 % busy), like a number, not part of the output's shape.
	clientBoundRE = regexp.MustCompile(`(?m)^note: .* client_bound: .*\n`)
	// evidenceRE is a phase's evidence line and the summary's stall and
	// conflict lines: whether a phase was judged on a busy box, too close
	// to call or a stall measures the machine too.
	evidenceRE = regexp.MustCompile(`(?m)^(  evidence|stall|conflict|busy|knee): .*\n`)
	// noisyKeys are the evidence's flags, present only when they hold, and
	// the knee and the accepted phases' peak, present when the
	// measurements had them.
	noisyKeys = regexp.MustCompile(`(\.evidence\.(busy|too_close|stall)|^\.knee|^\.peak_accepted)(\.|$)`)
	// peakRE is what the peak line measures beyond its numbers: the peak
	// phase's verdict, and the accepted phases' peak beside it.
	peakRE = regexp.MustCompile(`(?m)^(peak: .*), (accepted|rejected|inconclusive|not judged), (.*?\))(; of the accepted phases .*)?$`)
	// thousandsRE folds a number's thousands separators (N,N is N).
	thousandsRE = regexp.MustCompile(`N(,N)+`)
	// bytesRE folds a byte count's unit, which its size chooses.
	bytesRE = regexp.MustCompile(`N (B|kB|MB|GB)\b`)
)

// textShape is stdout with the client-bound note dropped, every number
// replaced and runs of spaces (the alignment numbers cause) folded.
func textShape(s string) string {
	s = clientBoundRE.ReplaceAllString(s, "")
	s = evidenceRE.ReplaceAllString(s, "")
	s = peakRE.ReplaceAllString(s, "$1, VERDICT, $3")
	s = numberRE.ReplaceAllString(s, "N")
	s = thousandsRE.ReplaceAllString(s, "N")
	s = bytesRE.ReplaceAllString(s, "N BYTES")
	s = pluralRE.ReplaceAllString(s, "N $1") // "1 wait", "2 waits": one shape
	return spacesRE.ReplaceAllString(s, " ")
}

// jsonShape lists the JSON report's field paths, each with its value where
// the value names a category of run (verdict, test, protocol) and its
// kind elsewhere.
func jsonShape(t *testing.T, b []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("JSON report: %v\n%s", err, b)
	}
	var lines []string
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if noisyKeys.MatchString(path + "." + k) {
					continue
				}
				walk(path+"."+k, e)
			}
		case []any:
			if strings.HasSuffix(path, ".latency_distribution") || strings.HasSuffix(path, ".points") {
				// A series whose length is a measurement: one element's shape.
				if len(x) > 0 {
					walk(path+"[*]", x[0])
				}
				return
			}
			for i, e := range x {
				walk(fmt.Sprintf("%s[%d]", path, i), e)
			}
		case string:
			switch {
			case strings.HasSuffix(path, ".verdict"), strings.HasSuffix(path, ".test"), strings.HasSuffix(path, ".protocol"):
				lines = append(lines, path+" = "+x)
			default:
				lines = append(lines, path+" string")
			}
		case bool:
			lines = append(lines, path+" bool")
		default:
			lines = append(lines, path+" number") // null where unmeasured counts as a number
		}
	}
	walk("", v)
	sort.Strings(lines)
	return strings.Join(lines, "\n") + "\n"
}

func TestOutputShapeUnchanged(t *testing.T) {
	bin := brkBin
	if b := os.Getenv("BRK_SHAPE_BIN"); b != "" {
		bin = b
	}
	plain := startFixture(t, bench.FixtureConfig{})
	slow := startFixture(t, bench.FixtureConfig{Capacity: 1, Service: 20 * time.Millisecond})
	closed := testenv.RefusingAddr(t)
	for _, c := range []struct {
		name string
		code int
		args []string
	}{
		{"req-done", 0, []string{plain.URL("/plain"), "--conn", "2", "--max", "2", "--phase", "200ms", "--threads", "1", "--timeout", "1s", "--repeat", "1", "--expect-body", "ok"}},
		{"req-broken", 1, []string{slow.URL("/plain"), "--conn", "2", "--phase", "200ms", "--timeout", "50ms", "--threads", "1", "--repeat", "1"}},
		{"conn-done", 0, []string{"conn", plain.URL("/plain"), "--max", "2", "--requests", "2", "--phase", "200ms", "--threads", "1", "--timeout", "1s", "--repeat", "1"}},
		{"rate-done", 0, []string{"rate", plain.URL("/plain"), "--conn", "2", "--start", "100", "--pace", "100", "--max", "200", "--phase", "200ms", "--threads", "1", "--timeout", "1s", "--repeat", "1"}},
		{"inconclusive", 3, []string{"http://" + closed + "/", "--conn", "2", "--phase", "200ms", "--threads", "1", "--repeat", "1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			golden := filepath.Join("testdata", "shape", c.name+".golden")
			// A busy box can change a run's path (a busy suite run: the
			// broken run's first level, 20 ms to spare of 50, rejected,
			// then a downward search): its phases say so, and the run is
			// made again, then skipped (e2ekit.AgainOnBusy).
			for attempt := 1; ; attempt++ {
				path := filepath.Join(t.TempDir(), "r.json")
				saved := brkBin
				brkBin = bin
				r := runBrk(t, append(c.args, "--json", path)...)
				brkBin = saved
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				busy := e2ekit.BusyPhases(readResult(t, path))
				if r.code != c.code {
					if e2ekit.AgainOnBusy(t, attempt, busy, fmt.Sprintf("exit %d", r.code)) {
						continue
					}
					t.Fatalf("exit %d, want %d\n%s", r.code, c.code, r)
				}
				got := textShape(forcedBackendAside(t, r.stdout)) + "----\n" + jsonShape(t, b)
				if os.Getenv("BRK_IO") == brk.IOUring { // the report's "io": "uring", as the header's
					if !strings.Contains(got, "\n.io string\n") {
						t.Errorf("BRK_IO=uring, and the JSON report has no io")
					}
					got = strings.Replace(got, "\n.io string\n", "\n", 1)
				}
				if *updateShape {
					if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatal(err)
				}
				if got == string(want) {
					return
				}
				if e2ekit.AgainOnBusy(t, attempt, busy, fmt.Sprintf("a shape unlike %s:\n%s", golden, lineDiff(string(want), got))) {
					continue
				}
				t.Fatalf("output shape changed (%s):\n%s", golden, lineDiff(string(want), got))
			}
		})
	}
}

// forcedBackendAside takes out of stdout what BRK_IO=uring adds to it (the
// header's " on io_uring", which it must hold), so that the suite run on
// the ring compares the same shape; the golden files are the default
// backend's.
func forcedBackendAside(t *testing.T, stdout string) string {
	t.Helper()
	if os.Getenv("BRK_IO") != brk.IOUring {
		return stdout
	}
	const mark = " on io_uring\n"
	if !strings.Contains(stdout, mark) {
		t.Errorf("BRK_IO=uring, and the header does not say io_uring:\n%s", stdout)
	}
	return strings.Replace(stdout, mark, "\n", 1)
}

// lineDiff lists the lines only one side has.
func lineDiff(want, got string) string {
	count := map[string]int{}
	for _, l := range strings.Split(want, "\n") {
		count[l]++
	}
	for _, l := range strings.Split(got, "\n") {
		count[l]--
	}
	var out []string
	for l, n := range count {
		switch {
		case n > 0:
			out = append(out, "- "+l)
		case n < 0:
			out = append(out, "+ "+l)
		}
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// TestTextShapeDropsClientBoundNote: the shape golden does not depend on
// how busy the machine was.
func TestTextShapeDropsClientBoundNote(t *testing.T) {
	in := "Held 8 concurrent requests\nnote: 1 phase was client_bound: their req/s describes the client, not the server\nDone (8 concurrent requests)\n"
	if got, want := textShape(in), "Held N concurrent requests\nDone (N concurrent requests)\n"; got != want {
		t.Fatalf("textShape = %q, want %q", got, want)
	}
}
