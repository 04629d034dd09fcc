package main

import (
	"bytes"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/brk-bench/brk"
	"github.com/brk-bench/brk/internal/metrics"
	"github.com/brk-bench/brk/internal/remotewrite"
)

// TestPromRefusals: the push flags are refused before any traffic (exit 2,
// one line) where they mean nothing or cannot be honoured.
func TestPromRefusals(t *testing.T) {
	t.Setenv("BRK_TOKEN", "prom-test-token")
	const url, write = "http://127.0.0.1:1/plain", "http://127.0.0.1:1/api/v1/write"
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"label without url", []string{url, "--prometheus-label", "env=a"}, "--prometheus-label needs --prometheus-remote-write URL"},
		{"native without url", []string{"rate", url, "--prometheus-native-histograms"}, "--prometheus-native-histograms needs --prometheus-remote-write URL"},
		{"label without =", []string{url, "--prometheus-remote-write", write, "--prometheus-label", "env"}, `--prometheus-label "env": want NAME=VALUE`},
		{"label twice", []string{url, "--prometheus-remote-write", write, "--prometheus-label", "a=1", "--prometheus-label", "a=2"}, "--prometheus-label a given twice"},
		{"reserved label", []string{"conn", url, "--prometheus-remote-write", write, "--prometheus-label", "run_id=x"}, `--prometheus-remote-write: label name "run_id" is one brk sets itself`},
		{"bad label name", []string{url, "--prometheus-remote-write", write, "--prometheus-label", "__x=1"}, `--prometheus-remote-write: label name "__x": want [a-zA-Z_][a-zA-Z0-9_]* without a leading __`},
		{"bad url", []string{url, "--prometheus-remote-write", "ftp://x/api/v1/write"}, `--prometheus-remote-write: remote-write URL "ftp://x/api/v1/write": want http:// or https:// and a host`},
		{"bad run id", []string{url, "--run-id", "a b"}, `--run-id "a b": want 1 to 64 of A-Z a-z 0-9 . _ : -`},
		{"ab", []string{"ab", url, url, "--prometheus-remote-write", write}, "--prometheus-remote-write applies to the requests, connections and rate tests only"},
		{"coordinated shard without run id", []string{url, "--conn", "2", "--shard", "1/2", "--coordinator", "127.0.0.1:1", "--prometheus-remote-write", write},
			"--prometheus-remote-write with --shard and a coordinator picking the start needs --run-id ID, the same on every shard (or --start-at T)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(c.args, &out, &errb)
			if code != exitUsage || strings.TrimSpace(errb.String()) != "brk: "+c.want {
				t.Errorf("brk %s: exit %d, stderr %q; want exit 2 and %q", strings.Join(c.args, " "), code, errb.String(), "brk: "+c.want)
			}
			if out.Len() > 0 {
				t.Errorf("stdout: %q", out.String())
			}
		})
	}
}

// TestPromRunID: every shard of an uncoordinated run derives the same id
// from the plan and --start-at; another start or plan is another id; a run
// on one box gets a fresh one; --run-id wins.
func TestPromRunID(t *testing.T) {
	start := time.Date(2026, 12, 1, 18, 0, 0, 0, time.UTC)
	target := brk.Target{URL: "http://127.0.0.1:1/plain"}
	plan := func(index int, at time.Time, max int) brk.Plan {
		return brk.Plan{Conns: 4, Start: 1, Pace: 1, Max: max, Phase: time.Second, Timeout: time.Second,
			Shard: &brk.Sharding{Index: index, Count: 2, StartAt: at, Token: "secret"}}
	}
	var f promFlags
	id := func(p brk.Plan) string {
		t.Helper()
		s, err := f.runID(brk.ModeRequests, target, p)
		if err != nil {
			t.Fatal(err)
		}
		if !runIDRE.MatchString(s) {
			t.Fatalf("run id %q does not match %v", s, runIDRE)
		}
		return s
	}
	a, b := id(plan(0, start, 3)), id(plan(1, start, 3))
	if a != b || !strings.HasPrefix(a, "20261201T180000-") {
		t.Errorf("shards 0 and 1 of one run: ids %q and %q, want one, starting with the start", a, b)
	}
	if c := id(plan(0, start.Add(time.Minute), 3)); c == a {
		t.Errorf("another start, same id %q", c)
	}
	if c := id(plan(0, start, 4)); c == a {
		t.Errorf("another plan, same id %q", c)
	}
	one := brk.Plan{Conns: 4}
	if x, y := id(one), id(one); x == y {
		t.Errorf("two runs on one box: the same id %q", x)
	}
	f.RunID = "mine-1"
	if got := id(plan(1, start, 3)); got != "mine-1" {
		t.Errorf("--run-id mine-1: got %q", got)
	}
}

// TestPromPhaseOutcomes: a phase's end adds its counts, codes and latency
// histogram to the run's cumulative outcomes, phase after phase.
func TestPromPhaseOutcomes(t *testing.T) {
	feed := &promFeed{edges: remotewrite.Buckets(100*time.Millisecond, 0)}
	phase := func(ok, timeouts uint64, latencyUs []int64) *brk.PhaseStats {
		h := hdrhistogram.New(1, 60_000_000, 3)
		var sum float64
		for _, v := range latencyUs {
			if err := h.RecordValue(v); err != nil {
				t.Fatal(err)
			}
			sum += float64(v)
		}
		enc, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
		if err != nil {
			t.Fatal(err)
		}
		return &brk.PhaseStats{
			Counts:      brk.Counts{Attempted: ok + timeouts, Succeeded: ok, Timeout: timeouts},
			StatusCodes: map[string]uint64{"200": ok, "other": 1},
			LatencyHdr:  string(enc),
			LatencyMs:   brk.Latency{Count: uint64(len(latencyUs)), Mean: sum / float64(len(latencyUs)) / 1e3},
		}
	}
	feed.addPhase(phase(3, 1, []int64{150, 150, 3000}))
	feed.addPhase(phase(2, 0, []int64{150, 40_000}))
	d := feed.done
	if d.Successes != 5 || d.Failures["timeout"] != 1 || d.Failures["status"] != 0 || len(d.Failures) != len(brk.FailureCategories()) {
		t.Errorf("successes %d, failures %v", d.Successes, d.Failures)
	}
	if len(d.Responses) != 1 || d.Responses[200] != 5 {
		t.Errorf("responses %v, want 200: 5 (other left out)", d.Responses)
	}
	// Edges 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100 ms: 150 µs in (0.1, 0.2]
	// ms, 3 ms in (2, 5], 40 ms in (20, 50].
	want := make([]uint64, len(feed.edges)+1)
	want[1], want[5], want[8] = 3, 1, 1
	if got := d.Latency.Counts; len(got) != len(want) || got[1] != 3 || got[5] != 1 || got[8] != 1 || d.Latency.Count() != 5 {
		t.Errorf("latency counts %v over edges %v, want %v", got, feed.edges, want)
	}
	if s := d.Latency.Sum; s < 0.0434 || s > 0.0436 {
		t.Errorf("latency sum %v s, want 0.04345", s)
	}
}

// TestPromLiveLatencyNeverStepsBack: a live sample's classic histogram
// (from the coarse counters) never holds more in any cumulative le bucket,
// nor a larger sum, than the sample at the phase's end (from the exact
// HdrHistogram): Prometheus would read a step back as a counter reset.
func TestPromLiveLatencyNeverStepsBack(t *testing.T) {
	edges := remotewrite.Buckets(100*time.Millisecond, 7*time.Millisecond)
	var values []int64 // µs: every edge, its neighbours, coarse bucket edges
	for _, e := range edges {
		us := int64(math.Round(e * 1e6))
		values = append(values, us-1, us, us+1, us+3)
	}
	for i := range metrics.CoarseBuckets {
		if u := metrics.CoarseUpper(i); u > 0 && u < 200_000 {
			values = append(values, u, u+1)
		}
	}
	live := &promFeed{edges: edges}
	var coarse [metrics.CoarseBuckets]uint64
	h := hdrhistogram.New(1, 60_000_000, 3)
	var sum float64
	for _, v := range values {
		coarse[metrics.CoarseIndex(v)]++
		if err := h.RecordValue(max(v, 1)); err != nil {
			t.Fatal(err)
		}
		sum += float64(v)
	}
	got := live.liveLatency(&coarse)
	enc, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	end := &promFeed{edges: edges}
	end.addPhase(&brk.PhaseStats{LatencyHdr: string(enc),
		LatencyMs: brk.Latency{Count: uint64(len(values)), Mean: sum / float64(len(values)) / 1e3}})
	want := end.done.Latency
	if got.Count() != want.Count() || got.Count() != uint64(len(values)) {
		t.Fatalf("live count %d, phase end %d, want %d", got.Count(), want.Count(), len(values))
	}
	var cg, cw uint64
	for i := range want.Counts {
		cg, cw = cg+got.Counts[i], cw+want.Counts[i]
		if cg > cw {
			t.Errorf("le bucket %d: live %d > phase end %d", i, cg, cw)
		}
	}
	if got.Sum > want.Sum {
		t.Errorf("live sum %v s > phase end %v s", got.Sum, want.Sum)
	}
}

// TestPromMixTargets: with a request mix each target's outcomes add up
// phase after phase under its target label, and a sample carries them.
func TestPromMixTargets(t *testing.T) {
	feed := &promFeed{edges: remotewrite.Buckets(time.Second, 0), mix: true}
	target := func(i int, url string, ok, status uint64) brk.TargetStats {
		return brk.TargetStats{Index: i, Method: "GET", URL: url,
			Counts:      brk.Counts{Attempted: ok + status, Succeeded: ok, Status: status},
			StatusCodes: map[string]uint64{"200": ok, "503": status}}
	}
	for range 2 {
		feed.addPhase(&brk.PhaseStats{Counts: brk.Counts{Succeeded: 7, Attempted: 8, Status: 1}, Targets: []brk.TargetStats{
			target(0, "http://h:1/fast?x=1", 5, 0), target(1, "http://h:1/slow", 2, 1),
		}})
	}
	s := feed.sample()
	if len(s.Targets) != 2 {
		t.Fatalf("sample targets %+v", s.Targets)
	}
	for i, want := range []struct {
		label   string
		ok, bad uint64
	}{{"0 GET /fast?x=1", 10, 0}, {"1 GET /slow", 4, 2}} {
		got := s.Targets[i]
		if got.Target != want.label || got.Successes != want.ok || got.Failures["status"] != want.bad || got.Responses[503] != want.bad {
			t.Errorf("target %d: %q successes %d failures %v responses %v; want %q, %d successes, %d status failures",
				i, got.Target, got.Successes, got.Failures, got.Responses, want.label, want.ok, want.bad)
		}
	}
	if s.Successes != 14 {
		t.Errorf("the run's successes %d, want 14", s.Successes)
	}
}

// A mix's samples carry every target from the run's first one, at 0, so
// that no run-wide outcome series (zeros, then stale) is ever sent beside
// the targets'.
func TestPromMixTargetsFromStart(t *testing.T) {
	mix := brk.Target{Mix: []brk.Request{{Method: "GET", URL: "http://h:1/fast?x=1"}, {Method: "POST", URL: "http://h:1/slow"}}}
	feed, err := newPromFeed(&promFlags{PrometheusRemoteWrite: "http://127.0.0.1:1/api/v1/write"}, io.Discard,
		brk.ModeRequests, mix, brk.Plan{Timeout: time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = feed.pusher.Close(t.Context()) }()
	s := feed.sample()
	if len(s.Targets) != 2 || s.Targets[0].Target != "0 GET /fast?x=1" || s.Targets[1].Target != "1 POST /slow" ||
		s.Targets[0].Successes != 0 || s.Targets[1].Latency.Count() != 0 {
		t.Fatalf("the first sample's targets %+v: want both, at 0", s.Targets)
	}
}

// BenchmarkPromLiveSample is the cost of one live reading turned into a
// sample (the once-a-second Progress callback on the reporter goroutine:
// the coarse latency counts into classic buckets, the failures, the copy
// Push queues), after a phase end has filled the cumulative figures.
func BenchmarkPromLiveSample(b *testing.B) {
	pusher, err := remotewrite.New(remotewrite.Config{URL: "http://127.0.0.1:1/api/v1/write", Edges: remotewrite.Buckets(time.Second, 0)})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = pusher.Close(b.Context()) }()
	feed := &promFeed{pusher: pusher, edges: remotewrite.Buckets(time.Second, 0)}
	h := hdrhistogram.New(1, 60_000_000, 3)
	var g brk.Progress
	for v := int64(50); v < 500_000; v = v*11/10 + 1 {
		_ = h.RecordValue(v)
		g.Latency[metrics.CoarseIndex(v)] += 3
	}
	enc, _ := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	feed.addPhase(&brk.PhaseStats{Counts: brk.Counts{Succeeded: 1000}, StatusCodes: map[string]uint64{"200": 1000}, LatencyHdr: string(enc)})
	g.Succeeded = 500
	o := &promObserver{inner: idObserver{}, f: feed}
	b.ReportAllocs()
	for b.Loop() {
		o.Progress(g)
	}
}

// TestPromDocsListEverySeries: docs/prometheus.md names every series the
// pusher writes and every label it sets.
func TestPromDocsListEverySeries(t *testing.T) {
	doc := docPageNamed(t, "docs/prometheus.md").text
	names := append(remotewrite.SeriesNames(), remotewrite.LabelRunID, remotewrite.LabelTest, remotewrite.LabelProtocol, remotewrite.LabelOrigin,
		remotewrite.LabelShard, remotewrite.LabelTarget, remotewrite.LabelRole, remotewrite.LabelVerdict, remotewrite.LabelCategory, remotewrite.LabelCode, remotewrite.LabelLe)
	for _, n := range names {
		if !strings.Contains(doc, "`"+n+"`") {
			t.Errorf("docs/prometheus.md does not name `%s`", n)
		}
	}
	for _, c := range brk.FailureCategories() {
		if !strings.Contains(doc, "`"+c+"`") {
			t.Errorf("docs/prometheus.md does not name the failure category `%s`", c)
		}
	}
	if !strings.Contains(doc, envPromAuthorization) {
		t.Errorf("docs/prometheus.md does not name %s", envPromAuthorization)
	}
}
