package main

// Client resource limits (descriptors, local ports) and the one-line
// message of every error the user can cause. Reuses main_test.go's
// harness: brkBin, result, checkNoCrash, lastLine, expect, verdictLine,
// startFixture, readReport, checkCounts.

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/brk-bench/brk/bench"
	"github.com/brk-bench/brk/internal/testenv"
)

// runWrapped runs name with args (typically `sh -c SCRIPT sh brkBin ...`)
// under a within deadline, with extra open descriptors inherited as fd 3,
// 4, .... killed reports whether the deadline killed it; otherwise the
// output is checked for crash text.
func runWrapped(t *testing.T, within time.Duration, extra []*os.File, name string, args ...string) (r result, killed bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.WaitDelay = 2 * time.Second
	cmd.ExtraFiles = extra
	var stdout, stderr syncBuf
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	r = result{args: append([]string{name}, args...), stdout: stdout.String(), stderr: stderr.String(), elapsed: time.Since(start)}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		if ctx.Err() == nil {
			t.Fatalf("run %s: %v\n%s", name, err, r)
		}
	}
	r.code = cmd.ProcessState.ExitCode()
	if ctx.Err() != nil {
		return r, true
	}
	checkNoCrash(t, r)
	return r, false
}

// ulimitBrk runs brk under `sh -c 'ulimit LIMITFLAGS; exec brk ARGS'`.
func ulimitBrk(t *testing.T, limit string, extra []*os.File, args ...string) result {
	t.Helper()
	sh := append([]string{"-c", "ulimit " + limit + " || exit 99; exec \"$0\" \"$@\"", brkBin}, args...)
	r, killed := runWrapped(t, runTimeout, extra, "sh", sh...)
	if killed {
		t.Fatalf("brk still running after %v\n%s", runTimeout, r)
	}
	if r.code == 99 {
		testenv.SkipOrFail(t, "sh cannot set ulimit %s: %s", limit, r.stderr)
	}
	return r
}

// TestNoFileLimit: RLIMIT_NOFILE too low for --conn is refused before any
// traffic with exit 3 and a reason naming RLIMIT_NOFILE and `ulimit -n`; a
// soft limit below the hard one is raised; a run that fits passes; a run
// that passes the pre-check but runs out of descriptors while setting up
// connections ends inconclusive with the same advice.
func TestNoFileLimit(t *testing.T) {
	fx := startFixture(t, bench.FixtureConfig{})
	url := fx.URL("/plain")
	common := []string{"--threads", "1", "--timeout", "1s", "--max", "1", "--phase", "300ms", "--expect-body", "ok"}

	t.Run("precheck", func(t *testing.T) {
		for _, conns := range []string{"200", "40"} {
			before := fx.Requests()
			r := ulimitBrk(t, "-n 64", nil, append([]string{url, "--conn", conns}, common...)...)
			if r.code != 3 {
				t.Fatalf("--conn %s under ulimit -n 64: exit %d, want 3\n%s", conns, r.code, r)
			}
			last := lastLine(r.stdout)
			if !strings.HasPrefix(last, "Inconclusive: ") || !strings.Contains(last, "RLIMIT_NOFILE") ||
				!strings.Contains(last, "`ulimit -n`") {
				t.Errorf("last line %q, want Inconclusive: ... RLIMIT_NOFILE ... `ulimit -n`\n%s", last, r)
			}
			if strings.Contains(r.stdout, "phase 0") {
				t.Errorf("a phase ran although the pre-check refused the run\n%s", r)
			}
			if got := fx.Requests() - before; got != 0 {
				t.Errorf("fixture served %d requests; the pre-check must refuse before any traffic", got)
			}
		}
	})

	t.Run("fits", func(t *testing.T) {
		// The pre-check reserves 64 descriptors plus 2 per thread beyond
		// the connections, so 40 connections need a limit above 64.
		r := ulimitBrk(t, "-n 128", nil, append([]string{url, "--conn", "40"}, common...)...)
		expect(t, r, 0, "Done (40 concurrent requests)")
	})

	t.Run("soft raised to hard", func(t *testing.T) {
		var lim syscall.Rlimit
		if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			t.Fatal(err)
		}
		if lim.Max < 1024 {
			t.Skipf("hard RLIMIT_NOFILE %d is below 1024", lim.Max)
		}
		r := ulimitBrk(t, "-Sn 64", nil, append([]string{url, "--conn", "200"}, common...)...)
		expect(t, r, 0, "Done (200 concurrent requests)")
	})

	t.Run("runs out mid-run", func(t *testing.T) {
		// 62 connections pass the pre-check under 128 (62+2+64), but 64
		// inherited descriptors leave room for only about 55 sockets.
		var extra []*os.File
		for range 64 {
			f, err := os.Open(os.DevNull)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			extra = append(extra, f)
		}
		path := filepath.Join(t.TempDir(), "report.json")
		r := ulimitBrk(t, "-n 128", extra, append([]string{url, "--conn", "62", "--json", path}, common...)...)
		if r.code != 3 {
			t.Fatalf("exit %d, want 3\n%s", r.code, r)
		}
		last := lastLine(r.stdout)
		if want := "Inconclusive: client ran out of file descriptors (RLIMIT_NOFILE soft limit 128)"; !strings.HasPrefix(last, want) ||
			!strings.Contains(last, "`ulimit -n`") {
			t.Errorf("last line %q, want prefix %q and `ulimit -n`\n%s", last, want, r)
		}
		rep := readReport(t, path)
		if rep.Verdict != "inconclusive" || rep.LastAccepted != nil || rep.FirstRejected != nil {
			t.Errorf("verdict %q last_accepted %s first_rejected %s, want inconclusive null null",
				rep.Verdict, intp(rep.LastAccepted), intp(rep.FirstRejected))
		}
		if len(rep.Phases) != 1 {
			t.Errorf("%d phases, want 1 (the run stops at the client failure)", len(rep.Phases))
		}
		checkCounts(t, rep)
		if t.Failed() {
			t.Logf("%s", r)
		}
	})
}

// TestLocalPortExhaustion narrows ip_local_port_range to 4 ports in a
// private network namespace, runs the fixture and 16 connections inside
// it: connect(2) fails with EADDRNOTAVAIL, and brk must end inconclusive
// (exit 3) naming the local ports and what to widen.
func TestLocalPortExhaustion(t *testing.T) {
	if os.Geteuid() != 0 {
		testenv.SkipOrFail(t, "needs root for a private network namespace")
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		testenv.SkipOrFail(t, "unshare (util-linux) not found: %v", err)
	}
	_, errIP := exec.LookPath("ip")
	_, errIfc := exec.LookPath("ifconfig")
	if errIP != nil && errIfc != nil {
		testenv.SkipOrFail(t, "neither ip (iproute2) nor ifconfig (net-tools) found to bring up lo")
	}
	dir := t.TempDir()
	// Inside the namespace nothing else uses ports, so the fixture takes
	// a fixed one outside the 4-port ephemeral range.
	const script = `
D="$1"; BRK="$0"
{ ip link set lo up || ifconfig lo up; } >/dev/null 2>&1 || { echo "NS_FAIL lo"; exit 0; }
echo "40000 40003" > /proc/sys/net/ipv4/ip_local_port_range || { echo "NS_FAIL range"; exit 0; }
echo NS_OK
"$BRK" fixture --listen 127.0.0.1:18099 > "$D/fx.out" 2>&1 &
FX=$!
i=0; until grep -q listening "$D/fx.out"; do i=$((i+1)); [ $i -gt 500 ] && { kill $FX; echo "FX_FAIL"; cat "$D/fx.out"; exit 0; }; sleep 0.01; done
"$BRK" http://127.0.0.1:18099/plain --conn 16 --threads 1 --phase 1s --timeout 500ms --json "$D/report.json" > "$D/out" 2> "$D/err"
echo "EXIT=$?"
kill $FX; wait $FX
`
	ns, killed := runWrapped(t, 20*time.Second, nil, "unshare", "-n", "sh", "-c", script, brkBin, dir)
	if killed {
		t.Fatalf("namespace script still running after 20s\n%s", ns)
	}
	if !strings.Contains(ns.stdout, "NS_OK") {
		testenv.SkipOrFail(t, "cannot set up a private network namespace (exit %d): %s%s", ns.code, ns.stdout, ns.stderr)
	}
	if strings.Contains(ns.stdout, "FX_FAIL") {
		t.Fatalf("fixture did not start in the namespace\n%s", ns)
	}
	out, _ := os.ReadFile(filepath.Join(dir, "out"))
	errb, _ := os.ReadFile(filepath.Join(dir, "err"))
	r := result{args: []string{"(in namespace) brk http://127.0.0.1:18099/plain --conn 16 ..."},
		stdout: string(out), stderr: string(errb), code: -1}
	checkNoCrash(t, r)
	if !strings.Contains(ns.stdout, "EXIT=3") {
		t.Fatalf("want EXIT=3 from brk\nscript: %s\n%s", ns.stdout, r)
	}
	r.code = 3
	last := lastLine(r.stdout)
	if want := "Inconclusive: client ran out of local ports ("; !strings.HasPrefix(last, want) ||
		!strings.Contains(last, "ip_local_port_range") {
		t.Errorf("last line %q, want prefix %q naming ip_local_port_range\n%s", last, want, r)
	}
	rep := readReport(t, filepath.Join(dir, "report.json"))
	if rep.Verdict != "inconclusive" {
		t.Errorf("verdict %q, want inconclusive", rep.Verdict)
	}
	if len(rep.Phases) != 1 {
		t.Errorf("%d phases, want 1", len(rep.Phases))
	}
	checkCounts(t, rep)
	t.Logf("observed: %s", last)
}

// usageCase is one bad invocation; every case must be refused.
type usageCase struct {
	name string
	args []string // after the URL when url is set
	url  bool     // prepend the fixture URL
}

// TestUserErrors: every error the user can cause exits 2 with exactly one
// "brk: ..." line on stderr, no verdict on stdout, no crash, and no
// request reaching the server.
func TestUserErrors(t *testing.T) {
	testenv.Parallel(t, testenv.Waits)
	fx := startFixture(t, bench.FixtureConfig{})
	dir := t.TempDir()
	// Flags that make an accepted run short, placed before the case's own
	// flags so the case's value wins.
	quick := []string{"--conn", "2", "--threads", "1", "--max", "1", "--phase", "200ms"}
	cases := []usageCase{
		{name: "url no host", args: []string{"http://"}},
		{name: "url ftp", args: []string{"ftp://x"}},
		{name: "url bad bracket", args: []string{"http://[::1/"}},
		{name: "url control char", args: []string{"http://h/?a=x\ny"}},
		{name: "query with space", url: false, args: []string{fx.URL("/plain?q=a b")}},
		{name: "phase 0s", url: true, args: []string{"--phase", "0s"}},
		{name: "phase negative", url: true, args: []string{"--phase=-1s"}},
		{name: "timeout -1s", url: true, args: []string{"--timeout", "-1s"}},
		{name: "timeout=-1s", url: true, args: []string{"--timeout=-1s"}},
		{name: "timeout 0s", url: true, args: []string{"--timeout", "0s"}},
		{name: "conn 0", url: true, args: []string{"--conn", "0"}},
		{name: "conn negative", url: true, args: []string{"--conn=-3"}},
		{name: "pace 0", url: true, args: []string{"--pace", "0"}},
		{name: "max -1", url: true, args: []string{"--max", "-1"}},
		{name: "max=-1", url: true, args: []string{"--max=-1"}},
		{name: "start above max", url: true, args: []string{"--start", "5", "--max", "2"}},
		{name: "threads negative", url: true, args: []string{"--threads=-1"}},
		{name: "connect no port", url: true, args: []string{"--connect", "nohost"}},
		{name: "body-file missing", url: true, args: []string{"--body-file", "/nonexistent"}},
		{name: "header empty name", url: true, args: []string{"-H", ":x"}},
		{name: "header CRLF", url: true, args: []string{"-H", "X-A: a\r\nX-B: b"}},
		{name: "header LF", url: true, args: []string{"-H", "X-A: a\nb"}},
		{name: "expect-status 99", url: true, args: []string{"--expect-status", "99"}},
		{name: "expect-status abc", url: true, args: []string{"--expect-status", "200,abc"}},
		{name: "method with space", url: true, args: []string{"--method", "GE T"}},
		{name: "json dir missing", url: true, args: []string{"--json", "/nonexistent-dir/x.json"}},
		{name: "report dir missing", url: true, args: []string{"--report", "/nonexistent-dir/x.html"}},
		{name: "report is a directory", url: true, args: []string{"--report", dir}},
		{name: "accept empty", url: true, args: []string{"--accept="}},
		{name: "url bad port", args: []string{"http://127.0.0.1:99999/"}},
		{name: "connect bad port", url: true, args: []string{"--connect", "127.0.0.1:99999"}},
		{name: "max 0", url: true, args: []string{"--max", "0"}},
		{name: "threads 0", url: true, args: []string{"--threads", "0"}},
		{name: "start 0", url: true, args: []string{"--start", "0"}},
		{name: "timeout without unit", url: true, args: []string{"--timeout", "100"}},
		{name: "report to stdout", url: true, args: []string{"--report", "-"}},
		{name: "no scheme", args: []string{strings.TrimPrefix(fx.URL("/plain"), "http://")}},
		{name: "conn --conn", args: []string{"conn", fx.URL("/plain"), "--conn", "5"}},
		{name: "server-pid missing", url: true, args: []string{"--server-pid", "999999999"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var args []string
			if c.url {
				args = append([]string{fx.URL("/plain")}, quick...)
				args = append(args, c.args...)
			} else {
				args = append(append([]string{}, c.args...), quick...)
			}
			before := fx.Requests()
			r, killed := runWrapped(t, 3*time.Second, nil, brkBin, args...)
			r.args = args
			problem := usageProblem(r, killed)
			if served := fx.Requests() - before; served != 0 && problem == "" {
				problem = "requests reached the server"
			}
			if problem != "" {
				t.Errorf("%s\n%s", problem, r)
			}
		})
	}

	// A refused invocation must not clobber an existing report.
	t.Run("usage error keeps existing reports", func(t *testing.T) {
		jsonPath := filepath.Join(dir, "old.json")
		htmlPath := filepath.Join(dir, "old.html")
		old := []byte("{\"old\": true}\n")
		for _, p := range []string{jsonPath, htmlPath} {
			if err := os.WriteFile(p, old, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		args := []string{fx.URL("/plain"), "--conn=-3", "--json", jsonPath, "--report", htmlPath}
		r, killed := runWrapped(t, 3*time.Second, nil, brkBin, args...)
		if p := usageProblem(r, killed); p != "" {
			t.Fatalf("%s\n%s", p, r)
		}
		var lost []string
		for _, p := range []string{jsonPath, htmlPath} {
			if b, _ := os.ReadFile(p); string(b) != string(old) {
				lost = append(lost, filepath.Base(p))
			}
		}
		if len(lost) > 0 {
			t.Fatalf("a usage error truncated the existing %s", strings.Join(lost, " and "))
		}
	})
}

// usageProblem says what is wrong with r as the answer to a user error,
// or "" when it is right: exit 2, exactly one "brk: " line on stderr, no
// verdict line on stdout.
func usageProblem(r result, killed bool) string {
	if killed {
		return "still running after 3s (the bad value was accepted)"
	}
	if r.code != 2 {
		return "exit " + strconv.Itoa(r.code) + ", want 2"
	}
	lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "brk: ") || r.stderr != lines[0]+"\n" {
		return "stderr is not exactly one line starting \"brk: \""
	}
	for _, l := range strings.Split(r.stdout, "\n") {
		if verdictLine(l) {
			return "stdout has a verdict line " + l
		}
	}
	return ""
}
