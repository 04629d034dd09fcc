package main

// End-to-end tests of the brk binary: TestMain builds it once, and every
// test runs it as a child process and checks its exit code, its final
// stdout line (README.md's exit codes table) and, where asked, its JSON
// report (docs/reports.md).

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/brk-bench/brk/bench"
	"github.com/brk-bench/brk/internal/testenv"
	"github.com/brk-bench/brk/internal/uring"
)

// brkBin is the binary built by TestMain.
var brkBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "brk-e2e-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "mkdtemp: %v\n", err)
		os.Exit(1)
	}
	brkBin = filepath.Join(dir, "brk")
	build := exec.Command("go", "build", "-o", brkBin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	testenv.SetParallel()
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// runTimeout bounds every child process: a sharded rate search of 1 s
// phases on slots of about 1.7 s, its final pair confirmed, runs about 15
// slots.
const runTimeout = 60 * time.Second

// result is one finished run of the binary.
type result struct {
	args    []string
	code    int
	stdout  string
	stderr  string
	elapsed time.Duration
}

func (r result) String() string {
	return fmt.Sprintf("brk %s\nexit %d after %v\n--- stdout:\n%s--- stderr:\n%s",
		strings.Join(r.args, " "), r.code, r.elapsed.Round(time.Millisecond), r.stdout, r.stderr)
}

// syncBuf is a bytes.Buffer safe to read while the child writes to it.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// proc is a running child.
type proc struct {
	t      *testing.T
	cmd    *exec.Cmd
	cancel context.CancelFunc
	stdout *syncBuf
	stderr *syncBuf
	start  time.Time
	args   []string
}

// childEnvs are the variables childEnv set, by test name.
var (
	childEnvMu sync.Mutex
	childEnvs  = map[string]map[string]string{}
)

// childEnv sets an environment variable for the brk processes that t
// (and its subtests) start from now on: t.Setenv's effect on the
// children, leaving the test process's environment alone, so that the
// test may run in parallel.
func childEnv(t *testing.T, key, value string) {
	childEnvMu.Lock()
	defer childEnvMu.Unlock()
	name := t.Name()
	m := childEnvs[name]
	if m == nil {
		m = map[string]string{}
		childEnvs[name] = m
		t.Cleanup(func() {
			childEnvMu.Lock()
			defer childEnvMu.Unlock()
			delete(childEnvs, name)
		})
	}
	m[key] = value
}

// childEnviron is the environment of a brk process t starts: the test
// process's, then what childEnv set for t's enclosing tests and for t
// (the innermost last: of duplicate keys exec uses the last).
func childEnviron(t *testing.T) []string {
	childEnvMu.Lock()
	defer childEnvMu.Unlock()
	env := os.Environ()
	parts := strings.Split(t.Name(), "/")
	for i := 1; i <= len(parts); i++ {
		for k, v := range childEnvs[strings.Join(parts[:i], "/")] {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// startBrk starts the binary with args under a runTimeout context, in
// childEnviron(t).
func startBrk(t *testing.T, stdin io.Reader, args ...string) *proc {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	cmd := exec.CommandContext(ctx, brkBin, args...)
	cmd.Env = childEnviron(t)
	cmd.WaitDelay = 2 * time.Second
	p := &proc{t: t, cmd: cmd, cancel: cancel, stdout: &syncBuf{}, stderr: &syncBuf{}, args: args}
	cmd.Stdout, cmd.Stderr, cmd.Stdin = p.stdout, p.stderr, stdin
	p.start = time.Now()
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start brk: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		if cmd.ProcessState == nil {
			_ = cmd.Wait()
		}
	})
	return p
}

// wait waits for the child and checks that it did not crash.
func (p *proc) wait() result {
	p.t.Helper()
	err := p.cmd.Wait()
	p.cancel()
	r := result{args: p.args, stdout: p.stdout.String(), stderr: p.stderr.String(), elapsed: time.Since(p.start)}
	if err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			p.t.Fatalf("wait brk: %v\n%s", err, r)
		}
	}
	r.code = p.cmd.ProcessState.ExitCode()
	if r.code == -1 {
		p.t.Fatalf("brk was killed (%v), probably by the %v test timeout\n%s", p.cmd.ProcessState, runTimeout, r)
	}
	checkNoCrash(p.t, r)
	return r
}

// waitFor polls the child's stdout until it contains s.
func (p *proc) waitFor(s string, within time.Duration) {
	p.t.Helper()
	deadline := time.Now().Add(within)
	for !strings.Contains(p.stdout.String(), s) {
		if time.Now().After(deadline) {
			p.t.Fatalf("no %q on stdout within %v\nstdout:\n%s\nstderr:\n%s", s, within, p.stdout, p.stderr)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// runBrk runs the binary to completion.
func runBrk(t *testing.T, args ...string) result {
	t.Helper()
	return startBrk(t, nil, args...).wait()
}

// checkNoCrash fails on any sign of a Go panic or stack dump.
func checkNoCrash(t *testing.T, r result) {
	t.Helper()
	for _, bad := range []string{"panic:", "goroutine "} {
		if strings.Contains(r.stderr, bad) || strings.Contains(r.stdout, bad) {
			t.Fatalf("output contains %q\n%s", bad, r)
		}
	}
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

func expect(t *testing.T, r result, code int, last string) {
	t.Helper()
	if r.code != code {
		t.Fatalf("exit %d, want %d\n%s", r.code, code, r)
	}
	if got := lastLine(r.stdout); got != last {
		t.Fatalf("last stdout line %q, want %q\n%s", got, last, r)
	}
}

// verdictLine reports whether a line is one of the final lines of README.md's
// exit codes table.
func verdictLine(l string) bool {
	return strings.HasPrefix(l, "Done (") || strings.HasPrefix(l, "Broken (") ||
		strings.HasPrefix(l, "Inconclusive:") || l == "Interrupted"
}

func startFixture(t *testing.T, cfg bench.FixtureConfig) *bench.Fixture {
	t.Helper()
	fx, err := bench.StartFixture(cfg)
	if err != nil {
		t.Fatalf("StartFixture: %v", err)
	}
	t.Cleanup(func() { _ = fx.Close() })
	return fx
}

// jsonReport mirrors the schema-1 JSON fields the tests read.
type jsonReport struct {
	Schema        int     `json:"schema"`
	Test          string  `json:"test"`
	URL           string  `json:"url"`
	Verdict       string  `json:"verdict"`
	Reason        string  `json:"reason"`
	LastAccepted  *int    `json:"last_accepted"`
	FirstRejected *int    `json:"first_rejected"`
	Phases        []phase `json:"phases"`
}

type phase struct {
	Index       int  `json:"index"`
	Level       int  `json:"level"`
	Accepted    bool `json:"accepted"`
	Interrupted bool `json:"interrupted"`
	Counts      struct {
		Attempted      uint64 `json:"attempted"`
		Succeeded      uint64 `json:"succeeded"`
		Timeout        uint64 `json:"timeout"`
		Transport      uint64 `json:"transport"`
		Abandoned      uint64 `json:"abandoned"`
		Connect        uint64 `json:"connect"`
		ConnectTimeout uint64 `json:"connect_timeout"`
		Status         uint64 `json:"status"`
		Body           uint64 `json:"body"`
		Protocol       uint64 `json:"protocol"`
	} `json:"counts"`
	SuccessPct float64 `json:"success_pct"`
}

func readReport(t *testing.T, path string) jsonReport {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read JSON report: %v", err)
	}
	return decodeReport(t, b)
}

func decodeReport(t *testing.T, b []byte) jsonReport {
	t.Helper()
	var rep jsonReport
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&rep); err != nil {
		t.Fatalf("JSON report does not decode: %v\n%s", err, b)
	}
	if dec.More() {
		t.Fatalf("JSON report has trailing data\n%s", b)
	}
	if rep.Schema != 1 || rep.Test != "requests" {
		t.Errorf("schema %d test %q, want 1 requests", rep.Schema, rep.Test)
	}
	return rep
}

// checkCounts checks that every phase's categories add up and that
// success_pct is succeeded/attempted·100.
func checkCounts(t *testing.T, rep jsonReport) {
	t.Helper()
	for _, p := range rep.Phases {
		c := p.Counts
		sum := c.Succeeded + c.Timeout + c.Transport + c.Abandoned + c.Connect + c.ConnectTimeout +
			c.Status + c.Body + c.Protocol
		if c.Attempted != sum {
			t.Errorf("phase %d: attempted %d != succeeded + failures %d (%+v)", p.Index, c.Attempted, sum, c)
		}
		if c.Attempted == 0 {
			t.Errorf("phase %d: no attempts", p.Index)
			continue
		}
		want := float64(c.Succeeded) / float64(c.Attempted) * 100
		if math.Abs(p.SuccessPct-want) > 1e-9*math.Max(1, want) {
			t.Errorf("phase %d: success_pct %v, want %v (%d/%d)", p.Index, p.SuccessPct, want, c.Succeeded, c.Attempted)
		}
	}
}

func levels(rep jsonReport) []int {
	var ls []int
	for _, p := range rep.Phases {
		ls = append(ls, p.Level)
	}
	return ls
}

func intp(p *int) string {
	if p == nil {
		return "null"
	}
	return fmt.Sprint(*p)
}

// TestDone: the --max level completed and accepted exits 0.
func TestDone(t *testing.T) {
	testenv.Parallel(t, testenv.Waits)
	fx := startFixture(t, bench.FixtureConfig{})
	r := runBrk(t, fx.URL("/plain"), "--conn", "4", "--start", "1", "--pace", "1", "--max", "2",
		"--phase", "300ms", "--threads", "1", "--timeout", "1s", "--expect-body", "ok")
	expect(t, r, 0, "Done (8 concurrent requests)")
}

// The predicted break has 80 ms of margin below (300 ms against a 380 ms
// budget), and phase 0 has 280 ms. A loaded test machine
// (other processes saturating the CPUs) stalls the fixture or the client
// for longer than that now and then, and a phase that should pass loses a
// few requests to timeouts. Stalls only make latency worse: they can make
// brk break early, never late, and they only cause timeouts (and the
// abandoned followers of a timed-out request). runTimed therefore reruns
// a run, up to timedAttempts in all, only when it broke below the
// predicted level with nothing but timeout/abandoned failures; any other
// discrepancy fails at once.
const timedAttempts = 3

// failuresRE matches the per-phase failures line of the verbose text.
var failuresRE = regexp.MustCompile(`(?m)^\s*failures\s+(.*)$`)

// phaseLineRE matches a phase line of the default text, and failureRE
// the failures named on it ("timeout: 3").
var (
	phaseLineRE = regexp.MustCompile(`(?m)^phase \d+ .*$`)
	failureRE   = regexp.MustCompile(`\b(timeout|transport|abandoned|connect|connect_timeout|status|body|protocol): `)
)

// timingOnly reports whether every failure in the human text (default or
// verbose) is a timeout or an abandoned request.
func timingOnly(stdout string) bool {
	for _, line := range phaseLineRE.FindAllString(stdout, -1) {
		for _, m := range failureRE.FindAllStringSubmatch(line, -1) {
			if m[1] != "timeout" && m[1] != "abandoned" {
				return false
			}
		}
	}
	for _, m := range failuresRE.FindAllStringSubmatch(stdout, -1) {
		for _, item := range strings.Split(m[1], ",") {
			name, n, ok := strings.Cut(strings.TrimSpace(item), " ")
			if !ok {
				return false
			}
			if name != "timeout" && name != "abandoned" && strings.TrimSpace(n) != "0" {
				return false
			}
		}
	}
	return true
}

// brokenBelow reports whether the run ended Broken at a level below want.
func brokenBelow(r result, want int) bool {
	var n int
	if r.code != 1 {
		return false
	}
	if _, err := fmt.Sscanf(lastLine(r.stdout), "Broken (%d concurrent requests)", &n); err != nil {
		return false
	}
	return n < want
}

// runTimed runs a timing-sensitive command (see timedAttempts); want is
// the lowest level at which a correct run may break. A run brk ended
// inconclusive because the box was busy is run again, and the test skips
// when every attempt ended so.
func runTimed(t *testing.T, want int, args func() []string) result {
	t.Helper()
	for attempt := 1; ; attempt++ {
		r := runBrk(t, args()...)
		if busyInconclusive(r) {
			// brk said it could not tell the box's load from the server's.
			if attempt == timedAttempts {
				t.Skipf("inconclusive on a busy box in %d attempts, as it should be there: %s", attempt, lastLine(r.stdout))
			}
			t.Logf("attempt %d: inconclusive on a busy box (load %s); again", attempt, loadavg())
			continue
		}
		if attempt == timedAttempts || !brokenBelow(r, want) || !timingOnly(r.stdout) {
			return r
		}
		t.Logf("attempt %d broke early with only timeouts (a stalled machine?); retrying: %s (load %s)",
			attempt, lastLine(r.stdout), loadavg())
	}
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(b))
}

// TestPredictedBreak drives the demo's capacity-limited fixture (K=4,
// D=50ms, latency 100 ms per request per connection) with 8 connections
// and the demo's 380 ms timeout: depth 3 (300 ms) passes, depth 4 (400 ms)
// breaks.
func TestPredictedBreak(t *testing.T) {
	testenv.Parallel(t, testenv.Waits)
	d := bench.Demo()
	fx := startFixture(t, d.Fixture)
	args := []string{fx.URL("/plain"), "--conn", "8", "--start", "1", "--pace", "1",
		"--timeout", d.Plan.Timeout.String(), "--phase", "1s", "--threads", "1", "--expect-body", "ok"}

	t.Run("broken", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "report.json")
		r := runTimed(t, 32, func() []string { return append(args[:len(args):len(args)], "--json", path) })
		expect(t, r, 1, "Broken (32 concurrent requests)")
		rep := readReport(t, path)
		if rep.Verdict != "broken" {
			t.Errorf("verdict %q, want broken", rep.Verdict)
		}
		if rep.LastAccepted == nil || *rep.LastAccepted != 24 || rep.FirstRejected == nil || *rep.FirstRejected != 32 {
			t.Errorf("last_accepted %s first_rejected %s, want 24 32", intp(rep.LastAccepted), intp(rep.FirstRejected))
		}
		// Both ends of the final pair run again (24 held, 32 broke).
		if got := fmt.Sprint(levels(rep)); got != "[8 16 24 32 24 32]" {
			t.Errorf("phase levels %s, want [8 16 24 32 24 32]", got)
		}
		for i, p := range rep.Phases {
			if want := i < 3 || i == 4; p.Accepted != want || p.Index != i {
				t.Errorf("phase %d (index %d): accepted %v, want %v", i, p.Index, p.Accepted, want)
			}
		}
		checkCounts(t, rep)
		if t.Failed() {
			t.Logf("%s", r)
		}
	})

	t.Run("max3", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "report.json")
		r := runTimed(t, 32, func() []string { return append(args[:len(args):len(args)], "--max", "3", "--json", path) })
		expect(t, r, 0, "Done (24 concurrent requests)")
		rep := readReport(t, path)
		if rep.Verdict != "done" || rep.LastAccepted == nil || *rep.LastAccepted != 24 || rep.FirstRejected != nil {
			t.Errorf("verdict %q last_accepted %s first_rejected %s, want done 24 null",
				rep.Verdict, intp(rep.LastAccepted), intp(rep.FirstRejected))
		}
		if got := fmt.Sprint(levels(rep)); got != "[8 16 24]" {
			t.Errorf("phase levels %s, want [8 16 24]", got)
		}
		checkCounts(t, rep)
	})
}

// TestUsage: flag errors exit 2 with one "brk: " line on stderr and no
// verdict on stdout.
func TestUsage(t *testing.T) {
	u := "http://127.0.0.1:1/plain"
	cases := map[string][]string{
		"unknown flag":           {u, "--no-such-flag"},
		"missing URL req":        {"req"},
		"cacert and insecure":    {u, "--cacert", "x", "--insecure"},
		"tls flag on http":       {u, "--tls-version", "1.3"},
		"tls 1.3 with 1.2 suite": {"https://127.0.0.1:1/", "--tls-version", "1.3", "--tls-cipher", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"},
		"mlkem with tls 1.2":     {"https://127.0.0.1:1/", "--tls-version", "1.2", "--tls-group", "X25519MLKEM768"},
		"tls 1.3 suite alone":    {"https://127.0.0.1:1/", "--tls-cipher", "TLS_AES_128_GCM_SHA256"},
		"bad tls version":        {"https://127.0.0.1:1/", "--tls-version", "1.1"},
		"cert without key":       {"https://127.0.0.1:1/", "--cert", "x.pem"},
		"conn without URL":       {"conn"},
		"conn requests 0":        {"conn", u, "--requests", "0"},
		"no-resume on req":       {u, "--no-resume"},
		"accept abc":             {u, "--accept", "abc"},
		"accept 101":             {u, "--accept", "101"},
		"sla 101":                {u, "--sla", "101"},
		"threads over conn":      {u, "--conn", "2", "--threads", "4"},
		"header without colon":   {u, "-H", "nocolon"},
		"echo without body":      {u, "--expect-echo"},
		"unknown flag req":       {"req", u, "--bogus"},
		"rate without URL":       {"rate"},
		"rate bad arrivals":      {"rate", u, "--arrivals", "burst"},
		"rate seed uniform":      {"rate", u, "--seed", "3"},
		"rate requests flag":     {"rate", u, "--requests", "2"},
		"rate threads over conn": {"rate", u, "--conn", "2", "--threads", "4"},
		"rate-depth on req":      {u, "--rate-depth", "2"},
		"rate start over max":    {"rate", u, "--start", "500", "--max", "100"},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel() // each is refused before any traffic, timing nothing
			r := runBrk(t, args...)
			if r.code != 2 {
				t.Fatalf("exit %d, want 2\n%s", r.code, r)
			}
			lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "brk: ") || r.stderr != lines[0]+"\n" {
				t.Errorf("stderr is not one line starting \"brk: \"\n%s", r)
			}
			for _, l := range strings.Split(r.stdout, "\n") {
				if verdictLine(l) {
					t.Errorf("stdout has a verdict line %q\n%s", l, r)
				}
			}
		})
	}
}

// TestInconclusiveRefused: nothing listens, so phase 0 cannot set up a
// connection: exit 3, reason mentions "refused", and phase 0 ends early.
func TestInconclusiveRefused(t *testing.T) {
	addr := testenv.RefusingAddr(t)
	r := runBrk(t, "http://"+addr+"/plain", "--conn", "4", "--threads", "1", "--phase", "10s")
	if r.code != 3 {
		t.Fatalf("exit %d, want 3\n%s", r.code, r)
	}
	last := lastLine(r.stdout)
	if !strings.HasPrefix(last, "Inconclusive: ") || !strings.Contains(last, "refused") {
		t.Errorf("last line %q, want Inconclusive: ... refused\n%s", last, r)
	}
	if r.elapsed >= 5*time.Second {
		t.Errorf("took %v with --phase 10s, want < 5s: phase 0 should end once every setup fails", r.elapsed)
	}
}

// TestInterrupted: SIGINT or SIGTERM during phase 0 exits 130 with
// "Interrupted" and a JSON report whose cut-short phase is marked.
func TestInterrupted(t *testing.T) {
	testenv.Parallel(t, testenv.Waits)
	fx := startFixture(t, bench.FixtureConfig{})
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "report.json")
			p := startBrk(t, nil, fx.URL("/plain"), "--conn", "4", "--threads", "1", "--phase", "10s",
				"--json", path)
			p.waitFor("worker thread", 10*time.Second) // the header: workers are running
			time.Sleep(400 * time.Millisecond)
			sent := time.Now()
			if err := p.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			r := p.wait()
			expect(t, r, 130, "Interrupted")
			if d := time.Since(sent); d > 5*time.Second {
				t.Errorf("exited %v after the signal, want promptly", d)
			}
			rep := readReport(t, path)
			if rep.Verdict != "interrupted" {
				t.Errorf("verdict %q, want interrupted", rep.Verdict)
			}
			if len(rep.Phases) == 0 {
				t.Fatalf("no phases in the report\n%s", r)
			}
			cut := rep.Phases[len(rep.Phases)-1]
			if !cut.Interrupted || cut.Accepted {
				t.Errorf("cut-short phase %d: interrupted %v accepted %v, want true false", cut.Index, cut.Interrupted, cut.Accepted)
			}
			if rep.FirstRejected != nil {
				t.Errorf("first_rejected %d, want null after an interrupt in phase 0", *rep.FirstRejected)
			}
		})
	}
}

// TestJSONStdout: with --json - stdout is exactly one JSON document with
// the field names of docs/reports.md, and the human text is on stderr.
func TestJSONStdout(t *testing.T) {
	fx := startFixture(t, bench.FixtureConfig{})
	r := runBrk(t, fx.URL("/plain"), "--conn", "2", "--max", "1", "--phase", "300ms", "--threads", "1", "--timeout", "1s",
		"--json", "-")
	if r.code != 0 {
		t.Fatalf("exit %d, want 0\n%s", r.code, r)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("stdout is not one JSON document: %v\n%s", err, r)
	}
	if got := lastLine(r.stderr); got != "Done (2 concurrent requests)" {
		t.Errorf("last stderr line %q, want Done (2 concurrent requests)\n%s", got, r)
	}
	if !strings.Contains(r.stderr, "phase 0") {
		t.Errorf("human phase text missing from stderr\n%s", r)
	}
	hasKeys(t, "report", doc, "schema", "test", "url", "protocol", "verdict", "reason",
		"last_accepted", "first_rejected", "threads", "phases")
	if doc["verdict"] != "done" || doc["protocol"] != "http/1.1" || doc["test"] != "requests" {
		t.Errorf("verdict %v protocol %v test %v, want done http/1.1 requests", doc["verdict"], doc["protocol"], doc["test"])
	}
	phases, _ := doc["phases"].([]any)
	if len(phases) != 1 {
		t.Fatalf("%d phases, want 1", len(phases))
	}
	for i, pv := range phases {
		p, ok := pv.(map[string]any)
		if !ok {
			t.Fatalf("phases[%d] is %T", i, pv)
		}
		where := fmt.Sprintf("phases[%d]", i)
		hasKeys(t, where, p, "index", "level", "accepted", "duration_s", "counts", "success_pct",
			"requests_per_sec", "latency_ms", "mean_outstanding", "target_coverage_pct",
			"max_deadline_lateness_ms", "setups", "client_cpu", "machine_cpu_pct", "client_bound")
		hasKeys(t, where+".counts", sub(t, p, "counts"), "attempted", "succeeded", "timeout", "transport",
			"abandoned", "connect", "connect_timeout", "status", "body", "protocol")
		hasKeys(t, where+".latency_ms", sub(t, p, "latency_ms"), "count", "mean", "p50", "p90", "p99", "p999", "max")
		hasKeys(t, where+".setups", sub(t, p, "setups"), "attempted", "established", "failed", "timed_out", "resumed")
		hasKeys(t, where+".client_cpu", sub(t, p, "client_cpu"), "user_s", "system_s", "us_per_response")
	}
	checkCounts(t, decodeReport(t, []byte(r.stdout)))
}

func hasKeys(t *testing.T, where string, m map[string]any, keys ...string) {
	t.Helper()
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			t.Errorf("%s: missing field %q", where, k)
		}
	}
}

func sub(t *testing.T, m map[string]any, key string) map[string]any {
	t.Helper()
	v, ok := m[key].(map[string]any)
	if !ok {
		t.Errorf("%q is %T, want an object", key, m[key])
		return map[string]any{}
	}
	return v
}

// TestEcho: --body-file with --expect-echo passes against /echo and
// breaks with body failures against /plain.
func TestEcho(t *testing.T) {
	testenv.Parallel(t, testenv.Waits)
	fx := startFixture(t, bench.FixtureConfig{})
	dir := t.TempDir()
	body := filepath.Join(dir, "body.bin")
	if err := os.WriteFile(body, []byte("brk echo body \x00\x01\xff\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	common := []string{"--conn", "2", "--max", "1", "--phase", "300ms", "--threads", "1", "--timeout", "1s",
		"--body-file", body, "--expect-echo"}

	t.Run("echo", func(t *testing.T) {
		path := filepath.Join(dir, "echo.json")
		r := runBrk(t, append([]string{fx.URL("/echo")}, append(common, "--json", path)...)...)
		expect(t, r, 0, "Done (2 concurrent requests)")
		rep := readReport(t, path)
		checkCounts(t, rep)
		if len(rep.Phases) != 1 || rep.Phases[0].Counts.Succeeded == 0 || rep.Phases[0].Counts.Body != 0 {
			t.Errorf("phases %+v, want one phase with successes and no body failures", rep.Phases)
		}
	})

	t.Run("plain", func(t *testing.T) {
		path := filepath.Join(dir, "plain.json")
		r := runBrk(t, append([]string{fx.URL("/plain")}, append(common, "--json", path)...)...)
		expect(t, r, 1, "Broken (2 concurrent requests)")
		rep := readReport(t, path)
		checkCounts(t, rep)
		if rep.Verdict != "broken" || len(rep.Phases) != 1 {
			t.Fatalf("verdict %q with %d phases, want broken with 1", rep.Verdict, len(rep.Phases))
		}
		c := rep.Phases[0].Counts
		if c.Body == 0 || c.Succeeded != 0 {
			t.Errorf("counts %+v, want body failures and no successes", c)
		}
	})
}

// TestFixtureCommand: brk fixture announces its address, serves, and
// stops on SIGINT.
func TestFixtureCommand(t *testing.T) {
	p := startBrk(t, nil, "fixture", "--listen", "127.0.0.1:0")
	p.waitFor("\n", 10*time.Second)
	line, _, _ := strings.Cut(p.stdout.String(), "\n")
	base, ok := strings.CutPrefix(line, "listening on ")
	if !ok || !strings.HasPrefix(base, "http://127.0.0.1:") {
		t.Fatalf("first line %q, want listening on http://127.0.0.1:PORT", line)
	}
	client := &http.Client{Timeout: 5 * time.Second}
	for path, want := range map[string]string{"/plain": "ok", "/hello": "Hello, World!"} {
		resp, err := client.Get(base + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		b, _ := io.ReadAll(bufio.NewReader(resp.Body))
		resp.Body.Close()
		if resp.StatusCode != 200 || string(b) != want {
			t.Errorf("GET %s: %d %q, want 200 %q", path, resp.StatusCode, b, want)
		}
	}
	client.CloseIdleConnections()
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	r := p.wait()
	if r.code != 0 && r.code != 130 {
		t.Errorf("exit %d after SIGINT, want 0 or 130\n%s", r.code, r)
	}
	if r.elapsed > 10*time.Second {
		t.Errorf("took %v", r.elapsed)
	}
}

// TestTimingOnly checks the retry rule of runTimed on real output lines.
func TestTimingOnly(t *testing.T) {
	stalled := "phase 0  level 8\n  failures    timeout 5, transport 0, abandoned 3, connect 0, connect_timeout 0, status 0, body 0, protocol 0\n"
	bodyFail := "phase 0  level 8\n  failures    timeout 5, transport 0, abandoned 0, connect 0, connect_timeout 0, status 0, body 1, protocol 0\n"
	if !timingOnly(stalled) || timingOnly(bodyFail) {
		t.Errorf("timingOnly(stalled) = %v, timingOnly(bodyFail) = %v; want true, false", timingOnly(stalled), timingOnly(bodyFail))
	}
	early := result{code: 1, stdout: stalled + "Broken (8 concurrent requests)\n"}
	late := result{code: 1, stdout: stalled + "Broken (40 concurrent requests)\n"}
	if !brokenBelow(early, 32) || brokenBelow(late, 32) || brokenBelow(result{code: 0, stdout: "Done (24 concurrent requests)\n"}, 32) {
		t.Errorf("brokenBelow: want true for Broken (8), false for Broken (40) and Done")
	}
}

// TestHTTP2Flag: --http2 runs over h2c against the fixture, and conn
// over h2 with TLS; the JSON says h2 and the text names HTTP/2.
func TestHTTP2Flag(t *testing.T) {
	testenv.Parallel(t, testenv.Waits)
	fx := startFixture(t, bench.FixtureConfig{})
	r := runBrk(t, fx.URL("/plain"), "--http2", "--conn", "2", "--start", "4", "--max", "4", "--phase", "300ms",
		"--threads", "1", "--timeout", "1s", "--expect-body", "ok", "--json", "-")
	var doc map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || r.code != 0 {
		t.Fatalf("exit %d, stdout not JSON (%v)\n%s", r.code, err, r)
	}
	if doc["protocol"] != "h2" || doc["verdict"] != "done" || !strings.Contains(r.stderr, "over HTTP/2 (h2)") {
		t.Errorf("protocol %v verdict %v\n%s", doc["protocol"], doc["verdict"], r)
	}
	tfx := startFixture(t, bench.FixtureConfig{TLS: true})
	r = runBrk(t, "conn", tfx.URL("/plain"), "--http2", "--insecure", "--start", "2", "--max", "2", "--requests", "3",
		"--phase", "300ms", "--threads", "1", "--timeout", "1s")
	if r.code != 0 || lastLine(r.stdout) != "Done (2 connections)" {
		t.Errorf("conn --http2 over TLS: exit %d\n%s", r.code, r)
	}
}

// TestIOFlag: --io uring runs on io_uring where the kernel has it (the
// header says "on io_uring", the JSON "io": "uring") and counts what the
// readiness poller's run counts (every request a success); BRK_IO
// overrides the flag; a value brk does not know is refused before any
// traffic (exit 2), naming the values it takes.
func TestIOFlag(t *testing.T) {
	testenv.Parallel(t, testenv.Waits)
	fx := startFixture(t, bench.FixtureConfig{})
	args := []string{fx.URL("/plain"), "--conn", "2", "--start", "4", "--max", "4", "--phase", "300ms",
		"--threads", "1", "--timeout", "1s", "--expect-body", "ok", "--json", "-"}
	run := func(t *testing.T, extra ...string) (result, map[string]any) {
		t.Helper()
		r := runBrk(t, append(slices.Clone(args), extra...)...)
		var doc map[string]any
		if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
			t.Fatalf("stdout not JSON (%v)\n%s", err, r)
		}
		return r, doc
	}
	if err := uring.Available(); err != nil {
		r := runBrk(t, append(slices.Clone(args), "--io", "uring")...)
		if r.code != 2 || !strings.Contains(r.stderr, "--io uring: io_uring cannot be set up on this box") {
			t.Errorf("--io uring without io_uring (%v): exit %d\n%s", err, r.code, r)
		}
	} else {
		r, doc := run(t, "--io", "uring")
		if r.code != 0 || doc["io"] != "uring" || !strings.Contains(r.stderr, "1 worker thread on io_uring") {
			t.Errorf("--io uring: exit %d, io %v\n%s", r.code, doc["io"], r)
		}
		childEnv(t, "BRK_IO", "epoll")
		r, doc = run(t, "--io", "uring")
		if r.code != 0 || doc["io"] != nil || strings.Contains(r.stderr, "io_uring") {
			t.Errorf("BRK_IO=epoll --io uring: exit %d, io %v\n%s", r.code, doc["io"], r)
		}
	}
	r := runBrk(t, fx.URL("/plain"), "--io", "kqueue")
	if r.code != 2 || !strings.Contains(r.stderr, `--io must be one of "auto","epoll","uring" but got "kqueue"`) {
		t.Errorf("--io kqueue: exit %d\n%s", r.code, r)
	}
	childEnv(t, "BRK_IO", "kqueue")
	r = runBrk(t, fx.URL("/plain"), "--conn", "1", "--max", "1", "--phase", "100ms")
	if r.code != 2 || !strings.Contains(r.stderr, `--io "kqueue": want epoll or uring`) {
		t.Errorf("BRK_IO=kqueue: exit %d\n%s", r.code, r)
	}
}
