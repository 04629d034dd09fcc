package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brk-bench/brk"
	"github.com/brk-bench/brk/internal/testenv"
)

// TestNginxFixedLoadAndKeepAlive: a wrk-style fixed load (brk -c 16 -d D)
// and a keep-alive connection ramp (brk conn --keep-alive), each one
// command, against nginx; its access log holds exactly one line per
// request brk attempted. nginx ends a connection after 1000 responses
// (keepalive_requests), so the keep-alive ramp also replaces connections
// the server closes.
func TestNginxFixedLoadAndKeepAlive(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		args   []string
		phases int
		last   string
	}{
		{"fixed load", []string{"-c", "16", "-d", "1s", "-t", "2", "--timeout", "1s"}, 1, "Done (16 concurrent requests)"},
		{"keep-alive ramp", []string{"conn", "--keep-alive", "--start", "4", "--pace", "4", "--max", "12", "--phase", "500ms", "-t", "2", "--timeout", "1s"}, 3, "Done (12 connections)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			testenv.Parallel(t, testenv.Waits)
			ng := testenv.StartNginx(t, testenv.NginxOptions{})
			js := filepath.Join(t.TempDir(), "r.json")
			args := append(append([]string{}, c.args...), "--expect-body", "ok", "--json", js, "http://"+ng.Addr+"/")
			r := runBrk(t, args...)
			expect(t, r, 0, c.last)
			validateSchema(t, js)
			b, err := os.ReadFile(js)
			if err != nil {
				t.Fatal(err)
			}
			var res brk.Result
			if err := json.Unmarshal(b, &res); err != nil {
				t.Fatal(err)
			}
			if len(res.Phases) != c.phases {
				t.Fatalf("%d phases, want %d\n%s", len(res.Phases), c.phases, r.stdout)
			}
			var attempted, succeeded, setups uint64
			for _, p := range res.Phases {
				attempted += p.Counts.Attempted
				succeeded += p.Counts.Succeeded
				setups += p.Setups.Established
			}
			got := ng.WaitRequests(t, int(attempted), 5*time.Second)
			time.Sleep(50 * time.Millisecond)
			if late := ng.Requests(t); late != got || uint64(got) != attempted || succeeded != attempted {
				t.Errorf("nginx logged %d requests (%d after the run), brk attempted %d, succeeded %d", got, late, attempted, succeeded)
			}
			t.Logf("%s: nginx logged %d, brk attempted %d over %d connections set up", strings.Join(args, " "), got, attempted, setups)
			if c.name == "keep-alive ramp" && setups >= attempted/100 {
				t.Errorf("%d connections for %d requests: the connections were not kept alive", setups, attempted)
			}
		})
	}
}
