package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/brk-bench/brk/internal/testenv"
)

// TestQuickStartFreshCheckout runs the README quick start's real run as a
// shell script, in a copy of the repository (its files as git lists them,
// no binaries) with nothing on the PATH but Go and the few shell tools the
// block uses (bash, sed, sleep): it builds brk, starts the fixture on a
// free port and runs both commands. The phases are 400ms (as
// TestReadmeCommandsRun's) so that it is short; the demo line is run with
// go run as written (its phases 1s), for TestReadmeCommandsRun too. The go
// test line is not run.
func TestQuickStartFreshCheckout(t *testing.T) {
	testenv.Parallel(t, testenv.Waits)
	if testing.Short() {
		t.Skip("builds brk in a copy of the repository")
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(string(readme), -1)
	var script string
	for _, b := range blocks {
		if strings.Contains(b[1], "brk fixture --listen 127.0.0.1:0") && strings.Contains(b[1], "go build -o bin/brk") {
			script = b[1]
			break
		}
	}
	if script == "" {
		t.Fatal("README: no quick start block that builds brk and starts the fixture on a free port")
	}
	script = regexp.MustCompile(`--phase \S+`).ReplaceAllString(script, "--phase 400ms")

	// The copy: the repository's files, committed or not, as git lists them.
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("git", "-C", root, "ls-files", "-co", "--exclude-standard").Output()
	if err != nil {
		t.Skipf("git ls-files: %v", err)
	}
	dir := t.TempDir()
	for _, f := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			continue // listed but gone (deleted, not yet committed)
		}
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The PATH: Go's bin directory and the shell tools, nothing else.
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	tools := t.TempDir()
	for _, name := range []string{"bash", "sed", "sleep"} {
		p, err := exec.LookPath(name)
		if err != nil {
			t.Skipf("%s: %v", name, err)
		}
		if err := os.Symlink(p, filepath.Join(tools, name)); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Dir(goBin) + ":" + tools
	env := []string{"PATH=" + path, "HOME=" + os.Getenv("HOME"), "GOPROXY=off", "GOTOOLCHAIN=local"}
	for _, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH"} {
		if v, err := exec.Command(goBin, "env", k).Output(); err == nil {
			env = append(env, k+"="+strings.TrimSpace(string(v)))
		}
	}
	// -trimpath: the copy's directory is new each run, and a build that
	// records it misses the build cache every time (about 20 s of the
	// test); without it the same packages' compilations are reused.
	flags, _ := exec.Command(goBin, "env", "GOFLAGS").Output()
	env = append(env, "GOFLAGS="+strings.TrimSpace(strings.TrimSpace(string(flags))+" -trimpath"))
	run := func(name string, within time.Duration, args ...string) string {
		ctx, cancel := context.WithTimeout(context.Background(), within)
		defer cancel()
		cmd := exec.CommandContext(ctx, filepath.Join(tools, "bash"), args...)
		cmd.Dir, cmd.Env = dir, env
		cmd.WaitDelay = 10 * time.Second // a fixture left behind holds the output open
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, b)
		}
		return string(b)
	}
	got := run("the quick start's real run", 4*time.Minute, "-c", "if command -v brk; then exit 9; fi\n"+script)
	// A run on a busy box may end inconclusive, as it should there
	// (busyInconclusive): that is the verdict line it prints.
	verdicts := regexp.MustCompile(`(?m)^((Done|Broken) \(\d+ concurrent requests\)|Inconclusive: the box was busy in .*)$`).FindAllString(got, -1)
	if len(verdicts) != 2 {
		t.Errorf("want two verdict lines from the quick start's two runs\n%s", got)
	}
	for _, v := range verdicts {
		if strings.HasPrefix(v, "Inconclusive") {
			t.Logf("a quick start run: %s, as it should be on a busy box", v)
		}
	}
	if !strings.Contains(got, "searching for the break from 8 concurrent requests") {
		t.Errorf("the first run did not search\n%s", got)
	}
	// The README's demo line, as written (TestReadmeCommandsRun leaves it
	// to this test): it finds the predicted break and exits 0.
	var demo string
	for attempt := 1; ; attempt++ {
		demo = run("go run ./cmd/brk demo", 3*time.Minute, "-c", "go run ./cmd/brk demo --phase 1s 2>&1; echo \"exit $?\"")
		// As runTimed: a run that broke early with only timeouts (a
		// stalled machine) is made again, timedAttempts in all.
		var n int
		m := regexp.MustCompile(`(?m)^Broken \((\d+) concurrent requests\)$`).FindStringSubmatch(demo)
		if m != nil {
			n, _ = strconv.Atoi(m[1])
		}
		if attempt == timedAttempts || m == nil || n >= 32 || !timingOnly(demo) {
			break
		}
		t.Logf("demo attempt %d broke early with only timeouts (a stalled machine?); again (load %s)", attempt, loadavg())
	}
	if !strings.Contains(demo, "demo: predicted break between 24 and 32") ||
		!strings.Contains(demo, "demo: brk found the predicted break, between 24 and 32") ||
		!regexp.MustCompile(`(?m)^Broken \(32 concurrent requests\)$`).MatchString(demo) || !strings.HasSuffix(demo, "exit 0\n") {
		t.Errorf("go run ./cmd/brk demo: want the predicted break found, Broken (32 concurrent requests), exit 0\n%s", demo)
	}
}
