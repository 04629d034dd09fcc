package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/brk-bench/brk"
	"github.com/brk-bench/brk/internal/testenv"
)

// TestFiveThousandConnections holds 5,000 concurrent connections, plain and
// TLS, against nginx (two workers for TLS): every connection is set up, nothing is lost, and
// nginx logged exactly the requests brk attempted. (The listen backlog is
// raised: 5,000 simultaneous connects overflow nginx's default 511 and the
// dropped SYNs would be retried after a second.)
func TestFiveThousandConnections(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	const conns = 5000
	ca := testenv.NewCA(t)
	cases := []struct {
		name   string
		start  func(t *testing.T) (*testenv.Nginx, brk.Target)
		phase  time.Duration
		expect string
	}{
		{"plain", func(t *testing.T) (*testenv.Nginx, brk.Target) {
			ngx := testenv.StartNginx(t, testenv.NginxOptions{ListenSuffix: "backlog=8192"})
			return ngx, brk.Target{URL: "http://" + ngx.Addr + "/"}
		}, 2 * time.Second, ""},
		{"tls", func(t *testing.T) (*testenv.Nginx, brk.Target) {
			ngx := testenv.StartNginxTLS(t, testenv.NginxTLSOptions{
				Leaf:  ca.Server(t, "localhost", "127.0.0.1"),
				Nginx: testenv.NginxOptions{ListenSuffix: "backlog=8192", Workers: 2},
			})
			return ngx, brk.Target{URL: "https://" + ngx.Addr + "/", TLS: brk.TLSOptions{CACert: ca.CertPath, Group: "X25519"}}
		}, 10 * time.Second, "1.3"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "tls" && raceEnabled {
				t.Skip("5,000 TLS handshakes under the race detector outlast the phase; .ci/run runs this test without -race too")
			}
			ngx, target := c.start(t)
			target.ExpectBody = []byte("ok")
			res := runBrk(t, target, brk.Plan{Conns: conns, Start: 1, Max: 1, Phase: c.phase,
				Timeout: 20 * time.Second, Threads: 2})
			// 5,000 simultaneous TLS connects can overflow the kernel's
			// accept queue (somaxconn) while nginx does handshakes; a
			// dropped SYN is retried after 1, 3, 7 s, and a connection that
			// comes up after the phase leaves its target unfulfilled. That
			// verdict is honest (the client did not hold the load in time)
			// and still must lose nothing.
			unfulfilled := res.Verdict == brk.VerdictInconclusive && strings.HasPrefix(res.Reason, "target unfulfilled")
			if res.Verdict != brk.VerdictDone && !(c.name == "tls" && unfulfilled) {
				t.Fatalf("%s (%s)\n%s", res.Verdict, res.Reason, describe(res))
			}
			if unfulfilled {
				t.Logf("tls: %s (setup p99 %.0f ms, max %.0f ms)", res.Reason, res.Phases[0].SetupLatencyMs.P99, res.Phases[0].SetupLatencyMs.Max)
			}
			cnt, s := total(res), totalSetups(res)
			if cnt.Succeeded != cnt.Attempted || cnt.Attempted < conns {
				t.Fatalf("requests %+v", cnt)
			}
			if s.Established < conns || s.Failed != 0 || s.TimedOut != 0 {
				t.Fatalf("setups %+v", s)
			}
			if c.expect != "" {
				if got := lastTLS(t, res).Version; got != c.expect && got != "1.2" {
					t.Fatalf("TLS version %q", got)
				}
			}
			if got := ngx.WaitRequests(t, int(cnt.Attempted), 5*time.Second); got != int(cnt.Attempted) {
				t.Fatalf("nginx logged %d, brk attempted %d", got, cnt.Attempted)
			}
			ph := res.Phases[0]
			t.Logf("%s: %d setups (mean %.1f ms, p99 %.1f ms), %d requests, %.0f req/s, client CPU %.2f s",
				c.name, s.Established, ph.SetupLatencyMs.Mean, ph.SetupLatencyMs.P99, cnt.Attempted, ph.RequestsPerSec,
				ph.ClientCPU.UserS+ph.ClientCPU.SystemS)
		})
	}
}
