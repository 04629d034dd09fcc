package brk

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/brk-bench/brk/internal/judge"
	"github.com/brk-bench/brk/internal/metrics"
)

// recorded is one phase's worker recorders, as the engine's workers would
// hand them over: shard k's workers are recs[k].
type recorded [][]*metrics.Recorder

// record makes phase n's recorders for 3 shards of 2 workers each;
// failures from phase 2 on.
func record(rng *rand.Rand, n int) recorded {
	out := make(recorded, 3)
	for k := range out {
		for w := 0; w < 2; w++ {
			r := metrics.NewRecorder(&metrics.Live{})
			for i := 0; i < 200+rng.IntN(300); i++ {
				ns := int64(1e6 + rng.IntN(50e6)*(n+1))
				r.Response(ns)
				r.Success()
			}
			if n >= 2 {
				r.Fail(metrics.Timeout, uint64(1+rng.IntN(5)))
				r.Fail(metrics.Abandoned, uint64(rng.IntN(3)))
			}
			r.SetupStarted()
			r.SetupDone(true, false, int64(100e3+rng.IntN(900e3)))
			r.OutstandingNs = uint64(rng.IntN(1e12))
			r.ActiveNs = uint64(1e9 + rng.IntN(1e6))
			r.AtTargetNs = uint64(rng.IntN(1e9))
			r.ReachedOnce = 1
			r.BlockedWrites = uint64(rng.IntN(10))
			r.MaxSendDelayNs = int64(rng.IntN(1e6))
			out[k] = append(out[k], r)
		}
	}
	return out
}

func measure(recs ...*metrics.Recorder) *judge.Measurement {
	s := metrics.NewPhase()
	for _, r := range recs {
		s.Merge(r)
	}
	return &judge.Measurement{Stats: s, Active: time.Second, Elapsed: 1100 * time.Millisecond, Boxes: 1,
		CPU: metrics.ProcessCPU{User: time.Duration(len(recs)) * 10 * time.Millisecond, System: time.Duration(len(recs)) * 5 * time.Millisecond}}
}

type phasesOf []*judge.Measurement

func (p *phasesOf) RunPhase(_ context.Context, spec judge.PhaseSpec) (*judge.Measurement, error) {
	m := (*p)[0]
	*p = (*p)[1:]
	return m, nil
}

// TestMergedReportIsOneBox: the same recorded worker measurements, judged
// as one box (every worker's recorder merged into one phase) and as three
// shards merged by MergeReports from their JSON reports, give the same
// report field by field: counts, levels, verdict, and percentiles of the
// merged histograms (never averaged).
func TestMergedReportIsOneBox(t *testing.T) {
	t.Parallel() // counts and plans, timing nothing
	rng := rand.New(rand.NewPCG(14, 3))
	acc, _ := judge.ParseAccept("99.9")
	splan := judge.Plan{Mode: judge.Requests, Conns: 6, Levels: judge.Levels{Start: 6, Max: 30, Climb: judge.Linear{Pace: 6}}, Phase: time.Second, Accept: acc, Addr: "127.0.0.1:1", MaxP999: time.Hour}
	var single phasesOf
	shards := make([]phasesOf, 3)
	for n := 0; n < 5; n++ {
		recs := record(rng, n)
		var all []*metrics.Recorder
		for k := range recs {
			all = append(all, recs[k]...)
			shards[k] = append(shards[k], measure(recs[k]...))
		}
		one := measure(all...)
		single = append(single, one)
	}
	base := Result{Schema: 1, Test: ModeRequests, URL: "http://127.0.0.1:1/", Protocol: "http/1.1", Conns: 6, TimeoutMs: 1000, Accept: acc.String(), Threads: 2}

	// One box.
	res := base
	res.Threads = 6
	res.Phases = []*PhaseStats{}
	ramp := judge.NewRamp(&single, splan, &replayObserver{res: &res})
	for !ramp.Done() {
		ramp.Step(context.Background())
	}
	want := (&running{res: &res, ramp: ramp}).finish()
	if want.Verdict != VerdictBroken || want.FirstRejected == nil || *want.FirstRejected != 18 {
		t.Fatalf("the recorded data should break at 18: %s %s", want.Verdict, want.Reason)
	}

	// Three shards' reports, through JSON as brk merge reads them.
	var reports []*Result
	for k := range shards {
		r := base
		r.Shard = &ShardInfo{Index: k, Count: 3, TargetHash: "t", StartAt: "2026-01-01T00:00:00Z",
			Plan: Plan{Start: 1, Pace: 1, Max: 5, Phase: time.Second, MaxP999: time.Hour, addr: "127.0.0.1:1"}}
		seal(&r)
		for n, m := range shards[k][:len(want.Phases)] {
			r.Phases = append(r.Phases, &PhaseStats{Index: n, Level: 6 * (n + 1), Raw: rawMeasurement(m)})
		}
		b, err := json.Marshal(&r)
		if err != nil {
			t.Fatal(err)
		}
		var back Result
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		reports = append(reports, &back)
	}
	got, err := MergeReports([]*Result{reports[2], reports[0], reports[1]}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.Verdict != want.Verdict || got.Reason != want.Reason || *got.LastAccepted != *want.LastAccepted ||
		*got.FirstRejected != *want.FirstRejected || len(got.Phases) != len(want.Phases) {
		t.Fatalf("merged %s %q %d phases, one box %s %q %d phases", got.Verdict, got.Reason, len(got.Phases), want.Verdict, want.Reason, len(want.Phases))
	}
	for n := range want.Phases {
		w, g := *want.Phases[n], *got.Phases[n]
		// The one box's CPU is the sum of the shards'; the rest must be
		// equal field by field.
		if !reflect.DeepEqual(w, g) {
			wj, _ := json.Marshal(w)
			gj, _ := json.Marshal(g)
			t.Errorf("phase %d:\none box %s\nmerged  %s", n, wj, gj)
		}
	}
	// The same final pair, interval and binding term: the interval's
	// seed comes from the runs, which the merge replays.
	if want.FinalPair == nil || want.FinalPair.Interval == nil || !reflect.DeepEqual(got.FinalPair, want.FinalPair) {
		wj, _ := json.Marshal(want.FinalPair)
		gj, _ := json.Marshal(got.FinalPair)
		t.Errorf("final pair:\none box %s\nmerged  %s", wj, gj)
	}
	if got.Threads != 6 || len(got.Shards) != 3 {
		t.Errorf("threads %d, shards %+v", got.Threads, got.Shards)
	}
	// The merge words its reasons with the names it is given, as the
	// shards' runs did (brk merge: the flags); by default the library's.
	named, err := MergeReportsNamed([]*Result{reports[2], reports[0], reports[1]}, nil, Names{Accept: "--accept"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got.Reason, "below Plan.Accept 99.9%") || strings.Contains(got.Reason, "--") ||
		named.Reason != strings.ReplaceAll(got.Reason, "Plan.Accept", "--accept") {
		t.Errorf("merged reason %q, with the flags' names %q", got.Reason, named.Reason)
	}
}

// seal gives a shard report the plan hash of its embedded plan, as a run
// does.
func seal(r *Result) {
	r.Shard.PlanHash = reportPlanHash(r.Shard.TargetHash, r, r.Shard.Count, r.Shard.Plan)
}

func TestMergeReportsRefuses(t *testing.T) {
	mk := func(i, count int, target, start string) *Result {
		r := &Result{Schema: 1, Test: ModeRequests, Accept: "99", Conns: 3,
			Shard: &ShardInfo{Index: i, Count: count, TargetHash: target, StartAt: start, Plan: Plan{Start: 1, Pace: 1, Phase: 10 * time.Millisecond}}}
		seal(r)
		return r
	}
	// A shard report whose embedded plan was edited (its phases 900 ms
	// instead of 300), its plan hash left as it was: brk merge would judge
	// the merged phases by a plan no shard ran.
	edited := mk(1, 2, "h", "s")
	edited.Shard.Plan.Phase = 900 * time.Millisecond
	otherPhase := mk(1, 2, "h", "s")
	otherPhase.Shard.Plan.Phase = 20 * time.Millisecond
	seal(otherPhase)
	for _, c := range []struct {
		name string
		rs   []*Result
		want string
	}{
		{"missing", []*Result{mk(0, 3, "h", "s"), mk(2, 3, "h", "s")}, "missing shard index 1 of 3 shards"},
		{"duplicate", []*Result{mk(0, 2, "h", "s"), mk(0, 2, "h", "s")}, "duplicate shard index 0: a and b"},
		{"plan", []*Result{mk(0, 2, "h", "s"), mk(1, 2, "other", "s")}, "b has another plan than a"},
		{"plan schedule", []*Result{mk(0, 2, "h", "s"), otherPhase}, "b has another plan than a"},
		{"edited plan", []*Result{mk(0, 2, "h", "s"), edited}, "b: its embedded plan does not match its plan hash"},
		{"start", []*Result{mk(0, 2, "h", "s"), mk(1, 2, "h", "t")}, `b started at "t", a at "s"`},
		{"count", []*Result{mk(0, 2, "h", "s"), mk(1, 3, "h", "s")}, "b is shard 1 of 3, but a is of 2"},
		{"not a shard", []*Result{mk(0, 1, "h", "s"), {Schema: 1}}, `b is not a shard's report`},
	} {
		_, err := MergeReports(c.rs, []string{"a", "b"})
		if _, ok := err.(*MergeError); !ok || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "--") {
			t.Errorf("%s: %v, want %q and no flag", c.name, err, c.want)
		}
	}
	// A report without its shard section says how to make one, in the
	// library's words or the names given (brk merge: its flags).
	notShard := []*Result{mk(0, 1, "h", "s"), {Schema: 1}}
	for _, c := range []struct {
		names Names
		want  string
	}{
		{Names{}, `b is not a shard's report (no "shard" section): run each shard with Plan.Shard`},
		{Names{Shard: "--shard and --json"}, `b is not a shard's report (no "shard" section): run each shard with --shard and --json`},
	} {
		if _, err := MergeReportsNamed(notShard, []string{"a", "b"}, c.names); err == nil || err.Error() != c.want {
			t.Errorf("names %+v: %v, want %q", c.names, err, c.want)
		}
	}
}
