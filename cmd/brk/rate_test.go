package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brk-bench/brk/bench"
)

// TestRateCommand: brk rate runs the open-model test: levels in
// requests/s, the final line, the JSON report's rate fields, the HTML
// report, and the Little's-law warning on stderr when --conn ×
// --rate-depth cannot hold rate × timeout.
func TestRateCommand(t *testing.T) {
	fx := startFixture(t, bench.FixtureConfig{})
	dir := t.TempDir()
	jsonPath, htmlPath := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.html")
	var r result
	for attempt := 1; ; attempt++ {
		r = runBrk(t, "rate", fx.URL("/plain"), "--conn", "4", "--start", "200", "--pace", "200", "--max", "400",
			"--phase", "300ms", "--threads", "1", "--expect-body", "ok", "--arrivals", "poisson", "--seed", "7",
			"-v", "--json", jsonPath, "--report", htmlPath)
		// Only a client that fell behind its schedule (a loaded
		// machine; brk calls it unfulfilled, exit 3) is retried.
		if attempt == timedAttempts || r.code != 3 || !strings.Contains(r.stdout, "fell behind its arrival schedule") {
			break
		}
		t.Logf("attempt %d: the client fell behind its schedule (load %s); retrying", attempt, loadavg())
	}
	expect(t, r, 0, "Done (400 requests/s)")
	if !strings.Contains(r.stderr, "Little's law") {
		t.Errorf("no slot warning on stderr (4 slots < 400 requests/s × 1 s)\n%s", r)
	}
	for _, want := range []string{"level 200 requests/s", "level 400 requests/s", "schedule ", "send lag", "service", "client lag",
		"last accepted: 400 requests/s"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q\n%s", want, r)
		}
	}
	b, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Test      string `json:"test"`
		Arrivals  string `json:"arrivals"`
		Seed      uint64 `json:"seed"`
		RateDepth int    `json:"rate_depth"`
		Phases    []struct {
			Level  int `json:"level"`
			Counts struct {
				Attempted uint64 `json:"attempted"`
				Succeeded uint64 `json:"succeeded"`
			} `json:"counts"`
			Rate *struct {
				Scheduled     uint64  `json:"scheduled"`
				Written       uint64  `json:"written"`
				ExpiredUnsent uint64  `json:"expired_unsent"`
				Offered       float64 `json:"offered_per_sec"`
			} `json:"rate"`
		} `json:"phases"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Test != "rate" || rep.Arrivals != "poisson" || rep.Seed != 7 || rep.RateDepth != 1 || len(rep.Phases) != 2 {
		t.Fatalf("report: test %q arrivals %q seed %d rate_depth %d, %d phases\n%s", rep.Test, rep.Arrivals, rep.Seed, rep.RateDepth, len(rep.Phases), b)
	}
	for _, p := range rep.Phases {
		x := p.Rate
		if x == nil || x.Scheduled != x.Written+x.ExpiredUnsent || p.Counts.Attempted != x.Scheduled || x.Scheduled == 0 {
			t.Errorf("phase at %d requests/s: rate %+v, counts %+v", p.Level, x, p.Counts)
		}
	}
	html, err := os.ReadFile(htmlPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"brk rate test", "level (requests/s)", "Schedule (rate test)", "Done (400 requests/s)"} {
		if !strings.Contains(string(html), want) {
			t.Errorf("HTML report lacks %q", want)
		}
	}
}
