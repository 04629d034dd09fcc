package main

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brk-bench/brk"
	"github.com/brk-bench/brk/bench"
	"github.com/brk-bench/brk/internal/testenv"
)

// TestTargetsRefused: a bad targets file is refused before any traffic,
// exit 2, with the file and the line of its fault: a malformed line, a
// missing body file, an unknown method spelling, another origin, more
// targets than the bound, an empty file; and --targets with what it
// cannot be combined with. Nothing connects to the listener the files
// name.
func TestTargetsRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	base := "http://" + ln.Addr().String()
	dir := t.TempDir()
	var many strings.Builder
	for i := range brk.MaxTargets + 1 {
		fmt.Fprintf(&many, "GET %s/t%d\n\n", base, i)
	}
	files := map[string]string{
		"malformed.txt": "GET " + base + "/a\n\nGET" + base + "/b\n",
		"nobody.txt":    "GET " + base + "/a\n\nPOST " + base + "/b\nContent-Type: text/plain\n@missing.json\n",
		"method.txt":    "GET " + base + "/a\nget " + base + "/b\n",
		"origin.txt":    "GET " + base + "/a\n\n# weight 2\nGET http://127.0.0.2:9/b\n",
		"many.txt":      many.String(),
		"empty.txt":     "",
		"comments.txt":  "# only a comment\n\n",
		"good.txt":      "GET " + base + "/a\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		args  []string
		stdin string
		want  string // the line after "brk: ", up to its end or a prefix ending in ": "
	}{
		{[]string{"--targets", "malformed.txt"}, "", "--targets: malformed.txt:3: "},
		{[]string{"--targets", "nobody.txt"}, "", "--targets: nobody.txt:5: "},
		{[]string{"--targets", "method.txt"}, "", "--targets: method.txt:2: "},
		{[]string{"--targets", "origin.txt"}, "", "--targets: origin.txt:4: "},
		{[]string{"--targets", "many.txt"}, "", fmt.Sprintf("--targets: many.txt:%d: ", 2*brk.MaxTargets+1)},
		{[]string{"--targets", "empty.txt"}, "", "--targets: empty.txt:1: "},
		{[]string{"--targets", "comments.txt"}, "", "--targets: comments.txt:2: "},
		{[]string{"rate", "--targets", "-"}, files["method.txt"], "--targets: stdin:2: "},
		{[]string{"conn", "--targets", "many.txt"}, "", fmt.Sprintf("--targets: many.txt:%d: ", 2*brk.MaxTargets+1)},
		{[]string{"--targets", "missing.txt"}, "", "--targets: open missing.txt: no such file or directory"},
		{[]string{"--targets", "good.txt", base + "/"}, "", "the URL argument and --targets cannot be combined: the targets file names every URL"},
		{[]string{"--targets", "good.txt", "--method", "PUT"}, "", "--targets and --method cannot be combined: --targets gives each target its own method (its request line)"},
		{[]string{"--targets", "-", "--body-file", "-"}, "", "--targets and --body-file cannot be combined: --targets gives each target its own body (its @path line); --targets - and --body-file - would also share one stdin"},
		{[]string{"ab", "--targets", "good.txt", base + "/a", base + "/b"}, "", "--targets applies to the requests, connections and rate tests only"},
		{[]string{"req"}, "", `expected "<url>" (or --targets FILE)`},
		{[]string{"--targets", "good.txt", "-H", "Connection: x"}, "", `--targets[0]: header "Connection" is set by brk and cannot be given`},
	} {
		cmd := exec.Command(brkBin, append(c.args, "-d", "1s", "-t", "1")...)
		cmd.Dir = dir
		cmd.Stdin = strings.NewReader(c.stdin)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		cmd.Run()
		if code := cmd.ProcessState.ExitCode(); code != 2 {
			t.Errorf("brk %s: exit %d, want 2\n%s%s", strings.Join(c.args, " "), code, stdout.String(), stderr.String())
			continue
		}
		got := strings.TrimSuffix(stderr.String(), "\n")
		if want := "brk: " + c.want; got != want && !(strings.HasSuffix(want, ": ") && strings.HasPrefix(got, want)) || strings.Contains(got, "\n") {
			t.Errorf("brk %s:\n got %q\nwant %q", strings.Join(c.args, " "), got, want)
		}
	}
	ln.(*net.TCPListener).SetDeadline(time.Now().Add(10 * time.Millisecond))
	if c, err := ln.Accept(); err == nil {
		c.Close()
		t.Error("a refused run connected to the targets' server")
	}
}

// TestTargetsRun: brk req --targets sends the file's mix with -H on every
// target and reports each target's outcomes in the JSON (targets per
// phase, mix order, the file's weights).
func TestTargetsRun(t *testing.T) {
	testenv.Parallel(t, testenv.Waits)
	addr := startFixture(t, bench.FixtureConfig{}).Addr()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "body.bin"), []byte("echo me\x00"), 0o600); err != nil {
		t.Fatal(err)
	}
	file := fmt.Sprintf("# weight 3\nGET http://%s/plain\n\n# expect-status 404\nGET http://%s/no-such-route\n\nPOST http://%s/echo\n@body.bin\n", addr, addr, addr)
	if err := os.WriteFile(filepath.Join(dir, "t.txt"), []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(brkBin, "--targets", "t.txt", "-H", "X-Run: 1", "-d", "500ms", "-c", "2", "-t", "1", "--timeout", "1s", "--json", "out.json", "--quiet")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("brk: %v\n%s", err, out)
	}
	if first, _, _ := strings.Cut(string(out), "\n"); first != "brk requests test  http://"+addr+" (3 targets)" {
		t.Errorf("header %q names the mix otherwise", first)
	}
	b, err := os.ReadFile(filepath.Join(dir, "out.json"))
	if err != nil {
		t.Fatal(err)
	}
	var res brk.Result
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	ts := res.Phases[0].Targets
	if len(ts) != 3 || ts[0].Weight != 3 || ts[1].Weight != 1 || ts[2].Method != "POST" || ts[2].URL != "http://"+addr+"/echo" {
		t.Fatalf("targets %+v", ts)
	}
	var all uint64
	for _, x := range ts {
		all += x.Counts.Attempted
		if x.Counts.Attempted == 0 || x.SuccessPct != 100 || x.LatencyHdr == "" {
			t.Errorf("target %d: %+v", x.Index, x)
		}
	}
	if ts[1].StatusCodes["404"] != ts[1].Counts.Attempted {
		t.Errorf("target 1's expect-status 404: %+v", ts[1])
	}
	if all != res.Phases[0].Counts.Attempted {
		t.Errorf("targets attempted %d, the phase %d", all, res.Phases[0].Counts.Attempted)
	}
}

// TestTargetsShardsMerge: two shards of a requests test with a targets
// file: each shard's per-target counts are in its raw measurement, the
// coordinator's per-target counts and histograms are their exact sum, and
// brk merge of the two reports gives the same targets. A shard whose
// targets differ (another weight) does not join: the targets are part of
// the plan hash.
func TestTargetsShardsMerge(t *testing.T) {
	testenv.Parallel(t, testenv.Waits)
	fx := startFixture(t, bench.FixtureConfig{})
	dir := t.TempDir()
	file := fmt.Sprintf("# weight 2\nGET %s\n\nPOST %s\n@body.txt\n\nGET %s\n", fx.URL("/plain"), fx.URL("/echo"), fx.URL("/hello"))
	for name, body := range map[string]string{"t.txt": file, "body.txt": "shard body", "t2.txt": strings.Replace(file, "weight 2", "weight 3", 1)} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	plan := []string{"--targets", filepath.Join(dir, "t.txt"), "--conn", "4", "--start", "1", "--pace", "1", "--max", "2", "--phase", "300ms", "--threads", "1", "--timeout", "1s", "--quiet"}
	ps := startShards(t, 2, dir, plan...)
	var rs []result
	for _, p := range ps {
		rs = append(rs, p.wait())
	}
	for i, r := range rs {
		if r.code != 0 {
			t.Fatalf("shard %d: %s", i, r)
		}
	}
	a, b := readResult(t, filepath.Join(dir, "shard0.json")), readResult(t, filepath.Join(dir, "shard1.json"))
	merged := runBrk(t, "merge", filepath.Join(dir, "shard1.json"), filepath.Join(dir, "shard0.json"), "--json", filepath.Join(dir, "merged.json"))
	if merged.code != 0 {
		t.Fatalf("merge: %s", merged)
	}
	m := readResult(t, filepath.Join(dir, "merged.json"))
	if len(a.Phases) != 2 || len(m.Phases) != 2 {
		t.Fatalf("phases: shard 0 %d, merged %d", len(a.Phases), len(m.Phases))
	}
	for i, p := range a.Phases {
		ra, rb := rawOf(t, p).Stats.Targets, rawOf(t, b.Phases[i]).Stats.Targets
		if len(ra) != 3 || len(rb) != 3 || len(p.Targets) != 3 || len(m.Phases[i].Targets) != 3 {
			t.Fatalf("phase %d: raw targets %d and %d, coordinator %d, merged %d", i, len(ra), len(rb), len(p.Targets), len(m.Phases[i].Targets))
		}
		for k := range p.Targets {
			sum := ra[k].Counts.Attempted + rb[k].Counts.Attempted
			c, q := p.Targets[k], m.Phases[i].Targets[k]
			if sum == 0 || c.Counts.Attempted != sum || q.Counts != c.Counts || q.LatencyHdr != c.LatencyHdr || q.URL != c.URL || q.Weight != c.Weight || q.Method != c.Method {
				t.Errorf("phase %d target %d: shards %d+%d, coordinator %+v, merged %+v", i, k, ra[k].Counts.Attempted, rb[k].Counts.Attempted, c, q)
			}
			if c.LatencyMs.Count != ra[k].LatencyCount+rb[k].LatencyCount {
				t.Errorf("phase %d target %d: %d latencies, shards %d+%d", i, k, c.LatencyMs.Count, ra[k].LatencyCount, rb[k].LatencyCount)
			}
		}
	}
	validateSchema(t, filepath.Join(dir, "merged.json"))
	// Another weight on shard 1: the plan hashes differ, the run is refused.
	childEnv(t, "BRK_TOKEN", "loopback-token")
	common := func(coord string) []string {
		return []string{"--conn", "4", "--start", "1", "--max", "1", "--pace", "1", "--phase", "200ms", "--threads", "1", "--timeout", "1s", "--quiet", "--coordinator", coord, "--join-timeout", "5s"}
	}
	coord, p0 := startCoordinator(t, func(coord string) *proc {
		return startBrk(t, nil, append([]string{"--targets", filepath.Join(dir, "t.txt"), "--shard", "0/2"}, common(coord)...)...)
	})
	p1 := startBrk(t, nil, append([]string{"--targets", filepath.Join(dir, "t2.txt"), "--shard", "1/2"}, common(coord)...)...)
	r0, r1 := p0.wait(), p1.wait()
	if r0.code != 3 || r1.code != 3 || !strings.Contains(r1.stdout, "the shard's plan differs from the coordinator's (plan hash") {
		t.Errorf("shards with different targets ran:\n%s\n%s", r0, r1)
	}
}

// TestTargetsShardsRate: two shards of a rate test with a 1:1:2 targets
// file, one worker each: each shard takes every other arrival of the one
// schedule and each arrival its target by the schedule's index, so
// neither shard alone sends the mix's ratio (shard 0's arrivals 0, 2, 4,
// … take the period's even slots) but the two together do, within one
// request per shard.
func TestTargetsShardsRate(t *testing.T) {
	testenv.Parallel(t, testenv.Waits)
	fx := startFixture(t, bench.FixtureConfig{})
	dir := t.TempDir()
	file := fmt.Sprintf("GET %s\n\nGET %s\n\n# weight 2\nGET %s\n", fx.URL("/plain"), fx.URL("/hello"), fx.URL("/json"))
	if err := os.WriteFile(filepath.Join(dir, "t.txt"), []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	ps := startShards(t, 2, dir, "rate", "--targets", filepath.Join(dir, "t.txt"), "--conn", "4", "--start", "400", "--max", "400", "--pace", "100",
		"--phase", "500ms", "--threads", "1", "--timeout", "1s", "--quiet")
	for i, p := range ps {
		// What is checked is how the arrivals were dealt, whatever the
		// verdict: a busy run rejected the level (1 s timeouts on 2 slots
		// a shard, exit 1), its arrivals dealt as ever.
		if r := p.wait(); r.code != 0 && r.code != 1 {
			t.Fatalf("shard %d: %s", i, r)
		}
	}
	var sum [3]uint64
	var all uint64
	var per [2][3]uint64
	for i := range 2 {
		r := readResult(t, filepath.Join(dir, fmt.Sprintf("shard%d.json", i)))
		ts := rawOf(t, r.Phases[0]).Stats.Targets
		if len(ts) != 3 {
			t.Fatalf("shard %d: %d targets", i, len(ts))
		}
		t.Logf("shard %d: %d %d %d", i, ts[0].Counts.Attempted, ts[1].Counts.Attempted, ts[2].Counts.Attempted)
		for k := range ts {
			sum[k] += ts[k].Counts.Attempted
			all += ts[k].Counts.Attempted
			per[i][k] = ts[k].Counts.Attempted
		}
	}
	// The period is c, a, b, c: shard 0's slots take b and c, shard 1's
	// a and c. Each shard's own cursor would have sent every target.
	if per[0][0] != 0 || per[1][1] != 0 || per[0][1] == 0 || per[1][0] == 0 {
		t.Errorf("per shard %v: want the schedule's index to deal a to shard 1 only and b to shard 0 only", per)
	}
	if all < 100 {
		t.Fatalf("%d arrivals", all)
	}
	for k, w := range []float64{1, 1, 2} {
		share := float64(all) * w / 4
		if d := float64(sum[k]) - share; d >= 2 || d <= -2 {
			t.Errorf("target %d: %d of %d over both shards, its share %.1f", k, sum[k], all, share)
		}
	}
}
