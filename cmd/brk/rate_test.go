package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brk-bench/brk/bench"
	"github.com/brk-bench/brk/internal/testenv"
)

// TestRateCommand: brk rate runs the open-model test: levels in
// requests/s, the final line, the JSON report's rate fields, the HTML
// report, and the Little's-law warning on stderr when --conn ×
// --rate-depth cannot hold rate × timeout.
func TestRateCommand(t *testing.T) {
	testenv.Parallel(t, testenv.Waits)
	fx := startFixture(t, bench.FixtureConfig{})
	dir := t.TempDir()
	jsonPath, htmlPath := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.html")
	var r result
	for attempt := 1; ; attempt++ {
		r = runBrk(t, "rate", fx.URL("/plain"), "--conn", "4", "--start", "200", "--pace", "200", "--max", "400",
			"--phase", "300ms", "--threads", "1", "--timeout", "1s", "--expect-body", "ok", "--arrivals", "poisson", "--seed", "7",
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

// TestRateRefineRequestsPerSecond: --refine in the rate test bisects in
// requests/s down to adjacent rates, as the --refine row of docs/cli.md says. A
// server that answers 200 for 1.5 s from its first request and 500 from
// then on: phase 0 at 10 requests/s (1 s) is accepted, phase 1 at 30
// rejected, and the probes are 20, 15, 12 and 11 requests/s: Broken
// between 10 and 11 requests/s.
func TestRateRefineRequestsPerSecond(t *testing.T) {
	testenv.Parallel(t, testenv.Waits)
	path := filepath.Join(t.TempDir(), "r.json")
	var r result
	for attempt := 1; ; attempt++ {
		var mu sync.Mutex
		var first time.Time
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			if first.IsZero() {
				first = time.Now()
			}
			late := time.Since(first) > 1500*time.Millisecond
			mu.Unlock()
			if late {
				w.WriteHeader(http.StatusInternalServerError)
			}
			w.Write([]byte("ok"))
		}))
		// --repeat 1: this server breaks for good after 1.5 s, so a second
		// run of 10 requests/s (confirming the final pair) would fail too;
		// the test is about the bisection's units, one run a level.
		r = runBrk(t, "rate", srv.URL+"/", "--conn", "2", "--threads", "1", "--start", "10", "--pace", "20", "--max", "30",
			"--phase", "1s", "--timeout", "200ms", "--refine", "--repeat", "1", "--quiet", "--json", path)
		srv.Close()
		// Only a client that fell behind its schedule (a loaded machine)
		// is retried: at a bisection's probe that ends the search early
		// (Broken at 20, the break placed between 10 and 20), or at the end.
		if attempt == timedAttempts || !strings.Contains(r.stdout, "fell behind its arrival schedule") {
			break
		}
		t.Logf("attempt %d: the client fell behind its schedule (load %s); retrying", attempt, loadavg())
	}
	expect(t, r, 1, "Broken (11 requests/s)")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Phases []struct {
			Level int  `json:"level"`
			Probe bool `json:"probe"`
		} `json:"phases"`
		LastAccepted  int `json:"last_accepted"`
		FirstRejected int `json:"first_rejected"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	var levels []string
	for _, p := range rep.Phases {
		l := strconv.Itoa(p.Level)
		if p.Probe {
			l += "p"
		}
		levels = append(levels, l)
	}
	if got, want := strings.Join(levels, " "), "10 30 20p 15p 12p 11p"; got != want || rep.LastAccepted != 10 || rep.FirstRejected != 11 {
		t.Errorf("levels %s (p: probe), last accepted %d, first rejected %d; want %s, 10 and 11\n%s", got, rep.LastAccepted, rep.FirstRejected, want, r)
	}
	rows := 0
	for _, p := range docPages(t) {
		for _, l := range strings.Split(p.text, "\n") {
			if strings.HasPrefix(l, "| `--refine` |") {
				rows++
				if !strings.Contains(l, "requests/s in the rate test") {
					t.Errorf("the --refine row of %s does not say that the rate test bisects in requests/s:\n%s", p.name, l)
				}
			}
		}
	}
	if rows == 0 {
		t.Errorf("no page of README.md and docs/*.md has a --refine row")
	}
}
