package remotewrite

import (
	"os"
	"slices"
	"strings"
	"testing"
)

const dashboardPath = "../../deploy/grafana/brk-dashboard.json"

func readDashboard(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(dashboardPath)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDashboardSeriesAreWritten(t *testing.T) {
	names, err := DashboardSeries(readDashboard(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the dashboard reads %v", names)
	for _, n := range names {
		if !slices.Contains(SeriesNames(), n) {
			t.Errorf("the dashboard queries %s, which brk does not write", n)
		}
	}
	// What the dashboard must show: level, success %, latency from both
	// histogram kinds, failures by category, verdict annotations.
	for _, n := range []string{SeriesLevel, SeriesSuccesses, SeriesFailures, SeriesLatencyBucket, SeriesLatency, SeriesPhaseVerdict} {
		if !slices.Contains(names, n) {
			t.Errorf("the dashboard does not read %s", n)
		}
	}
}

func TestDashboardAnnotatesPhaseVerdicts(t *testing.T) {
	exprs, err := dashboardQueries(readDashboard(t))
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range exprs {
		found = found || strings.Contains(e, SeriesPhaseVerdict)
	}
	if !found {
		t.Fatal("no query reads brk_phase_verdict")
	}
	if !strings.Contains(string(readDashboard(t)), `"titleFormat": "phase {{verdict}}"`) {
		t.Error("no annotation titled by the phase's verdict")
	}
}

func TestSeriesInPromQL(t *testing.T) {
	for _, c := range []struct {
		expr string
		want []string
	}{
		{`brk_level`, []string{"brk_level"}},
		{`brk_level{run_id=~"$run_id", test="a{b}"}`, []string{"brk_level"}},
		{`sum by (le, code) (rate(brk_latency_seconds_bucket{x="y"}[$__rate_interval]))`, []string{"brk_latency_seconds_bucket"}},
		{`sum(rate(a_total[5m])) without (instance) / on(job) group_left(x) b offset 5m`, []string{"a_total", "b"}},
		{`histogram_quantile(0.99, sum(rate(brk_latency_seconds[1m])))`, []string{"brk_latency_seconds"}},
		{`{__name__="brk_phase_role", role="x"} == 1 and bool c`, []string{"brk_phase_role", "c"}},
		{`{__name__=~"brk_.*"}`, nil},
		{`100 * x / (x + (y or vector(0))) > 1e-3`, []string{"x", "x", "y"}},
		{`max_over_time(brk_run_verdict[${__range}]) @ end()`, []string{"brk_run_verdict"}},
		{`count_values("v", m) - topk(3, n) + inf`, []string{"m", "n"}},
		{`job:request_rate:5m`, []string{"job:request_rate:5m"}},
	} {
		got, err := seriesInPromQL(c.expr)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, %v; want %q", c.expr, got, err, c.want)
		}
	}
	for _, bad := range []string{`sum(x`, `x{a="b"`, `x[5m`, `"open`, `x)`} {
		if _, err := seriesInPromQL(bad); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

func TestVariableExpr(t *testing.T) {
	for q, want := range map[string]string{
		`label_values(brk_level{run_id=~"$run_id"}, test)`: `brk_level{run_id=~"$run_id"}`,
		`label_values(run_id)`:                             ``,
		`query_result(max(brk_level))`:                     `max(brk_level)`,
		`metrics(brk_.*)`:                                  ``,
	} {
		if got := variableExpr(q); got != want {
			t.Errorf("%s: %q, want %q", q, got, want)
		}
	}
}

func TestDashboardSeriesRefuses(t *testing.T) {
	for _, c := range []struct{ name, json string }{
		{"not JSON", `{`},
		{"no query", `{"panels": []}`},
		{"bad query", `{"panels": [{"targets": [{"expr": "sum(x"}]}]}`},
	} {
		if _, err := DashboardSeries([]byte(c.json)); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
	got, err := DashboardSeries([]byte(`{"panels": [{"type": "row", "panels": [{"targets": [{"expr": "a"}]}]}],
		"templating": {"list": [{"type": "query", "query": "label_values(b, x)"}, {"type": "query", "query": {"query": "label_values(c{y=\"1\"}, z)"}}]}}`))
	if err != nil || !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("nested: %q, %v", got, err)
	}
}
