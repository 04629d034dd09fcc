package main

// Sharded runs over loopback: several brk processes as shards of one plan
// with a coordinator on 127.0.0.1, against the capacity fixture, compared
// with one box running the whole plan; the fault cases (a shard killed, a
// wrong token); brk merge of their reports.

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/brk-bench/brk"
	"github.com/brk-bench/brk/bench"
	"github.com/brk-bench/brk/internal/e2ekit"
	"github.com/brk-bench/brk/internal/judge"
	"github.com/brk-bench/brk/internal/testenv"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// validateSchema checks a report file against schema/report-1.schema.json.
func validateSchema(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open("../../schema/report-1.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("report-1.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("report-1.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	r, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	v, err := jsonschema.UnmarshalJSON(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(v); err != nil {
		t.Errorf("%s does not match the schema: %v", filepath.Base(path), err)
	}
}

func readResult(t *testing.T, path string) *brk.Result {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r brk.Result
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &r
}

// startShards starts n shard processes of one plan; args are the plan.
// Shard 0 listens before the others start (startCoordinator).
func startShards(t *testing.T, n int, dir string, args ...string) []*proc {
	t.Helper()
	childEnv(t, "BRK_TOKEN", "loopback-token")
	shard := func(i int, coord string) *proc {
		a := append([]string{}, args...)
		a = append(a, "--shard", fmt.Sprintf("%d/%d", i, n), "--coordinator", coord,
			"--json", filepath.Join(dir, fmt.Sprintf("shard%d.json", i)))
		return startBrk(t, nil, a...)
	}
	coord, p0 := startCoordinator(t, func(coord string) *proc { return shard(0, coord) })
	ps := []*proc{p0}
	for i := 1; i < n; i++ {
		ps = append(ps, shard(i, coord))
	}
	return ps
}

// startCoordinator starts shard 0 (start, given the coordinator's
// address) on a free port and returns once it listens there itself: a
// process that took the port between FreePort and shard 0's bind would
// take the other shards' connections. Shard 0 then fails its bind and
// is started again on another port, up to 5 times.
func startCoordinator(t *testing.T, start func(coord string) *proc) (string, *proc) {
	t.Helper()
	for range 5 {
		coord := coordinatorPort(t)
		p := start(coord)
		if coordinatorListens(t, p, coord) {
			return coord, p
		}
		t.Logf("shard 0 could not bind %s (another process took it): again on another port\n%s", coord, p.wait())
	}
	t.Fatal("shard 0 could not bind a port 5 times")
	return "", nil
}

// coordinatorPort picks shard 0's port; a test of the retry points it at
// a taken port.
var coordinatorPort = testenv.FreePort

// TestStartCoordinatorRetriesATakenPort: when another process holds the
// port picked first, shard 0 fails to bind it and startCoordinator starts
// it again on another port, where it listens itself.
func TestStartCoordinatorRetriesATakenPort(t *testing.T) {
	// Serial: it points the package's coordinatorPort at a taken port,
	// which every sharded test beside it would read (a data race the race
	// detector caught on a busy run when it ran in parallel).
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	picks := 0
	coordinatorPort = func(tb testing.TB) string {
		if picks++; picks == 1 {
			return ln.Addr().String()
		}
		return testenv.FreePort(tb)
	}
	t.Cleanup(func() { coordinatorPort = testenv.FreePort })
	childEnv(t, "BRK_TOKEN", "retry-token")
	coord, p0 := startCoordinator(t, func(coord string) *proc {
		return startBrk(t, nil, "http://127.0.0.1:1/", "--conn", "2", "--max", "1", "--phase", "200ms", "--quiet",
			"--shard", "0/2", "--coordinator", coord, "--join-timeout", "1s")
	})
	if coord == ln.Addr().String() || picks != 2 {
		t.Fatalf("shard 0 on %s after %d picks; the first pick %s was taken, want a second port", coord, picks, ln.Addr())
	}
	if ok, err := testenv.ListensOn(p0.cmd.Process.Pid, coord); !ok && !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("shard 0 does not listen on %s: %v", coord, err)
	}
	if r := p0.wait(); r.code != 3 || !strings.Contains(r.stdout, "did not join") {
		t.Errorf("shard 0 alone: %s", r)
	}
}

// coordinatorListens waits (at most 10 s) until p listens on coord
// (testenv.ListensOn), and reports false when p said the port was taken.
func coordinatorListens(t *testing.T, p *proc, coord string) bool {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ok, err := testenv.ListensOn(p.cmd.Process.Pid, coord)
		if errors.Is(err, errors.ErrUnsupported) {
			return true // no /proc: the other shards find out when they join
		}
		if err != nil {
			t.Fatalf("shard 0's listener: %v", err)
		}
		if ok {
			return true
		}
		if strings.Contains(p.stdout.String(), "bind: address already in use") {
			return false
		}
		if time.Now().After(deadline) {
			t.Fatalf("shard 0 did not listen on %s within 10s\n%s", coord, p.wait())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestShardsFindTheSameBreak: 3 shards of the connections test (one
// request per connection: every attempted request reaches the server)
// against a fixture with capacity 4 and 40 ms service (latency ≈
// concurrent × 10 ms) and a 180 ms timeout: 12 concurrent connections
// pass (≈120 ms), 24 do not (≈240 ms), for the shards as for one box.
// The fixture counts exactly the requests the shards attempted, and brk
// merge of the shard reports gives the coordinator's report.
func TestShardsFindTheSameBreak(t *testing.T) {
	testenv.Parallel(t, testenv.Waits)
	fx := startFixture(t, bench.FixtureConfig{Capacity: 4, Service: 40 * time.Millisecond})
	plan := []string{"conn", fx.URL("/plain"), "--expect-body", "ok", "--start", "12", "--pace", "12", "--max", "36",
		"--phase", "1s", "--timeout", "180ms", "--threads", "1", "--quiet"}
	dir := t.TempDir()
	for attempt := 1; ; attempt++ {
		before := fx.Requests()
		ps := startShards(t, 3, dir, plan...)
		var rs []result
		for _, p := range ps {
			rs = append(rs, p.wait())
		}
		served := fx.Requests() - before
		var shards []*brk.Result
		var attempted uint64
		for i := range rs {
			r := readResult(t, filepath.Join(dir, fmt.Sprintf("shard%d.json", i)))
			shards = append(shards, r)
			for _, ph := range r.Phases {
				attempted += rawOf(t, ph).Stats.Counts.Attempted
			}
		}
		if int64(attempted) != served {
			t.Errorf("the fixture served %d requests, the shards attempted %d", served, attempted)
		}
		for i, r := range rs {
			if r.code != rs[0].code || lastLine(r.stdout) != lastLine(rs[0].stdout) {
				t.Fatalf("shard %d ended otherwise than shard 0:\n%s\n%s", i, r, rs[0])
			}
		}
		before = fx.Requests()
		single := runBrk(t, append(plan, "--json", filepath.Join(dir, "single.json"))...)
		one := readResult(t, filepath.Join(dir, "single.json"))
		if got := fx.Requests() - before; got != int64(total(one)) {
			t.Errorf("the fixture served %d requests, the single box attempted %d", got, total(one))
		}
		if lastLine(rs[0].stdout) != "Broken (24 connections)" || lastLine(single.stdout) != "Broken (24 connections)" {
			if attempt < 3 {
				t.Logf("attempt %d: a loaded machine moved the break; again\n%s\n%s", attempt, rs[0], single)
				continue
			}
			t.Fatalf("want both Broken (24 connections):\n%s\n%s", rs[0], single)
		}
		coord := shards[0]
		if *coord.LastAccepted != *one.LastAccepted || *coord.FirstRejected != *one.FirstRejected || coord.Verdict != one.Verdict {
			t.Fatalf("shards %v/%v %s, one box %v/%v %s", *coord.LastAccepted, *coord.FirstRejected, coord.Verdict,
				*one.LastAccepted, *one.FirstRejected, one.Verdict)
		}
		if len(coord.Shards) != 3 || coord.Shard == nil || coord.Shard.StartAt == "" {
			t.Fatalf("coordinator report lacks its shard sections: %+v %+v", coord.Shard, coord.Shards)
		}
		for _, s := range coord.Shards {
			if s.MaxLatenessMs > 1000 {
				t.Errorf("shard %d started a phase %.1f ms late", s.Index, s.MaxLatenessMs)
			}
		}
		// brk merge of the three reports is the coordinator's report.
		merged := runBrk(t, "merge", filepath.Join(dir, "shard2.json"), filepath.Join(dir, "shard0.json"),
			filepath.Join(dir, "shard1.json"), "--json", filepath.Join(dir, "merged.json"))
		if merged.code != rs[0].code || lastLine(merged.stdout) != lastLine(rs[0].stdout) {
			t.Fatalf("merge:\n%s", merged)
		}
		for _, f := range []string{"shard0.json", "shard1.json", "merged.json"} {
			validateSchema(t, filepath.Join(dir, f))
		}
		m := readResult(t, filepath.Join(dir, "merged.json"))
		// Shard 0's "shards" give every shard's threads, as the merge's.
		for i, s := range coord.Shards {
			if i >= len(m.Shards) || s.Threads != m.Shards[i].Threads || s.Threads != 1 {
				t.Errorf("shard 0's shards %+v, the merge's %+v: want threads 1 each in both", coord.Shards, m.Shards)
				break
			}
		}
		// A shard report whose embedded plan was edited (its phases 900 ms
		// instead of 1 s, the plan hash left as it was) is refused: brk
		// merge judges by the embedded plan.
		var edit map[string]any
		b, err := os.ReadFile(filepath.Join(dir, "shard1.json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &edit); err != nil {
			t.Fatal(err)
		}
		edit["shard"].(map[string]any)["plan"].(map[string]any)["phase_ms"] = 900
		if b, err = json.Marshal(edit); err != nil {
			t.Fatal(err)
		}
		edited := filepath.Join(dir, "shard1-edited.json")
		if err := os.WriteFile(edited, b, 0o644); err != nil {
			t.Fatal(err)
		}
		// With BRK_TOKEN the report's HMAC catches the edit; without it
		// (not verified) the plan hash does.
		refused := runBrk(t, "merge", filepath.Join(dir, "shard0.json"), edited, filepath.Join(dir, "shard2.json"))
		if refused.code != 2 || !strings.Contains(refused.stderr, edited+": its HMAC does not match") {
			t.Errorf("merge of an edited shard report: want exit 2 naming it\n%s", refused)
		}
		childEnv(t, "BRK_TOKEN", "")
		refused = runBrk(t, "merge", filepath.Join(dir, "shard0.json"), edited, filepath.Join(dir, "shard2.json"))
		if refused.code != 2 || !strings.Contains(refused.stderr, edited+": its embedded plan does not match its plan hash") {
			t.Errorf("merge of an edited shard report without BRK_TOKEN: want exit 2 naming it\n%s", refused)
		}
		for i, p := range coord.Phases {
			q := m.Phases[i]
			if p.Counts != q.Counts || p.Level != q.Level || p.Accepted != q.Accepted || p.LatencyMs != q.LatencyMs || p.LatencyHdr != q.LatencyHdr {
				t.Errorf("phase %d: merged %+v, coordinator %+v", i, q, p)
			}
		}
		return
	}
}

// TestShardsSearchInStep: two shards of the requests test search for the
// break (no --pace) against the capacity fixture (4 in service, 10 ms
// each; 8 connections over both shards: the break is at 33, 32 held, see
// e2e's TestSearchRequestsFindsTheModelBreak). Both shards visit the same
// levels in the same roles, brk merge of their reports replays the same
// decisions and equals the coordinator's report, and one box running the
// same plan finds the same pair. The one box searches at the same time,
// against a fixture of its own with the same capacity (a sleep: 400
// requests/s cost brk and the fixture a few % of a core). The shards
// leave 400 ms after each phase (--drain-allowance: the 100 ms timeout's
// drain and the exchange over loopback, which takes a few ms) instead of
// the default timeout + 1 s.
func TestShardsSearchInStep(t *testing.T) {
	testenv.ParallelFirst(t, testenv.Waits)
	fx := startFixture(t, bench.FixtureConfig{Capacity: 4, Service: 10 * time.Millisecond})
	fxOne := startFixture(t, bench.FixtureConfig{Capacity: 4, Service: 10 * time.Millisecond})
	planFor := func(fx *bench.Fixture) []string {
		return []string{fx.URL("/plain"), "--conn", "8", "--phase", "500ms", "--timeout", "100ms", "--threads", "1", "--quiet"}
	}
	dir := t.TempDir()
	for attempt := 1; ; attempt++ {
		ps := startShards(t, 2, dir, append(planFor(fx), "--drain-allowance", "400ms")...)
		oneBox := startBrk(t, nil, append(planFor(fxOne), "--json", filepath.Join(dir, "single.json"))...)
		var rs []result
		for _, p := range ps {
			rs = append(rs, p.wait())
		}
		single := oneBox.wait()
		var shards []*brk.Result
		for i := range rs {
			shards = append(shards, readResult(t, filepath.Join(dir, fmt.Sprintf("shard%d.json", i))))
		}
		a, b := shards[0], shards[1]
		if a.Plan.Search == nil || len(a.Phases) != len(b.Phases) || len(a.Phases) < 4 {
			t.Fatalf("shards ran %d and %d phases (search %v)\n%s\n%s", len(a.Phases), len(b.Phases), a.Plan.Search != nil, rs[0], rs[1])
		}
		for i := range a.Phases {
			if a.Phases[i].Level != b.Phases[i].Level || a.Phases[i].Role != b.Phases[i].Role || a.Phases[i].Accepted != b.Phases[i].Accepted {
				t.Fatalf("phase %d: shard 0 %d %s, shard 1 %d %s", i, a.Phases[i].Level, a.Phases[i].Role, b.Phases[i].Level, b.Phases[i].Role)
			}
		}
		// brk said it could not tell on a busy box, as it should: nothing
		// to compare with one box. The reason may name the busy box, or
		// what the box's load did (a busy run with a loop on each core:
		// "the levels conflict: 24 … was rejected in 2 of 3 runs below
		// 32"), its phases judged on the busy box.
		noisy := busyInconclusive(rs[0]) || rs[0].code == 3 && e2ekit.BusyPhases(a) > 0
		if noisy && lastLine(rs[0].stdout) == lastLine(rs[1].stdout) &&
			e2ekit.AgainOnBusy(t, attempt, e2ekit.BusyPhases(a), "the shards: "+lastLine(rs[0].stdout)) {
			continue
		}
		if lastLine(rs[0].stdout) != lastLine(rs[1].stdout) || rs[0].code != 1 {
			t.Fatalf("shards ended %q (%d) and %q (%d)", lastLine(rs[0].stdout), rs[0].code, lastLine(rs[1].stdout), rs[1].code)
		}
		merged := runBrk(t, "merge", filepath.Join(dir, "shard1.json"), filepath.Join(dir, "shard0.json"), "--json", filepath.Join(dir, "merged.json"))
		m := readResult(t, filepath.Join(dir, "merged.json"))
		if merged.code != rs[0].code || lastLine(merged.stdout) != lastLine(rs[0].stdout) || len(m.Phases) != len(a.Phases) ||
			*m.LastAccepted != *a.LastAccepted || *m.FirstRejected != *a.FirstRejected ||
			*m.FinalPair.HeldPhase != *a.FinalPair.HeldPhase || *m.FinalPair.BrokePhase != *a.FinalPair.BrokePhase {
			t.Fatalf("merge differs from the coordinator:\n%s\n%s", merged, rs[0])
		}
		for i, p := range a.Phases {
			if q := m.Phases[i]; p.Level != q.Level || p.Role != q.Role || p.Counts != q.Counts || p.LatencyHdr != q.LatencyHdr {
				t.Fatalf("phase %d: merged %d %s %+v, coordinator %d %s %+v", i, q.Level, q.Role, q.Counts, p.Level, p.Role, p.Counts)
			}
		}
		validateSchema(t, filepath.Join(dir, "merged.json"))
		one := readResult(t, filepath.Join(dir, "single.json"))
		// The one box said it could not tell on the busy box (a busy suite
		// run: the shards' runs agreed on 32/33, the single box's runs of
		// 29 disagreed): nothing to compare the shards' pair with.
		if (busyInconclusive(single) || single.code == 3) && e2ekit.AgainOnBusy(t, attempt, e2ekit.BusyPhases(one), "the one box: "+lastLine(single.stdout)) {
			continue
		}
		if one.LastAccepted == nil || one.FirstRejected == nil || *one.LastAccepted != *a.LastAccepted || *one.FirstRejected != *a.FirstRejected {
			if attempt < 3 {
				t.Logf("attempt %d: a loaded machine moved the break; again\n%s\n%s", attempt, rs[0], single)
				continue
			}
			// Both searches ran most phases on a busy box and said so
			// ("the break is the server's under that load"): the break
			// under that load moves by a level between two searches at
			// the model's edge (a busy run: shards 32/33, one box 31/32,
			// every phase of both busy). Nothing to compare.
			if e2ekit.MostlyBusy(one, a) {
				t.Skipf("attempt %d: shards %s, one box %s, both searches busy in most phases: nothing to compare", attempt, lastLine(rs[0].stdout), lastLine(single.stdout))
			}
			t.Fatalf("shards and one box found different pairs:\n%s\n%s", rs[0], single)
		}
		t.Logf("shards and one box: %s", lastLine(rs[0].stdout))
		return
	}
}

// total is every request a run sent: its phases' and its cool-downs'.
func total(r *brk.Result) uint64 {
	var n uint64
	for _, p := range r.Phases {
		n += p.Counts.Attempted
	}
	for _, c := range r.CoolDowns {
		n += c.Requests
	}
	return n
}

func expectCode(t *testing.T, r result, code int) {
	t.Helper()
	if r.code != code {
		t.Fatalf("exit %d, want %d\n%s", r.code, code, r)
	}
}

// TestShardKilled: shard 2 is killed in phase 1; the coordinator ends the
// phase inconclusive at once and every other shard stops (exit 3), well
// within a phase slot.
func TestShardKilled(t *testing.T) {
	testenv.Parallel(t, testenv.Busy)
	fx := startFixture(t, bench.FixtureConfig{})
	dir := t.TempDir()
	ps := startShards(t, 3, dir, fx.URL("/plain"), "--conn", "6", "--phase", "2s", "--timeout", "500ms", "--threads", "1", "--quiet", "--max", "4")
	// Phase 0 runs for 2 s from ~2 s after the last join; kill shard 2
	// once phase 1 has started.
	ps[0].waitFor("phase 0", 15*time.Second)
	time.Sleep(1500 * time.Millisecond)
	if err := ps[2].cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	for i, p := range ps[:2] {
		r := p.wait()
		lag := time.Since(killed)
		expectCode(t, r, 3)
		if !strings.Contains(lastLine(r.stdout), "shard 2 was lost") {
			t.Errorf("shard %d: %q", i, lastLine(r.stdout))
		}
		if lag > 4*time.Second {
			t.Errorf("shard %d stopped %s after the kill", i, lag)
		}
		// The phase in progress is in its JSON, inconclusive, naming the
		// lost shard (it was missing).
		rep := readResult(t, filepath.Join(dir, fmt.Sprintf("shard%d.json", i)))
		if n := len(rep.Phases); n != 2 {
			t.Errorf("shard %d's report has %d phases, want 2 (phase 1 inconclusive)", i, n)
		} else if ph := rep.Phases[1]; ph.Accepted || !ph.Inconclusive || !strings.Contains(ph.Reason, "shard 2 was lost") {
			t.Errorf("shard %d's phase 1: accepted %v, inconclusive %v, reason %q", i, ph.Accepted, ph.Inconclusive, ph.Reason)
		}
		validateSchema(t, filepath.Join(dir, fmt.Sprintf("shard%d.json", i)))
	}
	// Shard 0 heard from every shard in phase 0: its "shards" carry their
	// threads (they lacked them).
	rep := readResult(t, filepath.Join(dir, "shard0.json"))
	for _, s := range rep.Shards {
		if s.Threads != 1 {
			t.Errorf("shard 0's shards: %+v, want threads 1 each", rep.Shards)
			break
		}
	}
}

// TestShardWrongToken: a shard with another token is refused (exit 3,
// named), and the coordinator never starts without it.
func TestShardWrongToken(t *testing.T) {
	testenv.Parallel(t, testenv.Waits)
	fx := startFixture(t, bench.FixtureConfig{})
	args := func(shard, coord string) []string {
		return []string{fx.URL("/plain"), "--conn", "2", "--phase", "200ms", "--max", "1", "--quiet",
			"--shard", shard, "--coordinator", coord, "--join-timeout", "3s"}
	}
	childEnv(t, "BRK_TOKEN", "right")
	coord, p0 := startCoordinator(t, func(coord string) *proc { return startBrk(t, nil, args("0/2", coord)...) })
	childEnv(t, "BRK_TOKEN", "wrong")
	r1 := runBrk(t, args("1/2", coord)...)
	expectCode(t, r1, 3)
	if !strings.Contains(r1.stdout, "authentication failed") {
		t.Errorf("shard 1: %s", r1)
	}
	r0 := p0.wait()
	expectCode(t, r0, 3)
	if !strings.Contains(r0.stdout, "did not join") || fx.Requests() != 0 {
		t.Errorf("coordinator (fixture served %d): %s", fx.Requests(), r0)
	}
}

// TestShardUsage: sharding flags that cannot work are refused before any
// traffic (exit 2, one line).
func TestShardUsage(t *testing.T) {
	t.Setenv("BRK_TOKEN", "tok")
	os.Unsetenv("JOB_COMPLETION_INDEX")
	for _, c := range []struct {
		env  []string
		args []string
		want string
	}{
		{nil, []string{"--coordinator", "127.0.0.1:1"}, "need --shard I/N or --shards N"},
		{nil, []string{"--shard", "3/3", "--coordinator", "127.0.0.1:1"}, "shard index 3 is not in 0..2"},
		{nil, []string{"--shard", "x", "--coordinator", "127.0.0.1:1"}, "want I/N"},
		{nil, []string{"--shard", "0/2"}, "--shard needs --coordinator"},
		{nil, []string{"--shards", "2", "--coordinator", "127.0.0.1:1"}, "JOB_COMPLETION_INDEX"},
		{[]string{"JOB_COMPLETION_INDEX=5"}, []string{"--shards", "2", "--coordinator", "127.0.0.1:1"}, "shard index 5 is not in 0..1"},
		{nil, []string{"--shard", "0/2", "--shards", "2", "--coordinator", "127.0.0.1:1"}, "not both"},
		{nil, []string{"--shard", "0/4", "--conn", "3", "--coordinator", "127.0.0.1:1"}, "--conn 3 cannot be split over 4 shards"},
		{nil, []string{"--shard", "0/2", "--coordinator", "127.0.0.1:1", "--start-at", "yesterday"}, "--start-at"},
		{[]string{"BRK_TOKEN="}, []string{"--shard", "0/2", "--coordinator", "127.0.0.1:1"}, "BRK_TOKEN"},
	} {
		for _, e := range c.env {
			k, v, _ := strings.Cut(e, "=")
			t.Setenv(k, v)
		}
		r := runBrk(t, append([]string{"http://127.0.0.1:1/"}, c.args...)...)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: want exit 2 with %q\n%s", c.args, c.want, r)
		}
		t.Setenv("BRK_TOKEN", "tok")
		os.Unsetenv("JOB_COMPLETION_INDEX")
	}
}

// rawOf is a shard phase's raw measurement, read from its opaque JSON.
func rawOf(t *testing.T, ps *brk.PhaseStats) *judge.Measurement {
	t.Helper()
	var m judge.Measurement
	if err := json.Unmarshal(ps.Raw, &m); err != nil || m.Stats == nil {
		t.Fatalf("phase %d: no raw measurement (%v)", ps.Index, err)
	}
	return &m
}
