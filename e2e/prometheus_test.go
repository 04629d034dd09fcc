package e2e

// brk's live push (--prometheus-remote-write) against a real Prometheus
// (Debian's prometheus, started by testenv.StartPrometheus): the brk
// binary runs a short ramp against the in-process fixture and the test
// reads back what Prometheus stored through its query API.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/brk-bench/brk"
	"github.com/brk-bench/brk/bench"
	"github.com/brk-bench/brk/internal/remotewrite"
	"github.com/brk-bench/brk/internal/testenv"
)

var promBin struct {
	once sync.Once
	path string
	err  error
}

// brkBinary builds cmd/brk once for this package's push tests.
func brkBinary(t *testing.T) string {
	t.Helper()
	promBin.once.Do(func() {
		dir, err := os.MkdirTemp("", "brk-e2e-prom-")
		if err != nil {
			promBin.err = err
			return
		}
		promBin.path = filepath.Join(dir, "brk")
		if out, err := exec.Command("go", "build", "-o", promBin.path, "../cmd/brk").CombinedOutput(); err != nil {
			promBin.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if promBin.err != nil {
		t.Fatal(promBin.err)
	}
	return promBin.path
}

// cliRun is one brk process's outcome.
type cliRun struct {
	json    string // the report's path
	res     *brk.Result
	out     string
	code    int
	elapsed time.Duration
}

// runCLI runs the brk binary with args and --json, bounded to 2 minutes.
func runCLI(t *testing.T, args ...string) cliRun {
	t.Helper()
	jsonPath := filepath.Join(t.TempDir(), "report.json")
	cmd := exec.Command(brkBinary(t), append(args, "--quiet", "--json", jsonPath)...)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(2*time.Minute, func() { _ = cmd.Process.Kill() })
	err := cmd.Wait()
	timer.Stop()
	r := cliRun{json: jsonPath, out: out.String(), elapsed: time.Since(start)}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		r.code = exit.ExitCode()
	case err != nil:
		t.Fatalf("brk: %v\n%s", err, r.out)
	}
	b, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatalf("brk %v: no report (%v)\n%s", args, err, r.out)
	}
	r.res = &brk.Result{}
	if err := json.Unmarshal(b, r.res); err != nil {
		t.Fatalf("report: %v", err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if err := compileSchema(t).Validate(doc); err != nil { // schema_test.go
		t.Fatalf("report does not match the schema: %v", err)
	}
	return r
}

// startFixture serves the fixture in this process.
func startFixture(t *testing.T) *bench.Fixture {
	t.Helper()
	f, err := bench.StartFixture(bench.FixtureConfig{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	return f
}

// promData calls a Prometheus query API path and decodes its data field.
func promData(t *testing.T, p *testenv.Prometheus, path string, q url.Values, data any) {
	t.Helper()
	resp, err := http.Get(p.URL + path + "?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Status string          `json:"status"`
		Error  string          `json:"error"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if body.Status != "success" {
		t.Fatalf("%s %v: %s", path, q, body.Error)
	}
	if err := json.Unmarshal(body.Data, data); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// promPoint is one stored float sample.
type promPoint struct {
	ms int64
	v  float64
}

// promSeries is one series' labels and raw samples.
type promSeries struct {
	labels map[string]string
	points []promPoint
	hists  int // native histogram samples
}

// rawSamples returns every stored sample of selector in the last 10
// minutes, series by series (a range selector: no evaluation, no
// lookback).
func rawSamples(t *testing.T, p *testenv.Prometheus, selector string) []promSeries {
	t.Helper()
	var data struct {
		Result []struct {
			Metric     map[string]string `json:"metric"`
			Values     [][2]any          `json:"values"`
			Histograms [][2]any          `json:"histograms"`
		} `json:"result"`
	}
	promData(t, p, "/api/v1/query", url.Values{"query": {selector + "[10m]"}}, &data)
	var out []promSeries
	for _, r := range data.Result {
		s := promSeries{labels: r.Metric, hists: len(r.Histograms)}
		for _, v := range r.Values {
			f, err := strconv.ParseFloat(v[1].(string), 64)
			if err != nil {
				t.Fatal(err)
			}
			s.points = append(s.points, promPoint{int64(math.Round(v[0].(float64) * 1000)), f})
		}
		out = append(out, s)
	}
	return out
}

// instantValue evaluates expr at ms and returns its single value.
func instantValue(t *testing.T, p *testenv.Prometheus, expr string, ms int64) float64 {
	t.Helper()
	var data struct {
		Result []struct {
			Value [2]any `json:"value"`
		} `json:"result"`
	}
	at := strconv.FormatFloat(float64(ms)/1000, 'f', 3, 64)
	promData(t, p, "/api/v1/query", url.Values{"query": {expr}, "time": {at}}, &data)
	if len(data.Result) != 1 {
		t.Fatalf("%s at %s: %d results, want 1", expr, at, len(data.Result))
	}
	v, err := strconv.ParseFloat(data.Result[0].Value[1].(string), 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// valueAt is the series' sample at exactly ms.
func valueAt(t *testing.T, s promSeries, ms int64) float64 {
	t.Helper()
	for _, p := range s.points {
		if p.ms == ms {
			return p.v
		}
	}
	t.Fatalf("series %v: no sample at %d", s.labels, ms)
	return 0
}

// mergedP99Us is the p99 of every phase's latency histogram merged, in µs.
func mergedP99Us(t *testing.T, res *brk.Result) float64 {
	t.Helper()
	var all *hdrhistogram.Histogram
	for _, ph := range res.Phases {
		h, err := hdrhistogram.Decode([]byte(ph.LatencyHdr))
		if err != nil {
			t.Fatalf("phase %d latency_hdr: %v", ph.Index, err)
		}
		if all == nil {
			all = h
		} else {
			all.Merge(h)
		}
	}
	return float64(all.ValueAtQuantile(99))
}

// TestPrometheusRampSeries: after a three-phase ramp against the fixture,
// Prometheus holds the level stepping as the phases did, the success and
// failure counters at each phase's end equal to the JSON's sums through
// that phase, the phase and run verdicts the JSON has, and a
// histogram_quantile(0.99) within a bucket of the JSON's p99. --repeat 1:
// the three phases are the three levels, none run again for a busy box
// (Prometheus itself is one of the box's other processes).
func TestPrometheusRampSeries(t *testing.T) {
	testenv.Parallel(t, testenv.Waits)
	p := testenv.StartPrometheus(t, testenv.PrometheusOptions{})
	fx := startFixture(t)
	r := runCLI(t, "req", fx.URL("/plain"), "-c", "4", "--start", "1", "--pace", "1", "--max", "3",
		"--phase", "1500ms", "--timeout", "1s", "-t", "1", "--accept", "99", "--repeat", "1",
		"--prometheus-remote-write", p.WriteURL, "--prometheus-label", "suite=e2e", "--run-id", "e2e-ramp")
	res := r.res
	if res.RunID != "e2e-ramp" || !strings.Contains(r.out, "run id e2e-ramp") {
		t.Errorf("run id: JSON %q; the header should name e2e-ramp:\n%s", res.RunID, r.out)
	}
	if len(res.Phases) != 3 {
		t.Fatalf("want 3 phases, got %d (%s %s)\n%s", len(res.Phases), res.Verdict, res.Reason, r.out)
	}
	if ps := res.Prometheus; ps == nil || ps.Sent == 0 || ps.Dropped != 0 {
		t.Fatalf("prometheus %+v: want samples sent and none dropped\n%s", ps, r.out)
	}
	if !strings.Contains(r.out, fmt.Sprintf("prometheus: %d samples sent, 0 dropped", res.Prometheus.Sent)) {
		t.Errorf("no push summary line:\n%s", r.out)
	}
	sel := `{run_id="e2e-ramp",suite="e2e",test="requests",protocol="http/1.1",origin="http://` + fx.Addr() + `"}`

	// The level steps as the phases did.
	levels := rawSamples(t, p, "brk_level"+sel)
	if len(levels) != 1 {
		t.Fatalf("brk_level: %d series, want 1", len(levels))
	}
	var steps []int
	for _, pt := range levels[0].points {
		if len(steps) == 0 || steps[len(steps)-1] != int(pt.v) {
			steps = append(steps, int(pt.v))
		}
	}
	var want []int
	for _, ph := range res.Phases {
		want = append(want, ph.Level)
	}
	if !slices.Equal(steps, want) {
		t.Errorf("brk_level stepped %v, the phases' levels are %v", steps, want)
	}

	// Each phase's end is the sample that carries its verdict.
	type end struct {
		ms      int64
		verdict string
	}
	var ends []end
	for _, s := range rawSamples(t, p, "brk_phase_verdict"+sel) {
		for _, pt := range s.points {
			ends = append(ends, end{pt.ms, s.labels["verdict"]})
		}
	}
	sort.Slice(ends, func(i, j int) bool { return ends[i].ms < ends[j].ms })
	if len(ends) != len(res.Phases) {
		t.Fatalf("brk_phase_verdict: %d samples %v, want one per phase (%d)", len(ends), ends, len(res.Phases))
	}
	succ := rawSamples(t, p, "brk_successes_total"+sel)
	if len(succ) != 1 {
		t.Fatalf("brk_successes_total: %d series, want 1", len(succ))
	}
	var okSum, failSum, code200 uint64
	for i, ph := range res.Phases {
		okSum += ph.Counts.Succeeded
		failSum += failures(ph.Counts)
		code200 += ph.StatusCodes["200"]
		verdict := "rejected"
		if ph.Accepted {
			verdict = "accepted"
		}
		if ends[i].verdict != verdict {
			t.Errorf("phase %d: brk_phase_verdict{verdict=%q}, the JSON says %s", i, ends[i].verdict, verdict)
		}
		if got := valueAt(t, succ[0], ends[i].ms); got != float64(okSum) {
			t.Errorf("phase %d's end: brk_successes_total %v, the JSON's phases 0..%d sum to %d", i, got, i, okSum)
		}
		at := ends[i].ms
		if got := instantValue(t, p, "sum(brk_failures_total"+sel+")", at); got != float64(failSum) {
			t.Errorf("phase %d's end: brk_failures_total sums to %v, the JSON's to %d", i, got, failSum)
		}
		if got := instantValue(t, p, "brk_phase_index"+sel, at); got != float64(i) {
			t.Errorf("phase %d's end: brk_phase_index %v", i, got)
		}
		if got := instantValue(t, p, `brk_responses_total{code="200",run_id="e2e-ramp"}`, at); got != float64(code200) {
			t.Errorf("phase %d's end: brk_responses_total{code=\"200\"} %v, the JSON's status_codes sum to %d", i, got, code200)
		}
	}
	last := ends[len(ends)-1].ms
	var runVerdicts []string
	for _, s := range rawSamples(t, p, "brk_run_verdict"+sel) {
		runVerdicts = append(runVerdicts, s.labels["verdict"])
	}
	if !slices.Equal(runVerdicts, []string{string(res.Verdict)}) {
		t.Errorf("brk_run_verdict %v, the JSON's verdict %s", runVerdicts, res.Verdict)
	}

	// The run's p99 from the classic buckets is within a bucket of the
	// merged HdrHistogram's.
	edges := remotewrite.Buckets(time.Second, 0)
	q := instantValue(t, p, "histogram_quantile(0.99, brk_latency_seconds_bucket"+sel+")", last)
	p99 := mergedP99Us(t, res) / 1e6
	bq, bp := sort.SearchFloat64s(edges, q), sort.SearchFloat64s(edges, p99)
	t.Logf("histogram_quantile(0.99) %.6f s (bucket %d), the JSON's merged p99 %.6f s (bucket %d), edges %v", q, bq, p99, bp, edges)
	if bq-bp > 1 || bp-bq > 1 {
		t.Errorf("histogram_quantile(0.99) = %.6f s is not within a bucket of the JSON's p99 %.6f s (edges %v)", q, p99, edges)
	}
	var responses uint64
	for _, ph := range res.Phases {
		responses += ph.LatencyMs.Count
	}
	if got := instantValue(t, p, "brk_latency_seconds_count"+sel, last); got != float64(responses) {
		t.Errorf("brk_latency_seconds_count %v, the JSON's phases have %d responses", got, responses)
	}
	// Latency is live: a sample inside phase 0 already counts some of its
	// responses, never more than its end does.
	counts := rawSamples(t, p, "brk_latency_seconds_count"+sel)
	if len(counts) != 1 {
		t.Fatalf("brk_latency_seconds_count: %d series", len(counts))
	}
	live := false
	end0 := valueAt(t, counts[0], ends[0].ms)
	for _, pt := range counts[0].points {
		if pt.ms < ends[0].ms && pt.v > 0 {
			live = true
			if pt.v > end0 {
				t.Errorf("a live sample of phase 0 counts %v responses, its end %v", pt.v, end0)
			}
		}
	}
	if !live {
		t.Errorf("no sample inside phase 0 counts a response: latency is not live (%v)", counts[0].points)
	}
}

// TestPrometheusBadReceiver: a receiver that stalls 10 s, or answers 500,
// changes neither the run's phases, counts' structure, verdict nor exit
// code, and the run ends within 1 s of the same run without the push (the
// flush is at most 0.8 s); the drop count is in the JSON and the text.
func TestPrometheusBadReceiver(t *testing.T) {
	stall := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// With the body read, the server sees brk hang up (the request's
		// context ends) and Close does not wait out the 10 s.
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-time.After(10 * time.Second):
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(stall.Close)
	fail := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusInternalServerError)
	}))
	t.Cleanup(fail.Close)
	fx := startFixture(t)
	args := []string{"req", fx.URL("/plain"), "-c", "2", "--start", "1", "--pace", "1", "--max", "2",
		"--phase", "1500ms", "--timeout", "1s", "-t", "1", "--accept", "99"}
	// The three runs at once: the same box for each, and a third of the
	// wall time.
	receivers := []struct{ name, url string }{{"stall", stall.URL}, {"500", fail.URL}}
	argv := [][]string{args}
	for _, rc := range receivers {
		argv = append(argv, append(slices.Clone(args), "--prometheus-remote-write", rc.url+"/api/v1/write"))
	}
	runs := runCLIAtOnce(t, "", argv...)
	base := runs[0]
	if base.res.Prometheus != nil {
		t.Errorf("a run without the push reports prometheus %+v", base.res.Prometheus)
	}
	for i, rc := range receivers {
		r := runs[i+1]
		t.Logf("%s: %v with the push, %v without", rc.name, r.elapsed, base.elapsed)
		if r.code != base.code || r.res.Verdict != base.res.Verdict || len(r.res.Phases) != len(base.res.Phases) {
			t.Errorf("%s: exit %d verdict %s %d phases; without the push exit %d verdict %s %d phases",
				rc.name, r.code, r.res.Verdict, len(r.res.Phases), base.code, base.res.Verdict, len(base.res.Phases))
			continue
		}
		for i, ph := range r.res.Phases {
			b := base.res.Phases[i]
			if ph.Level != b.Level || ph.Accepted != b.Accepted || ph.Counts.Succeeded == 0 ||
				ph.Counts.Attempted != ph.Counts.Succeeded+failures(ph.Counts) || failures(ph.Counts) != failures(b.Counts) {
				t.Errorf("%s: phase %d level %d accepted %v counts %+v; without the push level %d accepted %v counts %+v",
					rc.name, i, ph.Level, ph.Accepted, ph.Counts, b.Level, b.Accepted, b.Counts)
			}
		}
		if extra := r.elapsed - base.elapsed; extra > time.Second {
			t.Errorf("%s: the run took %v more than without the push (the flush is at most 0.8 s)", rc.name, extra)
		}
		ps := r.res.Prometheus
		if ps == nil || ps.Sent != 0 || ps.Dropped == 0 {
			t.Errorf("%s: prometheus %+v: want nothing sent and the drops counted", rc.name, ps)
			continue
		}
		if !strings.Contains(r.out, fmt.Sprintf("prometheus: 0 samples sent, %d dropped", ps.Dropped)) {
			t.Errorf("%s: the text does not report the %d drops:\n%s", rc.name, ps.Dropped, r.out)
		}
		if rc.name == "500" && !strings.Contains(ps.Error, "500") {
			t.Errorf("500: the report's error %q does not name the status", ps.Error)
		}
	}
}

// TestPrometheusDashboardSeries: every series a query of the Grafana
// dashboard names is one that a Prometheus fed by brk lists in
// /api/v1/label/__name__/values and holds samples of: a classic run into
// one Prometheus, a native-histogram run into another started with
// native histograms.
func TestPrometheusDashboardSeries(t *testing.T) {
	testenv.Parallel(t, testenv.Waits)
	dash, err := os.ReadFile("../deploy/grafana/brk-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	names, err := remotewrite.DashboardSeries(dash)
	if err != nil {
		t.Fatal(err)
	}
	fx := startFixture(t)
	type fed struct {
		p     *testenv.Prometheus
		names []string
	}
	var feds []fed
	for _, native := range []bool{false, true} {
		p := testenv.StartPrometheus(t, testenv.PrometheusOptions{NativeHistograms: native})
		args := []string{"req", fx.URL("/plain"), "-c", "2", "--start", "1", "--pace", "1", "--max", "2",
			"--phase", "1200ms", "--timeout", "1s", "-t", "1", "--accept", "99",
			"--prometheus-remote-write", p.WriteURL, "--run-id", fmt.Sprintf("dash-%v", native)}
		if native {
			args = append(args, "--prometheus-native-histograms")
		}
		r := runCLI(t, args...)
		if ps := r.res.Prometheus; ps == nil || ps.Sent == 0 || ps.Dropped != 0 {
			t.Fatalf("native %v: prometheus %+v\n%s", native, ps, r.out)
		}
		var stored []string
		promData(t, p, "/api/v1/label/__name__/values", url.Values{}, &stored)
		feds = append(feds, fed{p, stored})
	}
	for _, name := range names {
		found := false
		for _, f := range feds {
			if !slices.Contains(f.names, name) {
				continue
			}
			for _, s := range rawSamples(t, f.p, name) {
				if len(s.points) > 0 || s.hists > 0 {
					found = true
				}
			}
		}
		if !found {
			t.Errorf("the dashboard queries %s, which no Prometheus fed by brk lists with samples", name)
		}
	}
}

// runCLIAtOnce runs one brk process per argument list at once, with
// BRK_TOKEN=token in their environment unless token is empty, and returns
// their outcomes in order.
func runCLIAtOnce(t *testing.T, token string, argv ...[]string) []cliRun {
	t.Helper()
	brkBinary(t) // built once, before the shards race for it
	out := make([]cliRun, len(argv))
	var wg sync.WaitGroup
	for i, a := range argv {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = runCLIErr(t, token, a...)
		}()
	}
	wg.Wait()
	for i, r := range out {
		if r.res == nil {
			t.Fatalf("shard %d: no report\n%s", i, r.out)
		}
	}
	return out
}

// runCLIErr is runCLI for another goroutine, with BRK_TOKEN=token unless
// token is empty: a missing report leaves res nil instead of failing.
func runCLIErr(t *testing.T, token string, args ...string) cliRun {
	jsonPath := filepath.Join(t.TempDir(), "report.json")
	cmd := exec.Command(promBin.path, append(args, "--quiet", "--json", jsonPath)...)
	if token != "" {
		cmd.Env = append(os.Environ(), "BRK_TOKEN="+token)
	}
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return cliRun{out: err.Error()}
	}
	timer := time.AfterFunc(2*time.Minute, func() { _ = cmd.Process.Kill() })
	err := cmd.Wait()
	timer.Stop()
	r := cliRun{json: jsonPath, out: out.String(), elapsed: time.Since(start)}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		r.code = exit.ExitCode()
	}
	if b, err := os.ReadFile(jsonPath); err == nil {
		r.res = &brk.Result{}
		if err := json.Unmarshal(b, r.res); err != nil {
			r.res = nil
		}
	}
	return r
}

// shardSucceeded sums a shard report's own successes (each phase's raw
// measurement, this box's part).
func shardSucceeded(t *testing.T, res *brk.Result) uint64 {
	t.Helper()
	var n uint64
	for _, ph := range res.Phases {
		if len(ph.Raw) == 0 {
			t.Fatalf("phase %d has no raw measurement", ph.Index)
		}
		n += ph.Own().Counts.Succeeded
	}
	return n
}

// lastValues maps each series' label value of by to its last sample.
func lastValues(series []promSeries, by string) map[string]float64 {
	out := map[string]float64{}
	for _, s := range series {
		if len(s.points) > 0 {
			out[s.labels[by]] = s.points[len(s.points)-1].v
		}
	}
	return out
}

// TestPrometheusShards: every shard pushes its own box's counts under its
// shard label and the run's one run id; with a coordinator only shard 0
// pushes the phase and run verdicts, and without one (--start-at alone)
// no shard does, while the shards derive the same run id unasked.
func TestPrometheusShards(t *testing.T) {
	testenv.Parallel(t, testenv.Waits)
	const token = "prom-shards-token"
	p := testenv.StartPrometheus(t, testenv.PrometheusOptions{})
	fx := startFixture(t)
	plan := []string{"req", fx.URL("/plain"), "-c", "4", "--start", "1", "--pace", "1", "--max", "2",
		"--phase", "1s", "--timeout", "1s", "-t", "1", "--accept", "99", "--prometheus-remote-write", p.WriteURL}

	t.Run("coordinated", func(t *testing.T) {
		coord := testenv.FreePort(t)
		var argv [][]string
		for i := range 2 {
			argv = append(argv, append(slices.Clone(plan), "--shard", fmt.Sprintf("%d/2", i), "--coordinator", coord, "--run-id", "shards-coord"))
		}
		runs := runCLIAtOnce(t, token, argv...)
		sel := `{run_id="shards-coord"}`
		got := lastValues(rawSamples(t, p, "brk_successes_total"+sel), "shard")
		var merged uint64
		for _, ph := range runs[0].res.Phases {
			merged += ph.Counts.Succeeded
		}
		var sum float64
		for i, r := range runs {
			if r.res.RunID != "shards-coord" {
				t.Errorf("shard %d: run_id %q", i, r.res.RunID)
			}
			own := shardSucceeded(t, r.res)
			if got[strconv.Itoa(i)] != float64(own) {
				t.Errorf("shard %d: brk_successes_total %v, its own phases' successes %d (%v)", i, got[strconv.Itoa(i)], own, got)
			}
			sum += got[strconv.Itoa(i)]
		}
		if sum != float64(merged) || merged == 0 {
			t.Errorf("the shards' brk_successes_total sum to %v, the coordinator's merged phases to %d", sum, merged)
		}
		for _, name := range []string{"brk_phase_verdict", "brk_run_verdict"} {
			var shards []string
			for _, s := range rawSamples(t, p, name+sel) {
				shards = append(shards, s.labels["shard"])
			}
			slices.Sort(shards)
			shards = slices.Compact(shards)
			if !slices.Equal(shards, []string{"0"}) {
				t.Errorf("%s from shards %v, want from shard 0 only", name, shards)
			}
		}
		rv := rawSamples(t, p, "brk_run_verdict"+sel)
		if len(rv) != 1 || rv[0].labels["verdict"] != string(runs[0].res.Verdict) {
			t.Errorf("brk_run_verdict %v, the coordinator's verdict %s", rv, runs[0].res.Verdict)
		}
	})

	t.Run("start-at", func(t *testing.T) {
		at := fmt.Sprint(time.Now().Add(3 * time.Second).UnixMilli())
		var argv [][]string
		for i := range 2 {
			argv = append(argv, append(slices.Clone(plan), "--shard", fmt.Sprintf("%d/2", i), "--start-at", at))
		}
		runs := runCLIAtOnce(t, token, argv...)
		id := runs[0].res.RunID
		if id == "" || runs[1].res.RunID != id {
			t.Fatalf("run ids %q and %q, want one shared", id, runs[1].res.RunID)
		}
		sel := `{run_id="` + id + `"}`
		got := lastValues(rawSamples(t, p, "brk_successes_total"+sel), "shard")
		for i, r := range runs {
			if own := shardSucceeded(t, r.res); own == 0 || got[strconv.Itoa(i)] != float64(own) {
				t.Errorf("shard %d: brk_successes_total %v, its own successes %d", i, got[strconv.Itoa(i)], own)
			}
		}
		for _, name := range []string{"brk_phase_verdict", "brk_run_verdict"} {
			if s := rawSamples(t, p, name+sel); len(s) != 0 {
				t.Errorf("%s pushed by a shard without a coordinator: %v", name, s)
			}
		}
		// brk merge's report keeps the shards' run id.
		merged := filepath.Join(t.TempDir(), "merged.json")
		cmd := exec.Command(promBin.path, "merge", runs[0].json, runs[1].json, "--json", merged)
		cmd.Env = append(os.Environ(), "BRK_TOKEN="+token)
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if err != nil && (!errors.As(err, &exit) || exit.ExitCode() != 1) { // 0 done, 1 broken
			t.Fatalf("brk merge: %v\n%s", err, out)
		}
		b, err := os.ReadFile(merged)
		if err != nil {
			t.Fatal(err)
		}
		var m brk.Result
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		if m.RunID != id {
			t.Errorf("brk merge: run_id %q, the shards' %q", m.RunID, id)
		}
	})
}

// TestPrometheusMixSeries: a run with --targets pushes the outcome series
// once per target, from its first sample (zero before the first phase
// ends, so that rate() counts phase 0), and never a run-wide one: no
// brk_successes_total or brk_latency_seconds_count without a target
// label. Each target's counts at the run's end are the JSON's; their sum
// is the run's.
func TestPrometheusMixSeries(t *testing.T) {
	testenv.Parallel(t, testenv.Waits)
	p := testenv.StartPrometheus(t, testenv.PrometheusOptions{})
	fx := startFixture(t)
	file := filepath.Join(t.TempDir(), "targets.txt")
	if err := os.WriteFile(file, []byte("GET "+fx.URL("/plain")+"\nGET "+fx.URL("/hello")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, "req", "--targets", file, "-c", "2", "--start", "1", "--pace", "1", "--max", "2",
		"--phase", "1200ms", "--timeout", "1s", "-t", "1", "--accept", "99",
		"--prometheus-remote-write", p.WriteURL, "--run-id", "e2e-mix")
	if ps := r.res.Prometheus; ps == nil || ps.Sent == 0 || ps.Dropped != 0 || len(r.res.Phases) != 2 {
		t.Fatalf("prometheus %+v, %d phases\n%s", ps, len(r.res.Phases), r.out)
	}
	sel := `{run_id="e2e-mix"}`
	var first int64 = math.MaxInt64 // the run's first sample
	for _, s := range rawSamples(t, p, "brk_level"+sel) {
		first = min(first, s.points[0].ms)
	}
	want := map[string]uint64{}
	for _, ph := range r.res.Phases {
		for _, ts := range ph.Targets {
			u, _ := url.Parse(ts.URL)
			want[fmt.Sprintf("%d %s %s", ts.Index, ts.Method, u.RequestURI())] += ts.Counts.Succeeded
		}
	}
	for _, name := range []string{"brk_successes_total", "brk_latency_seconds_count", "brk_latency_seconds_sum"} {
		series := rawSamples(t, p, name+sel)
		got := map[string]bool{}
		for _, s := range series {
			target := s.labels["target"]
			if target == "" {
				t.Errorf("%s without a target label: %v", name, s.points)
				continue
			}
			got[target] = true
			if s.points[0].ms != first || s.points[0].v != 0 {
				t.Errorf("%s{target=%q} starts at %v (the run's first sample %d), want 0 there", name, target, s.points[0], first)
			}
			if last := s.points[len(s.points)-1].v; name != "brk_latency_seconds_sum" && last != float64(want[target]) {
				t.Errorf("%s{target=%q} ends at %v, the JSON's %d", name, target, last, want[target])
			}
		}
		if len(got) != len(want) || len(want) != 2 {
			t.Errorf("%s: targets %v, the JSON's %v", name, got, want)
		}
	}
}
