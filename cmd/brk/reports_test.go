package main

import (
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"brk/bench"
)

// devFull is a file every write to fails with ENOSPC.
func devFull(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full on this system")
	}
	return "/dev/full"
}

// TestReportWriteFailed: a requested --json or --report that cannot be
// written exits 4 instead of the verdict's 0, 1 or 3, names the report on
// stderr, and still prints the verdict line.
func TestReportWriteFailed(t *testing.T) {
	full := devFull(t)
	fx := startFixture(t, bench.FixtureConfig{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	nothing := "http://" + ln.Addr().String() + "/plain"
	ln.Close()
	quick := []string{"--conn", "2", "--max", "1", "--phase", "200ms", "--threads", "1"}
	cases := []struct {
		name    string
		args    []string
		verdict string // prefix of the last stdout line
		flag    string // the report flag named on stderr
	}{
		{"json done", append([]string{fx.URL("/plain"), "--json", full}, quick...), "Done (", "--json"},
		{"report done", append([]string{fx.URL("/plain"), "--report", full}, quick...), "Done (", "--report"},
		{"json broken", append([]string{fx.URL("/plain"), "--expect-body", "nope", "--json", full}, quick...), "Broken (", "--json"},
		{"report inconclusive", append([]string{nothing, "--report", full}, quick...), "Inconclusive: ", "--report"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := runBrk(t, c.args...)
			if r.code != 4 {
				t.Fatalf("exit %d, want 4\n%s", r.code, r)
			}
			if last := lastLine(r.stdout); !strings.HasPrefix(last, c.verdict) {
				t.Errorf("last stdout line %q, want the verdict %q...\n%s", last, c.verdict, r)
			}
			if !strings.Contains(r.stderr, "brk: the "+c.flag) || !strings.Contains(r.stderr, full) ||
				!strings.Contains(r.stderr, "could not be written") {
				t.Errorf("stderr does not name the failed %s report %s\n%s", c.flag, full, r)
			}
		})
	}
	// A good report beside a failed one is still written, and the exit is
	// still 4.
	t.Run("json ok report failed", func(t *testing.T) {
		path := t.TempDir() + "/r.json"
		r := runBrk(t, append([]string{fx.URL("/plain"), "--json", path, "--report", full}, quick...)...)
		if r.code != 4 {
			t.Fatalf("exit %d, want 4\n%s", r.code, r)
		}
		if rep := readReport(t, path); rep.Verdict != "done" {
			t.Errorf("JSON verdict %q, want done", rep.Verdict)
		}
	})
}

// TestReportWriteFailedInterrupted: an interrupted run keeps 130 even when
// a requested report could not be written, but stderr still names it.
func TestReportWriteFailedInterrupted(t *testing.T) {
	full := devFull(t)
	fx := startFixture(t, bench.FixtureConfig{})
	p := startBrk(t, nil, fx.URL("/plain"), "--conn", "2", "--threads", "1", "--phase", "10s", "--json", full)
	p.waitFor("worker threads", 10*time.Second)
	time.Sleep(200 * time.Millisecond)
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	r := p.wait()
	expect(t, r, 130, "Interrupted")
	if !strings.Contains(r.stderr, "brk: the --json report "+full+" could not be written") {
		t.Errorf("stderr does not name the failed report\n%s", r)
	}
}
