//go:build linux

package main

// Tests of the reporting features of a phase: the cpu figures (client_cpu,
// worker_busy_pct, client_bound, machine_cpu_pct, --baseline), live
// progress (a terminal on stderr only, never with --quiet) and the layout
// of the human text. Linux only: they read /proc and use taskset and
// util-linux script.

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/brk-bench/brk/bench"
	"github.com/brk-bench/brk/internal/testenv"
)

// cpuPhase is the part of a schema-1 phase these tests read.
type cpuPhase struct {
	Index     int `json:"index"`
	Level     int `json:"level"`
	LatencyMs struct {
		Count uint64 `json:"count"`
	} `json:"latency_ms"`
	Counts struct {
		Attempted uint64 `json:"attempted"`
		Succeeded uint64 `json:"succeeded"`
	} `json:"counts"`
	DurationS      float64   `json:"duration_s"`
	RequestsPerSec float64   `json:"requests_per_sec"`
	ClientCPU      clientCPU `json:"client_cpu"`
	MachineCPUPct  *float64  `json:"machine_cpu_pct"`
	WorkerBusyPct  *float64  `json:"worker_busy_pct"`
	ClientBound    bool      `json:"client_bound"`
}

type clientCPU struct {
	UserS         float64 `json:"user_s"`
	SystemS       float64 `json:"system_s"`
	UsPerResponse float64 `json:"us_per_response"`
}

type cpuReport struct {
	Verdict  string     `json:"verdict"`
	Phases   []cpuPhase `json:"phases"`
	Baseline *struct {
		DurationS     float64   `json:"duration_s"`
		MachineCPUPct *float64  `json:"machine_cpu_pct"`
		ClientCPU     clientCPU `json:"client_cpu"`
	} `json:"baseline"`
}

func readCPUReport(t *testing.T, path string) cpuReport {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read JSON report: %v", err)
	}
	var rep cpuReport
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatalf("JSON report does not decode: %v\n%s", err, b)
	}
	return rep
}

// onePhase returns the only phase of rep.
func onePhase(t *testing.T, rep cpuReport, r result) cpuPhase {
	t.Helper()
	if len(rep.Phases) != 1 {
		t.Fatalf("%d phases, want 1\n%s", len(rep.Phases), r)
	}
	return rep.Phases[0]
}

func pct(p *float64) string {
	if p == nil {
		return "null"
	}
	return fmt.Sprintf("%.1f %%", *p)
}

// startFixtureChild starts `brk fixture` as a child process (so the
// fixture's CPU is not the client's and it is not race-instrumented) and
// returns its base URL.
func startFixtureChild(t *testing.T) string {
	t.Helper()
	return fixtureURL(t, startBrk(t, nil, "fixture", "--listen", "127.0.0.1:0"))
}

// fixtureURL waits for a fixture child's "listening on" line.
func fixtureURL(t *testing.T, p *proc) string {
	t.Helper()
	p.waitFor("\n", 10*time.Second)
	line, _, _ := strings.Cut(p.stdout.String(), "\n")
	base, ok := strings.CutPrefix(line, "listening on ")
	if !ok || !strings.HasPrefix(base, "http://") {
		t.Fatalf("fixture's first line %q, want listening on http://ADDR", line)
	}
	return base
}

// allowedCPUs lists the CPUs this process may run on.
func allowedCPUs(t *testing.T) []int {
	t.Helper()
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		t.Fatalf("sched_getaffinity: %v", err)
	}
	var cpus []int
	for i := 0; i < 1024; i++ {
		if set.IsSet(i) {
			cpus = append(cpus, i)
		}
	}
	return cpus
}

// startCmd starts any command as a proc (see startBrk), under the same
// runTimeout context and cleanup.
func startCmd(t *testing.T, name string, args ...string) *proc {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.WaitDelay = 2 * time.Second
	p := &proc{t: t, cmd: cmd, cancel: cancel, stdout: &syncBuf{}, stderr: &syncBuf{}, args: append([]string{name}, args...)}
	cmd.Stdout, cmd.Stderr = p.stdout, p.stderr
	p.start = time.Now()
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start %s: %v", name, err)
	}
	t.Cleanup(func() {
		cancel()
		if cmd.ProcessState == nil {
			_ = cmd.Wait()
		}
	})
	return p
}

// startBusyLoop starts a shell busy loop pinned to cpu and kills it (by its
// PID) at cleanup.
func startBusyLoop(t *testing.T, cpu int) {
	t.Helper()
	cmd := exec.Command("taskset", "-c", strconv.Itoa(cpu), "sh", "-c", "while :; do :; done")
	if err := cmd.Start(); err != nil {
		t.Fatalf("start busy loop: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
}

// starvedAttempts bounds the starved runs: a run whose worker idled more
// than the model allows (TestClientBound) is repeated once.
const starvedAttempts = 2

// TestClientBound: a client whose only CPU it shares with a busy loop (at
// nice 15, so it gets a few per cent of it) is busy, running or waiting for
// the CPU, nearly all the phase, so the phase is client_bound; a client
// waiting on a slow server is not.
//
// The starved worker idles only while it has no response to read: while
// the fixture holds all its requests. On an idle machine the fixture,
// alone on its CPU, answers so fast that the worker is busy at least 90 %
// of the phase (client_bound). The machine's other work delays the fixture
// by exactly its run-queue wait, and the worker can idle no longer than
// that on its account: so worker_busy_pct ≥ 90 − 100 × the fixture's
// run-queue wait (summed over its threads, read around the client's run)
// ÷ the phase's duration; where the fixture never waited, that is 90 %:
// client_bound.
func TestClientBound(t *testing.T) {
	t.Run("starved", func(t *testing.T) {
		fx, base, clientCPU, fixtureCPU := startStarved(t)
		for attempt := 1; ; attempt++ {
			path := filepath.Join(t.TempDir(), "report.json")
			f0 := procBusy(t, fx.cmd.Process.Pid)
			r := startCmd(t, "taskset", "-c", strconv.Itoa(clientCPU), "nice", "-n", "15", brkBin,
				base+"/plain", "--threads", "1", "--timeout", "1s", "--conn", "16", "--start", "4", "--max", "4",
				"--phase", "1500ms", "--quiet", "-v", "--json", path).wait()
			if r.code != 0 && r.code != 1 {
				t.Fatalf("exit %d, want 0 or 1 (a starved client may see timeouts)\n%s", r.code, r)
			}
			f1 := procBusy(t, fx.cmd.Process.Pid)
			ph := onePhase(t, readCPUReport(t, path), r)
			if ph.WorkerBusyPct == nil || ph.DurationS <= 0 {
				t.Fatalf("worker_busy_pct %s over duration_s %.3f on Linux\n%s", pct(ph.WorkerBusyPct), ph.DurationS, r)
			}
			fixtureWait := (f1.wait - f0.wait).Seconds()
			bound := 90 - 100*fixtureWait/ph.DurationS
			t.Logf("attempt %d: client on CPU %d (nice 15) with a busy loop, fixture on CPU %d: worker_busy_pct %s (model: ≥ %.1f %%, the fixture waited %.3f s for its CPU and ran %.3f s in a %.3f s phase), client_bound %v, %.0f req/s, client cpu %.3f+%.3f s, exit %d (load %s)",
				attempt, clientCPU, fixtureCPU, pct(ph.WorkerBusyPct), bound, fixtureWait, (f1.run - f0.run).Seconds(), ph.DurationS,
				ph.ClientBound, ph.RequestsPerSec, ph.ClientCPU.UserS, ph.ClientCPU.SystemS, r.code, loadavg())
			// The flag and the figure must agree, and so must the text.
			if ph.ClientBound != (*ph.WorkerBusyPct >= 90) {
				t.Errorf("client_bound %v with worker_busy_pct %s", ph.ClientBound, pct(ph.WorkerBusyPct))
			}
			if strings.Contains(r.stdout, "  client_bound: ") != ph.ClientBound {
				t.Errorf("client_bound %v, but the text's client_bound line disagrees\n%s", ph.ClientBound, r)
			}
			if *ph.WorkerBusyPct >= bound { // at 90 %, client_bound (above)
				break
			}
			if attempt == starvedAttempts {
				t.Errorf("worker_busy_pct %s, client_bound %v; the model wants ≥ %.1f %% (client_bound where the fixture never waited): the worker idled longer than the machine's other work delayed the fixture\n%s",
					pct(ph.WorkerBusyPct), ph.ClientBound, bound, r)
				break
			}
		}
	})

	t.Run("slow server", func(t *testing.T) {
		fx := startFixture(t, bench.FixtureConfig{Addr: "127.0.0.1:0", Service: 20 * time.Millisecond})
		path := filepath.Join(t.TempDir(), "report.json")
		r := runBrk(t, fx.URL("/plain"), "--conn", "8", "--max", "1", "--phase", "1s", "--threads", "1", "--timeout", "1s",
			"--quiet", "--json", path)
		expect(t, r, 0, "Done (8 concurrent requests)")
		ph := onePhase(t, readCPUReport(t, path), r)
		t.Logf("slow server: worker_busy_pct %s, client_bound %v, %.0f req/s", pct(ph.WorkerBusyPct), ph.ClientBound, ph.RequestsPerSec)
		if ph.WorkerBusyPct == nil {
			t.Fatalf("worker_busy_pct is null on Linux\n%s", r)
		}
		if ph.ClientBound || *ph.WorkerBusyPct >= 50 {
			t.Errorf("client_bound %v, worker_busy_pct %s; want false and < 50 %%\n%s", ph.ClientBound, pct(ph.WorkerBusyPct), r)
		}
		if strings.Contains(r.stdout, "client_bound") {
			t.Errorf("text has a client_bound line\n%s", r)
		}
	})
}

// TestClientCPUHonest: the phase's client_cpu (getrusage over the phase)
// accounts for the CPU the client process used, as the kernel reports it
// to the parent at exit, but for what falls outside the one phase:
// process start, connection setup, the drain, the report and exit. That
// part is a fixed cost, not a share of the phase: a run of the same plan
// with a phase a tenth as long measures it in the same test, so that a box
// busy with other work (fewer responses, less phase CPU, the same fixed
// cost) does not fail a ratio.
func TestClientCPUHonest(t *testing.T) {
	base := startFixtureChild(t)
	run := func(phase string) (ph cpuPhase, whole float64, r result) {
		path := filepath.Join(t.TempDir(), "report.json")
		p := startBrk(t, nil, base+"/plain", "--conn", "16", "--start", "8", "--max", "8", "--phase", phase,
			"--threads", "1", "--timeout", "1s", "--quiet", "--json", path)
		r = p.wait()
		expect(t, r, 0, "Done (128 concurrent requests)")
		ph = onePhase(t, readCPUReport(t, path), r)
		st := p.cmd.ProcessState
		return ph, (st.UserTime() + st.SystemTime()).Seconds(), r
	}
	short, shortWhole, _ := run("200ms")
	fixed := shortWhole - (short.ClientCPU.UserS + short.ClientCPU.SystemS) // outside the phase
	ph, whole, r := run("2s")
	phaseCPU := ph.ClientCPU.UserS + ph.ClientCPU.SystemS
	n := float64(ph.LatencyMs.Count)
	if n == 0 {
		t.Fatalf("no responses\n%s", r)
	}
	t.Logf("phase: user %.3f s + system %.3f s = %.3f s, %.3f µs/response (JSON); whole process %.3f s; outside the phase %.3f s (a 200 ms phase's run: %.3f s); %d responses, %.0f req/s",
		ph.ClientCPU.UserS, ph.ClientCPU.SystemS, phaseCPU, ph.ClientCPU.UsPerResponse, whole, whole-phaseCPU, fixed,
		ph.LatencyMs.Count, ph.RequestsPerSec)
	if whole <= 0 || phaseCPU <= 0 {
		t.Fatalf("no CPU measured: phase %.3f s, whole process %.3f s", phaseCPU, whole)
	}
	// us_per_response is the phase CPU over the phase's responses (the
	// JSON rounds the CPU to whole µs first).
	if self := phaseCPU / n * 1e6; math.Abs(ph.ClientCPU.UsPerResponse-self) > 0.01*self+1/n {
		t.Errorf("us_per_response %.3f, but (user_s+system_s)/latency_ms.count = %.3f µs", ph.ClientCPU.UsPerResponse, self)
	}
	// The phase is part of the process: it cannot have used more (10 ms of
	// slack for the kernel's accounting granularity).
	if phaseCPU > whole+0.010 {
		t.Errorf("phase CPU %.3f s is more than the whole process's %.3f s", phaseCPU, whole)
	}
	// What the phase does not count is the fixed cost the short run
	// measured, within half of it again (or 50 ms): a phase CPU that missed
	// part of the phase's work would leave more outside.
	if out := whole - phaseCPU; out > 1.5*fixed+0.050 {
		t.Errorf("the whole process used %.3f s outside the 2 s phase, but a run with a 200 ms phase used %.3f s outside it: the phase's client_cpu misses work", out, fixed)
	}
}

// TestBaseline: --baseline observes the idle machine before the load; the
// loaded phase's machine_cpu_pct is above it.
func TestBaseline(t *testing.T) {
	base := startFixtureChild(t)
	path := filepath.Join(t.TempDir(), "report.json")
	r := runBrk(t, base+"/plain", "--baseline", "--phase", "1s", "--conn", "16", "--start", "8", "--max", "8",
		"--threads", "1", "--timeout", "1s", "--quiet", "--json", path)
	expect(t, r, 0, "Done (128 concurrent requests)")
	rep := readCPUReport(t, path)
	ph := onePhase(t, rep, r)
	if rep.Baseline == nil {
		t.Fatalf("no baseline in the JSON report\n%s", r)
	}
	b := rep.Baseline
	t.Logf("baseline %.2f s: machine %s, client %.3f+%.3f s; loaded phase: machine %s, %.0f req/s (load %s)",
		b.DurationS, pct(b.MachineCPUPct), b.ClientCPU.UserS, b.ClientCPU.SystemS, pct(ph.MachineCPUPct),
		ph.RequestsPerSec, loadavg())
	if b.MachineCPUPct == nil || ph.MachineCPUPct == nil {
		t.Fatalf("machine_cpu_pct: baseline %s, phase %s; want both non-null on Linux\n%s",
			pct(b.MachineCPUPct), pct(ph.MachineCPUPct), r)
	}
	if b.DurationS < 0.9 || b.DurationS > 2 {
		t.Errorf("baseline duration_s %.3f, want about the 1 s --phase", b.DurationS)
	}
	if !strings.Contains(r.stdout, "\nbaseline  ") {
		t.Errorf("no baseline line in the text\n%s", r)
	}
	if *b.MachineCPUPct > 80 {
		t.Skipf("machine too busy to show the load: baseline %.1f %%, loaded %.1f %%", *b.MachineCPUPct, *ph.MachineCPUPct)
	}
	if *ph.MachineCPUPct <= *b.MachineCPUPct {
		t.Errorf("loaded machine_cpu_pct %.1f %% is not above the baseline's %.1f %%\n%s", *ph.MachineCPUPct, *b.MachineCPUPct, r)
	}
}

// TestMachineCPUEveryPhase: machine_cpu_pct is null only for a phase that
// never reached its target, so every phase whose connections all reached
// it once has a figure — later phases included, where the connections are
// already open when the phase starts.
func TestMachineCPUEveryPhase(t *testing.T) {
	base := startFixtureChild(t)
	path := filepath.Join(t.TempDir(), "report.json")
	r := runBrk(t, base+"/plain", "--conn", "16", "--start", "1", "--pace", "1", "--max", "6", "--phase", "300ms",
		"--threads", "1", "--timeout", "1s", "--quiet", "--json", path)
	expect(t, r, 0, "Done (96 concurrent requests)")
	var rep struct {
		Phases []struct {
			Index         int      `json:"index"`
			ReachedOnce   int      `json:"target_reached_once"`
			MachineCPUPct *float64 `json:"machine_cpu_pct"`
		} `json:"phases"`
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range rep.Phases {
		got = append(got, pct(p.MachineCPUPct))
		if p.ReachedOnce == 16 && p.MachineCPUPct == nil {
			t.Errorf("phase %d: target reached once on all 16 connections, yet machine_cpu_pct is null", p.Index)
		}
	}
	t.Logf("machine_cpu_pct by phase: %s", strings.Join(got, ", "))
	if len(rep.Phases) != 6 {
		t.Errorf("%d phases, want 6", len(rep.Phases))
	}
}

// progressRE matches a live progress line.
var progressRE = regexp.MustCompile("\x1b\\[K… phase 0\\b") // each rewrite of the live line

// liveP99RE matches the live line's p99 so far.
var liveP99RE = regexp.MustCompile(`ok/s  p99 \d+(\.\d+)? ms`)

func progressLines(s string) int { return len(progressRE.FindAllString(s, -1)) }

// shq quotes s for sh.
func shq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// runScript runs the shell command line under a pseudo-terminal (util-linux
// script) and returns its combined output with CRs removed.
func runScript(t *testing.T, line string) result {
	t.Helper()
	if _, err := exec.LookPath("script"); err != nil {
		testenv.SkipOrFail(t, "util-linux script not found: %v", err)
	}
	r := startCmd(t, "script", "-qefc", line, "/dev/null").wait()
	r.stdout = strings.ReplaceAll(r.stdout, "\r", "")
	r.stderr = strings.ReplaceAll(r.stderr, "\r", "")
	return r
}

// expectVerdict checks that r ended with a verdict on its last stdout
// line (done, broken or inconclusive, with its exit code): the progress
// tests check what is printed while a run goes, and a busy box may break
// the level (timeouts at 1s) or saturate the client (inconclusive).
func expectVerdict(t *testing.T, r result) {
	t.Helper()
	last := lastLine(strings.ReplaceAll(r.stdout, "\r", ""))
	want := map[int]string{0: "Done (", 1: "Broken (", 3: "Inconclusive:"}[r.code]
	if want == "" || !strings.HasPrefix(last, want) {
		t.Errorf("exit %d, last line %q: want a verdict and its exit code\n%s", r.code, last, r)
	}
}

// TestProgress: live progress is a line a second on stderr when stderr is
// a terminal, never on stdout, never with --quiet.
func TestProgress(t *testing.T) {
	t.Parallel()
	fx := startFixture(t, bench.FixtureConfig{})
	args := func(phase string, more ...string) []string {
		return append([]string{fx.URL("/plain"), "--conn", "4", "--max", "1", "--phase", phase, "--threads", "1", "--timeout", "1s"}, more...)
	}
	cmdline := func(a []string) string {
		q := []string{shq(brkBin)}
		for _, s := range a {
			q = append(q, shq(s))
		}
		return strings.Join(q, " ")
	}

	t.Run("terminal", func(t *testing.T) {
		testenv.Parallel(t, testenv.Waits)
		r := runScript(t, cmdline(args("3s")))
		n := progressLines(r.stdout)
		t.Logf("%d progress lines for a 3 s phase", n)
		if n < 2 || n > 4 {
			t.Errorf("%d progress lines, want 2..4\n%s", n, r)
		}
		expectVerdict(t, r)
		if !liveP99RE.MatchString(r.stdout) {
			t.Errorf("no p99 so far in the live line\n%s", r)
		}
	})

	t.Run("narrow terminal", func(t *testing.T) {
		testenv.Parallel(t, testenv.Waits)
		// Each rewrite of the live line fits the terminal's 50 columns
		// and ends without a newline: one line, rewritten in place.
		r := runScript(t, "stty cols 50 rows 20 && "+cmdline(args("3s")))
		if progressLines(r.stdout) < 2 {
			t.Fatalf("%d progress lines, want 2 or more\n%s", progressLines(r.stdout), r)
		}
		expectVerdict(t, r)
		for _, seg := range strings.Split(r.stdout, "\x1b[K")[1:] {
			if !strings.HasPrefix(seg, "… phase") {
				continue
			}
			if n := len([]rune(seg)); n > 49 || strings.Contains(seg, "\n") {
				t.Errorf("live line of %d runes (a 50-column terminal), newline %v: %q", n, strings.Contains(seg, "\n"), seg)
			}
		}
	})

	t.Run("pipes", func(t *testing.T) {
		testenv.Parallel(t, testenv.Waits)
		r := runBrk(t, args("1500ms")...)
		expectVerdict(t, r)
		if n := progressLines(r.stdout) + progressLines(r.stderr); n != 0 || strings.Contains(r.stdout+r.stderr, "…") {
			t.Errorf("%d progress lines without a terminal, want 0\n%s", n, r)
		}
	})

	t.Run("quiet", func(t *testing.T) {
		testenv.Parallel(t, testenv.Waits)
		r := runScript(t, cmdline(args("1500ms", "--quiet")))
		if n := progressLines(r.stdout); n != 0 || strings.Contains(r.stdout, "…") {
			t.Errorf("%d progress lines under a terminal with --quiet, want 0\n%s", n, r)
		}
		expectVerdict(t, r)
	})

	t.Run("stdout piped", func(t *testing.T) {
		testenv.Parallel(t, testenv.Waits)
		out := filepath.Join(t.TempDir(), "stdout.txt")
		r := runScript(t, cmdline(args("2s"))+" >"+shq(out))
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		stdout := string(b)
		nOut, nTTY := progressLines(stdout), progressLines(r.stdout)
		t.Logf("2 s phase: %d progress lines on the stderr terminal, %d on the stdout file", nTTY, nOut)
		// Any verdict with its exit code: a busy run timed out 4 of 3,276
		// requests (Broken, exit 1).
		expectVerdict(t, result{code: r.code, stdout: stdout})
		if nOut != 0 || strings.Contains(stdout, "…") {
			t.Errorf("%d progress lines on stdout (a file), want 0\n%s", nOut, stdout)
		}
		if nTTY < 1 || nTTY > 3 {
			t.Errorf("%d progress lines on the stderr terminal for a 2 s phase, want 1..3\n%s", nTTY, r.stdout)
		}
		if strings.Contains(r.stdout, "Done (") || strings.Contains(r.stdout, "Broken (") || strings.Contains(r.stdout, "Inconclusive:") {
			t.Errorf("the verdict reached the terminal, which only has stderr\n%s", r.stdout)
		}
	})
}

// phaseLines are the lines of a phase block, in order, each with its units.
var phaseLines = []struct {
	label string
	re    *regexp.Regexp
}{
	{"requests", regexp.MustCompile(`^  requests    \d+ attempted, \d+ succeeded \(\d+\.\d{4} %\), \d+\.\d successful req/s over \d+\.\d\d s \(admission \d+\.\d\d s \+ drain\)$`)},
	{"failures", regexp.MustCompile(`^  failures    timeout \d+, transport \d+, abandoned \d+, connect \d+, connect_timeout \d+, status \d+, body \d+, protocol \d+$`)},
	{"latency", regexp.MustCompile(`^  latency     \d+ responses: mean \d+\.\d{3} ms, p50 \d+\.\d{3} ms, p90 \d+\.\d{3} ms, p99 \d+\.\d{3} ms, p99\.9 \d+\.\d{3} ms, max \d+\.\d{3} ms$`)},
	{"load", regexp.MustCompile(`^  load        mean outstanding \d+\.\d \(target coverage \d+\.\d %\), target reached once on \d+ connections, time at target \d+\.\d %$`)},
	{"generator", regexp.MustCompile(`^  generator   setups \d+ attempted, \d+ established, \d+ failed, \d+ timed out \(mean \d+\.\d{3} ms\); blocked writes \d+; max send delay \d+\.\d{3} ms; max deadline lateness \d+\.\d{3} ms$`)},
	{"cpu", regexp.MustCompile(`^  cpu         client user \d+\.\d{3} s, system \d+\.\d{3} s, \d+\.\d\d µs per response; machine (\d+\.\d %|unavailable); worker threads busy \d+\.\d %$`)},
}

var phaseHeadRE = regexp.MustCompile(`^phase (\d+)  level \d+ concurrent requests \(\d+ per connection\)  (accepted|REJECTED|interrupted \(not judged\))( \((ramp|grow|down|bisect|repeat)\))?$`)

// TestPhaseText: every phase block has requests, failures, latency, load,
// generator and cpu lines in that order, each with its units, and the
// verdict is the last stdout line.
func TestPhaseText(t *testing.T) {
	testenv.Parallel(t, testenv.Waits)
	fx := startFixture(t, bench.FixtureConfig{})
	r := runBrk(t, fx.URL("/plain"), "--conn", "4", "--start", "1", "--pace", "1", "--max", "2", "--phase", "500ms", "--threads", "1", "--timeout", "1s", "-v")
	expect(t, r, 0, "Done (8 concurrent requests)")
	lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	var blocks [][]string
	for i := 0; i < len(lines); i++ {
		m := phaseHeadRE.FindStringSubmatch(lines[i])
		if m == nil {
			if strings.HasPrefix(lines[i], "phase ") {
				t.Errorf("malformed phase header %q", lines[i])
			}
			continue
		}
		if m[1] != strconv.Itoa(len(blocks)) {
			t.Errorf("phase header %q, want phase %d", lines[i], len(blocks))
		}
		var block []string
		for i++; i < len(lines) && strings.HasPrefix(lines[i], "  "); i++ {
			block = append(block, lines[i])
		}
		i--
		blocks = append(blocks, block)
	}
	if len(blocks) != 2 {
		t.Fatalf("%d phase blocks, want 2\n%s", len(blocks), r)
	}
	for b, block := range blocks {
		var body []string // the lines with a phaseLines label, in order
		for _, l := range block {
			label, _, _ := strings.Cut(strings.TrimSpace(l), " ")
			for _, pl := range phaseLines {
				if label == pl.label {
					body = append(body, l)
				}
			}
		}
		if len(body) != len(phaseLines) {
			t.Errorf("phase %d has %d of the %d lines\n%s", b, len(body), len(phaseLines), strings.Join(block, "\n"))
			continue
		}
		for i, pl := range phaseLines {
			if !pl.re.MatchString(body[i]) {
				t.Errorf("phase %d line %d: %q, want the %s line with its units (%s)", b, i, body[i], pl.label, pl.re)
			}
		}
	}
	var verdicts int
	for _, l := range lines {
		if verdictLine(l) {
			verdicts++
		}
	}
	if verdicts != 1 || !verdictLine(lines[len(lines)-1]) {
		t.Errorf("%d verdict lines, last line %q; want exactly one, last\n%s", verdicts, lines[len(lines)-1], r)
	}
	if t.Failed() {
		t.Logf("%s", r)
	}
}

// schedTimes is a process's CPU time and run-queue wait, summed over its
// threads (/proc/PID/task/TID/schedstat).
type schedTimes struct{ run, wait time.Duration }

// procBusy reads pid's schedTimes.
func procBusy(t *testing.T, pid int) schedTimes {
	t.Helper()
	dir := fmt.Sprintf("/proc/%d/task", pid)
	tasks, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("threads of %d: %v", pid, err)
	}
	var st schedTimes
	for _, task := range tasks {
		b, err := os.ReadFile(filepath.Join(dir, task.Name(), "schedstat"))
		if err != nil {
			continue // the thread ended
		}
		var run, wait int64
		if _, err := fmt.Sscan(string(b), &run, &wait); err != nil {
			t.Fatalf("%s/%s/schedstat %q: %v", dir, task.Name(), b, err)
		}
		st.run += time.Duration(run)
		st.wait += time.Duration(wait)
	}
	return st
}

// startStarved starts the fixture as a child pinned to one CPU and a busy
// loop on another, where the test then runs a starved client (at nice
// 15). In this process the fixture would be race-instrumented and, on a
// machine shared with other work, no faster than the starved client. It
// returns the fixture, its URL, and the client's and the fixture's CPUs.
func startStarved(t *testing.T) (fx *proc, base string, clientCPU, fixtureCPU int) {
	t.Helper()
	for _, tool := range []string{"taskset", "nice"} {
		if _, err := exec.LookPath(tool); err != nil {
			testenv.SkipOrFail(t, "%s not found: %v", tool, err)
		}
	}
	cpus := allowedCPUs(t)
	if len(cpus) < 2 {
		testenv.SkipOrFail(t, "need 2 usable CPUs, have %v", cpus)
	}
	clientCPU, fixtureCPU = cpus[len(cpus)-1], cpus[0]
	fx = startCmd(t, "taskset", "-c", strconv.Itoa(fixtureCPU), brkBin, "fixture", "--listen", "127.0.0.1:0")
	base = fixtureURL(t, fx)
	startBusyLoop(t, clientCPU)
	return fx, base, clientCPU, fixtureCPU
}

// TestSearchBelowTheClientsLimitStarved: a rate search whose client is
// starved (its CPU shared with a busy loop at nice 15; the fixture on
// another CPU) falls behind its schedule at some rate; the search bisects
// below that level instead of ending there, and ends inconclusive at the
// highest rate the client could drive, naming the lowest it could not.
func TestSearchBelowTheClientsLimitStarved(t *testing.T) {
	_, base, clientCPU, _ := startStarved(t)
	path := filepath.Join(t.TempDir(), "report.json")
	r := startCmd(t, "taskset", "-c", strconv.Itoa(clientCPU), "nice", "-n", "15", brkBin,
		"rate", base+"/plain", "--threads", "1", "--timeout", "1s", "--phase", "500ms", "--budget", "90s",
		"--quiet", "--json", path).wait()
	var rep struct {
		Verdict      string `json:"verdict"`
		Reason       string `json:"reason"`
		LastAccepted *int   `json:"last_accepted"`
		Phases       []struct {
			Level        int    `json:"level"`
			Role         string `json:"role"`
			Accepted     bool   `json:"accepted"`
			Inconclusive bool   `json:"inconclusive"`
		} `json:"phases"`
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no report: %v\n%s", err, r)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatalf("report: %v", err)
	}
	var seq []string
	first, low := -1, -1 // the first client-bound phase; the lowest client-bound level
	for i, p := range rep.Phases {
		mark := "+"
		switch {
		case p.Inconclusive:
			mark = "?"
			if first < 0 {
				first = i
			}
			if low < 0 || p.Level < low {
				low = p.Level
			}
		case !p.Accepted:
			mark = "-"
		}
		seq = append(seq, fmt.Sprintf("%d%s", p.Level, mark))
	}
	t.Logf("exit %d, %s: %s; levels %s", r.code, rep.Verdict, rep.Reason, strings.Join(seq, " "))
	if r.code == 3 && first == 0 && rep.LastAccepted == nil {
		// Other work on the box starved the client below the first
		// level (100 requests/s): brk said it could not drive it, and
		// there is no held level to bisect from.
		t.Skipf("the client could not drive the first level: %s", rep.Reason)
	}
	if r.code != 3 || rep.Verdict != "inconclusive" || first < 0 || rep.LastAccepted == nil {
		t.Fatalf("want a search that held some rate and then found the client's limit (exit 3, inconclusive)\n%s", r)
	}
	held := *rep.LastAccepted
	if !strings.Contains(rep.Reason, fmt.Sprintf("the lowest level the client could not drive: %d requests/s (%d held)", low, held)) {
		t.Errorf("the reason does not name the lowest level the client could not drive (%d) and the level held (%d): %s", low, held, rep.Reason)
	}
	if first == len(rep.Phases)-1 || low <= held || low-held > max(1, held/100) {
		t.Errorf("the search did not bisect below the client's limit to the resolution: held %d, lowest client-bound %d, levels %s", held, low, strings.Join(seq, " "))
	}
	for i := first + 1; i < len(rep.Phases); i++ {
		if rep.Phases[i].Role != "bisect" && rep.Phases[i].Role != "repeat" {
			t.Errorf("phase %d after the client's limit is %q, want bisect or repeat", i, rep.Phases[i].Role)
		}
	}
}
