package remotewrite

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/brk-bench/brk/internal/testenv"
)

// promGet calls a Prometheus HTTP API path and decodes its data field.
func promGet(t *testing.T, base, path string, q url.Values, data any) {
	t.Helper()
	resp, err := http.Get(base + path + "?" + q.Encode())
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

// instant evaluates expr at at and returns the single result's value, or
// NaN and false when the result is empty.
func instant(t *testing.T, p *testenv.Prometheus, expr string, at time.Time) (float64, bool) {
	t.Helper()
	var data struct {
		Result []struct {
			Metric map[string]string `json:"metric"`
			Value  [2]any            `json:"value"`
		} `json:"result"`
	}
	q := url.Values{"query": {expr}, "time": {strconv.FormatFloat(float64(at.UnixMilli())/1000, 'f', 3, 64)}}
	promGet(t, p.URL, "/api/v1/query", q, &data)
	if len(data.Result) == 0 {
		return math.NaN(), false
	}
	if len(data.Result) > 1 {
		t.Fatalf("%s: %d series, want one", expr, len(data.Result))
	}
	v, err := strconv.ParseFloat(data.Result[0].Value[1].(string), 64)
	if err != nil {
		t.Fatal(err)
	}
	return v, true
}

func storedNames(t *testing.T, p *testenv.Prometheus) []string {
	t.Helper()
	var names []string
	promGet(t, p.URL, "/api/v1/label/__name__/values", url.Values{}, &names)
	return names
}

// observations returns a latency mix for sample i: mostly near 2 ms, a
// tail out to 80 ms.
func observations(i int) []float64 {
	var obs []float64
	for j := range 100 {
		v := 0.001 + 0.00002*float64(j) + 0.0001*float64(i)
		if j >= 95 {
			v = 0.02 * float64(j-94) // 20 … 100 ms
		}
		obs = append(obs, v)
	}
	return obs
}

// quantile returns the q-quantile of vs the way the nearest-rank method
// does.
func quantile(vs []float64, q float64) float64 {
	s := slices.Clone(vs)
	sort.Float64s(s)
	return s[int(math.Ceil(q*float64(len(s))))-1]
}

// pushRun pushes a five-sample run ending now and returns the samples'
// times and all observations.
func pushRun(t *testing.T, p *Pusher, native bool, edges []float64) (times []time.Time, all []float64) {
	t.Helper()
	end := time.Now().Truncate(time.Millisecond)
	var o Outcomes
	o.Failures = map[string]uint64{}
	o.Responses = map[int]uint64{}
	for i := range 5 {
		at := end.Add(time.Duration(i-4) * time.Second)
		for _, v := range observations(i) {
			if native {
				o.Native.Observe(v, 1)
			} else {
				o.Latency.Observe(edges, v, 1)
			}
			all = append(all, v)
		}
		o.Successes += 100
		o.Responses[200] += 100
		o.Failures["timeout"] += uint64(i)
		s := Sample{Time: at, RunID: "it", Test: "prom", Protocol: "h1", Origin: "http://127.0.0.1:1",
			Level: float64(int(8) << i), Phase: i, Role: "ramp", Outcomes: o}
		if i >= 3 {
			s.Role = "bisect"
		}
		if i == 2 {
			s.PhaseVerdict = "accepted"
		}
		if i == 4 {
			s.PhaseVerdict, s.RunVerdict = "rejected", "broke"
		}
		p.Push(s)
		times = append(times, at)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := p.Close(ctx); err != nil || p.Dropped() != 0 {
		t.Fatalf("Close: %v; dropped %d; last error %v", err, p.Dropped(), p.Err())
	}
	return times, all
}

func checkRoundTrip(t *testing.T, p *testenv.Prometheus, native bool, times []time.Time) {
	t.Helper()
	sel := `{run_id="it",test="prom",protocol="h1",origin="http://127.0.0.1:1"}`
	for i, at := range times {
		for _, c := range []struct {
			expr string
			want float64
		}{
			{"brk_level" + sel, float64(int(8) << i)},
			{"brk_phase_index" + sel, float64(i)},
			{"brk_successes_total" + sel, float64(100 * (i + 1))},
			{`brk_responses_total{run_id="it",code="200"}`, float64(100 * (i + 1))},
			{`brk_failures_total{run_id="it",category="timeout"}`, float64(i * (i + 1) / 2)},
			{`brk_phase_role{run_id="it",role="bisect"}`, map[bool]float64{true: 1}[i >= 3]},
			{`brk_push_dropped_total{run_id="it"}`, 0},
		} {
			if i < 3 && c.expr == `brk_phase_role{run_id="it",role="bisect"}` {
				continue // not sent before the first bisect
			}
			if i < 4 && c.expr == `brk_push_dropped_total{run_id="it"}` {
				continue // sent once per request
			}
			got, ok := instant(t, p, c.expr, at)
			if !ok || got != c.want {
				t.Errorf("%s at sample %d = %v (found %v), want %v", c.expr, i, got, ok, c.want)
			}
		}
	}
	last := times[len(times)-1]
	for _, c := range []struct {
		expr string
		at   time.Time
	}{
		{`brk_phase_verdict{run_id="it",verdict="accepted"}`, times[2]},
		{`brk_phase_verdict{run_id="it",verdict="rejected"}`, last},
		{`brk_run_verdict{run_id="it",verdict="broke"}`, last},
		{`brk_phase_role{run_id="it",role="ramp"} == 0`, last},
	} {
		if v, ok := instant(t, p, c.expr, c.at); !ok || (v != 1 && v != 0) {
			t.Errorf("%s = %v (found %v)", c.expr, v, ok)
		}
	}
	checkDashboard(t, p, native, last)
	names := storedNames(t, p)
	if want := seriesNamesFor(native); !slices.Equal(names, slices.Sorted(slices.Values(want))) {
		t.Errorf("stored names %v, want %v", names, want)
	}
}

func TestRealPrometheusClassic(t *testing.T) {
	srv := testenv.StartPrometheus(t, testenv.PrometheusOptions{})
	edges := Buckets(time.Second, 50*time.Millisecond)
	p, err := New(Config{URL: srv.WriteURL, Edges: edges})
	if err != nil {
		t.Fatal(err)
	}
	times, all := pushRun(t, p, false, edges)
	checkRoundTrip(t, srv, false, times)
	// The quantile Prometheus interpolates lies in the bucket that holds
	// the true p99.
	last := times[len(times)-1]
	for _, q := range []float64{0.5, 0.99} {
		truth := quantile(all, q)
		i := sort.SearchFloat64s(edges, truth)
		lo, hi := 0.0, math.Inf(1)
		if i > 0 {
			lo = edges[i-1]
		}
		if i < len(edges) {
			hi = edges[i]
		}
		expr := fmt.Sprintf(`histogram_quantile(%v, brk_latency_seconds_bucket{run_id="it"})`, q)
		got, ok := instant(t, srv, expr, last)
		t.Logf("p%v: true %v, Prometheus %v, bucket (%v, %v]", q*100, truth, got, lo, hi)
		if !ok || got < lo || got > hi {
			t.Errorf("%s = %v, want within (%v, %v] (true %v)", expr, got, lo, hi, truth)
		}
	}
	if got, _ := instant(t, srv, `brk_latency_seconds_count{run_id="it"}`, last); got != float64(len(all)) {
		t.Errorf("count %v, want %d", got, len(all))
	}
}

func TestRealPrometheusNative(t *testing.T) {
	srv := testenv.StartPrometheus(t, testenv.PrometheusOptions{NativeHistograms: true})
	p, err := New(Config{URL: srv.WriteURL, Native: true})
	if err != nil {
		t.Fatal(err)
	}
	times, all := pushRun(t, p, true, nil)
	checkRoundTrip(t, srv, true, times)
	last := times[len(times)-1]
	b := math.Exp2(math.Exp2(-NativeSchema))
	for _, q := range []float64{0.5, 0.99} {
		truth := quantile(all, q)
		i := nativeIndex(NativeSchema, truth)
		lo, hi := math.Pow(b, float64(i-1)), math.Pow(b, float64(i))
		expr := fmt.Sprintf(`histogram_quantile(%v, brk_latency_seconds{run_id="it"})`, q)
		got, ok := instant(t, srv, expr, last)
		t.Logf("p%v: true %v, Prometheus %v, bucket (%v, %v]", q*100, truth, got, lo, hi)
		if !ok || got < lo*(1-1e-9) || got > hi*(1+1e-9) {
			t.Errorf("%s = %v, want within (%v, %v] (true %v)", expr, got, lo, hi, truth)
		}
	}
	if got, _ := instant(t, srv, `histogram_count(brk_latency_seconds{run_id="it"})`, last); got != float64(len(all)) {
		t.Errorf("histogram_count %v, want %d", got, len(all))
	}
}

// checkDashboard evaluates every query of the Grafana dashboard, its
// variables filled in for this run, at at: each must parse and, unless it
// reads the other histogram kind's series, return something.
func checkDashboard(t *testing.T, p *testenv.Prometheus, native bool, at time.Time) {
	t.Helper()
	exprs, err := dashboardQueries(readDashboard(t))
	if err != nil {
		t.Fatal(err)
	}
	fill := strings.NewReplacer("$__rate_interval", "1m", "$__interval", "1m", "$__range", "1h",
		"$run_id", "it", "$test", "prom", "$shard", ".*")
	for _, e := range exprs {
		expr := fill.Replace(e)
		if strings.Contains(expr, "$") {
			t.Errorf("unfilled variable in %s", expr)
			continue
		}
		var data struct {
			Result []json.RawMessage `json:"result"`
		}
		q := url.Values{"query": {expr}, "time": {strconv.FormatFloat(float64(at.UnixMilli())/1000, 'f', 3, 64)}}
		promGet(t, p.URL, "/api/v1/query", q, &data)
		names, err := seriesInPromQL(e)
		if err != nil {
			t.Fatal(err)
		}
		other := slices.Contains(names, SeriesLatencyBucket) && native || slices.Contains(names, SeriesLatency) && !native
		if len(data.Result) == 0 && !other {
			t.Errorf("dashboard query %s returned nothing", expr)
		}
		if len(data.Result) != 0 && other {
			t.Errorf("dashboard query %s returned %d series from the other histogram kind", expr, len(data.Result))
		}
	}
}

// A receiver without native histograms refuses the whole request (2.42:
// 500 "native histograms are disabled"), float series and all; the pusher
// counts every sample dropped and keeps the receiver's reason. (The
// series it created before refusing stay in its name index, without
// samples.)
func TestRealPrometheusWithoutNativeRefusesNative(t *testing.T) {
	srv := testenv.StartPrometheus(t, testenv.PrometheusOptions{})
	p, err := New(Config{URL: srv.WriteURL, Native: true})
	if err != nil {
		t.Fatal(err)
	}
	s := sampleAt(0)
	s.Time = time.Now()
	s.Native.Observe(0.01, 1)
	p.Push(s)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("dropped %d, sent %d, last error %v", p.Dropped(), p.Sent(), p.Err())
	if p.Dropped() != 1 || p.Sent() != 0 || p.Err() == nil || !strings.Contains(p.Err().Error(), "native histograms") {
		t.Errorf("dropped %d, sent %d, last error %v; want 1, 0 and the receiver's reason", p.Dropped(), p.Sent(), p.Err())
	}
	for _, expr := range []string{`brk_level{run_id="r1"}`, `brk_successes_total{run_id="r1"}`} {
		if v, ok := instant(t, srv, expr, s.Time); ok {
			t.Errorf("%s = %v from a refused request", expr, v)
		}
	}
}
