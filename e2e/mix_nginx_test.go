package e2e

import (
	"bytes"
	"math"
	"net/url"
	"os"
	"regexp"
	"testing"
	"time"

	"github.com/brk-bench/brk"
	"github.com/brk-bench/brk/internal/testenv"
)

// accessLine is a combined-format access-log line's request and status.
var accessLine = regexp.MustCompile(`"([A-Z]+) (\S+) HTTP/[0-9.]+" (\d{3}) `)

// TestNginxMix (issue 24, must-show 1): a three-target mix of weights
// 1:1:2 (two GETs, a POST with a body) against nginx, whose
// keepalive_requests is high enough that no connection is replaced, over
// HTTP/1.1 (pipelined, depth 4) and HTTP/2 (h2c): nginx's access log
// counts, per URL, exactly brk's per-target attempted, in the weights'
// ratio within one request per worker thread (each worker's sequence is
// within one of its share), with every response a success. nginx-light
// cannot log request bodies: that POST bodies arrive byte for byte is
// checked against a Go server (TestMixRequests in the root package).
func TestNginxMix(t *testing.T) {
	t.Parallel()
	for _, h2 := range []bool{false, true} {
		name := "http1.1"
		opts := testenv.NginxOptions{KeepaliveRequests: 10_000_000}
		if h2 {
			name, opts.ListenSuffix = "h2c", "http2"
		}
		t.Run(name, func(t *testing.T) {
			testenv.Parallel(t, testenv.Waits)
			ng := testenv.StartNginx(t, opts)
			base := "http://" + ng.Addr
			mix := []brk.Request{
				{URL: base + "/a"},
				{URL: base + "/b?x=1"},
				{Method: "POST", URL: base + "/c", Body: []byte("posted\x00bytes\r\n"), Weight: 2},
			}
			const threads = 2
			plan := shortPlan(4, 4, time.Second)
			plan.Threads = threads
			res := runBrk(t, brk.Target{Mix: mix, Protocol: protocolOf(h2), ExpectBody: []byte("ok")}, plan)
			checkAccounting(t, res)
			tc := total(res)
			if res.Verdict != brk.VerdictDone || tc.Attempted == 0 || tc.Succeeded != tc.Attempted {
				t.Fatalf("%s", describe(res))
			}
			if su := totalSetups(res); su.Established != 4 {
				t.Errorf("%d setups for 4 connections: a connection was replaced", su.Established)
			}
			attempted := make([]uint64, len(mix))
			for _, ph := range res.Phases {
				for i, ts := range ph.Targets {
					attempted[i] += ts.Counts.Attempted
				}
			}
			ng.WaitRequests(t, int(tc.Attempted), 5*time.Second)
			log, err := os.ReadFile(ng.AccessLog)
			if err != nil {
				t.Fatal(err)
			}
			logged := map[string]uint64{}
			for _, line := range bytes.Split(log, []byte("\n")) {
				if m := accessLine.FindSubmatch(line); m != nil {
					if string(m[3]) != "200" {
						t.Errorf("nginx logged %s", line)
					}
					logged[string(m[1])+" "+string(m[2])]++
				}
			}
			for i, r := range mix {
				method := r.Method
				if method == "" {
					method = "GET"
				}
				u, _ := url.Parse(r.URL)
				key := method + " " + u.RequestURI()
				share := float64(tc.Attempted) * float64(max(r.Weight, 1)) / 4
				t.Logf("%s: nginx %d, brk %d, share %.1f", key, logged[key], attempted[i], share)
				if logged[key] != attempted[i] {
					t.Errorf("%s: nginx logged %d, brk attempted %d", key, logged[key], attempted[i])
				}
				if d := math.Abs(float64(attempted[i]) - share); d >= threads {
					t.Errorf("%s: %d of %d, its share %.1f: off by %.1f, more than one per worker", key, attempted[i], tc.Attempted, share, d)
				}
			}
		})
	}
}
