package main

import (
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/brk-bench/brk/bench"

	"github.com/brk-bench/brk/internal/testenv"
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
	testenv.Parallel(t, testenv.Busy)
	full := devFull(t)
	fx := startFixture(t, bench.FixtureConfig{})
	nothing := "http://" + testenv.RefusingAddr(t) + "/plain"
	quick := []string{"--conn", "2", "--max", "1", "--phase", "200ms", "--threads", "1", "--timeout", "1s"}
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
	p := startBrk(t, nil, fx.URL("/plain"), "--conn", "2", "--threads", "1", "--timeout", "1s", "--phase", "10s", "--json", full)
	p.waitFor("worker thread", 10*time.Second)
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

// runClosedStdout runs the binary with stdout connected to a pipe whose
// read end the test closes after reading readFirst bytes (0: before the
// child writes anything), and returns the run and how it ended.
func runClosedStdout(t *testing.T, readFirst int, args ...string) (result, syscall.WaitStatus) {
	t.Helper()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(brkBin, args...)
	stderr := &syncBuf{}
	cmd.Stdout, cmd.Stderr = pw, stderr
	if readFirst == 0 {
		pr.Close() // closed before the child exists: every stdout write fails
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	var got []byte
	if readFirst > 0 {
		got = make([]byte, readFirst)
		if _, err := io.ReadFull(pr, got); err != nil {
			t.Fatalf("read %d bytes of stdout: %v", readFirst, err)
		}
		pr.Close()
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(runTimeout):
		cmd.Process.Kill()
		<-done
		t.Fatalf("brk did not finish within %v\nstderr:\n%s", runTimeout, stderr)
	}
	ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
	r := result{args: args, code: cmd.ProcessState.ExitCode(), stdout: string(got), stderr: stderr.String(),
		elapsed: time.Since(start)}
	checkNoCrash(t, r)
	return r, ws
}

// TestClosedStdout: brk … --json r.json | head -c1. The closed stdout does
// not kill brk (no SIGPIPE death): the run finishes, the report files are
// complete, the exit code is the verdict's, and stderr says stdout was
// lost.
func TestClosedStdout(t *testing.T) {
	testenv.Parallel(t, testenv.Busy)
	fx := startFixture(t, bench.FixtureConfig{})
	dir := t.TempDir()
	jsonPath, htmlPath := dir+"/r.json", dir+"/r.html"
	r, ws := runClosedStdout(t, 1, fx.URL("/plain"), "--conn", "2", "--start", "1", "--max", "2",
		"--phase", "200ms", "--threads", "1", "--timeout", "1s", "--json", jsonPath, "--report", htmlPath)
	if ws.Signaled() {
		t.Fatalf("brk died of signal %v\n%s", ws.Signal(), r)
	}
	if r.code != 0 {
		t.Fatalf("exit %d, want 0 (the verdict's code)\n%s", r.code, r)
	}
	rep := readReport(t, jsonPath)
	if rep.Verdict != "done" || len(rep.Phases) != 2 {
		t.Errorf("JSON verdict %q with %d phases, want done with 2\n%s", rep.Verdict, len(rep.Phases), r)
	}
	checkCounts(t, rep)
	html, err := os.ReadFile(htmlPath)
	if err != nil || !strings.Contains(string(html), "</html>") {
		t.Errorf("HTML report incomplete (%d bytes, %v)", len(html), err)
	}
	if !strings.Contains(r.stderr, "brk: stdout: ") || !strings.Contains(r.stderr, "broken pipe") {
		t.Errorf("stderr does not say that stdout was lost\n%s", r)
	}
}

// TestClosedStdoutJSON: --json - to a closed stdout is a requested report
// that could not be written: exit 4, named on stderr, where the verdict
// line still is.
func TestClosedStdoutJSON(t *testing.T) {
	fx := startFixture(t, bench.FixtureConfig{})
	r, ws := runClosedStdout(t, 0, fx.URL("/plain"), "--conn", "2", "--max", "1",
		"--phase", "200ms", "--threads", "1", "--timeout", "1s", "--json", "-")
	if ws.Signaled() {
		t.Fatalf("brk died of signal %v\n%s", ws.Signal(), r)
	}
	if r.code != 4 {
		t.Fatalf("exit %d, want 4\n%s", r.code, r)
	}
	if !strings.Contains(r.stderr, "brk: the --json report - could not be written") {
		t.Errorf("stderr does not name the failed report\n%s", r)
	}
	if last := lastLine(r.stderr); last != "Done (2 concurrent requests)" {
		t.Errorf("last stderr line %q, want the verdict line\n%s", last, r)
	}
}
