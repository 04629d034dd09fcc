package brk

import (
	"context"
	"encoding/json"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

var portRE = regexp.MustCompile(`"addr":"127\.0\.0\.1:[0-9]+"`)

var updatePlanGolden = flag.Bool("update-plan-golden", false, "rewrite testdata/plan_golden.json")

// TestPlanJSONGolden runs short plans of every test, linear and search,
// sharded (without a coordinator) and not, and compares their reports'
// "plan" and "shard" objects with the bytes recorded from main before Plan
// became one type (the shard's times and plan hash, which depend on the
// clock and the listener's port, are blanked, and its addr's port; TestPlanHashGolden pins the
// hash).
func TestPlanJSONGolden(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }))
	defer srv.Close()
	at := time.Now().Add(200 * time.Millisecond)
	sharded := func(p Plan) Plan {
		p.Shard = &Sharding{Index: 0, Count: 2, StartAt: at, Token: "t", Allowance: 30 * time.Millisecond}
		return p
	}
	base := Plan{Conns: 2, Start: 1, Pace: 1, Max: 2, Phase: 20 * time.Millisecond, Timeout: 250 * time.Millisecond, Threads: 1}
	search := base
	search.Pace, search.Max, search.Search = 0, 4, &Search{Growth: 3, ResolutionPct: 50}
	search.Repeat, search.Budget, search.MaxP99 = 2, 5*time.Second, 200*time.Millisecond
	refine := base
	refine.Refine, refine.MaxP999, refine.Accept = true, 1500*time.Microsecond, AcceptAny
	conns := base
	conns.Requests, conns.Conns = 2, 0
	keep := base
	keep.KeepAlive, keep.Max = true, 1
	rate := base
	rate.Start, rate.Pace, rate.Max, rate.Arrivals, rate.Seed, rate.Accept = 20, 10, 30, "poisson", 7, 99.5
	rateSearch := search
	rateSearch.Start, rateSearch.Max, rateSearch.RateDepth = 10, 40, 3
	cases := []struct {
		name string
		m    Mode
		p    Plan
	}{
		{"requests", ModeRequests, base},
		{"requests-search", ModeRequests, search},
		{"requests-refine", ModeRequests, refine},
		{"requests-sharded", ModeRequests, sharded(base)},
		{"connections", ModeConnections, conns},
		{"connections-keepalive", ModeConnections, keep},
		{"connections-search", ModeConnections, search},
		{"connections-sharded", ModeConnections, sharded(conns)},
		{"rate", ModeRate, rate},
		{"rate-search", ModeRate, rateSearch},
		{"rate-sharded", ModeRate, sharded(rate)},
	}
	got := map[string]map[string]json.RawMessage{}
	for _, c := range cases {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		res, err := RunMode(ctx, c.m, Target{URL: srv.URL + "/"}, c.p, nil)
		cancel()
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		b, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		var all map[string]json.RawMessage
		if err := json.Unmarshal(b, &all); err != nil {
			t.Fatal(err)
		}
		o := map[string]json.RawMessage{"plan": all["plan"]}
		if sh, ok := all["shard"]; ok {
			var s map[string]json.RawMessage
			if err := json.Unmarshal(sh, &s); err != nil {
				t.Fatal(err)
			}
			for _, k := range []string{"plan_hash", "start_at", "start_lateness_ms", "max_lateness_ms"} {
				if _, ok := s[k]; !ok {
					t.Fatalf("%s: shard has no %s: %s", c.name, k, sh)
				}
			}
			// Blank the varying values in place, keeping the key order.
			blanked := string(sh)
			for _, k := range []string{"plan_hash", "start_at", "start_lateness_ms", "max_lateness_ms"} {
				blanked = strings.Replace(blanked, `"`+k+`":`+string(s[k]), `"`+k+`":null`, 1)
			}
			blanked = portRE.ReplaceAllString(blanked, `"addr":"127.0.0.1:PORT"`) // the test server's
			o["shard"] = json.RawMessage(blanked)
		}
		got[c.name] = o
	}
	out, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, '\n')
	const path = "testdata/plan_golden.json"
	if *updatePlanGolden {
		if err := os.WriteFile(path, out, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != string(want) {
		t.Errorf("the reports' plan and shard objects changed:\n got %s\nwant %s", out, want)
	}
}

// shardReportJSON is a shard's report as brk wrote it (its phases left
// out), whose plan hash TestPlanHashGolden recomputes.
const shardReportJSON = `{"schema":1,"test":"rate","url":"http://127.0.0.1:8080/","protocol":"h2","tls":false,
"verdict":"done","reason":"","last_accepted":null,"first_rejected":null,"threads":1,"conns":4,"timeout_ms":250.5,
"rate_depth":3,"arrivals":"poisson","seed":7,"accept_pct":"99.5","plan":{"test":"rate","protocol":"h2","connections":4,
"ramp":"search","start":10,"pace":0,"max":40,"growth":3,"resolution_pct":50,"budget_s":5,"phase_s":0.02,"timeout_ms":250.5,
"accept_pct":99.5,"threads":1,"max_p99_ms":200,"repeat":2,"rate_depth":3,"arrivals":"poisson","seed":7},
"version":"v","started_at":"2026-01-01T00:00:00Z","phases":[],
"shard":{"index":1,"count":2,"plan_hash":"x","target_hash":"abc","start_at":"2026-01-01T00:00:00Z","start_lateness_ms":0.25,
"max_lateness_ms":1.5,"plan":{"start":10,"pace":0,"max":40,"phase_ms":20,"allowance_ms":1250.5,"max_p99_ms":200,
"max_p999_ms":0.001,"refine":true,"repeat":2,"addr":"127.0.0.1:8080","search":{"growth":3,"resolution_pct":50},"budget_ms":5000}}}`

// TestPlanHashGolden pins the plan hash of a shard's report: the value
// recorded from main before Plan became one type.
func TestPlanHashGolden(t *testing.T) {
	var r Result
	if err := json.Unmarshal([]byte(shardReportJSON), &r); err != nil {
		t.Fatal(err)
	}
	const want = "3680b024c969d533478dae306cdd51ee0d52e56270ce11d88ba5d20cf4b0e069"
	if got := reportPlanHash(r.Shard.TargetHash, &r, r.Shard.Count, r.Shard.Plan); got != want {
		t.Errorf("plan hash %s, want %s", got, want)
	}
}
