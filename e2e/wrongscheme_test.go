package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/brk-bench/brk"
	"github.com/brk-bench/brk/bench"
	"github.com/brk-bench/brk/internal/hostile"
)

// tlsAlert is what an OpenSSL-based TLS server answers to bytes that are
// not a ClientHello: a fatal handshake_failure alert record.
var tlsAlert = []byte{0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x28}

// TestHTTPToATLSServer: http:// against a server that speaks TLS is a
// failed setup naming the likely cause, inconclusive at phase 0 — not a
// server that broke.
func TestHTTPToATLSServer(t *testing.T) {
	srv := hostile.Start(t, func(c *hostile.Conn, _ int) {
		if _, err := c.ReadRequest(); err != nil {
			return
		}
		c.Write(tlsAlert)
	})
	res := runBrk(t, hostileTarget(srv), shortPlan(2, 1, 300*time.Millisecond))
	t.Log(describe(res))
	checkAccounting(t, res)
	if res.Verdict != brk.VerdictInconclusive || !strings.Contains(res.Reason, "the server answered with TLS: use https://") {
		t.Fatalf("verdict %s (%s)", res.Verdict, res.Reason)
	}
	if s := totalSetups(res); s.Established != 0 || s.Failed == 0 {
		t.Fatalf("setups %+v", s)
	}
	if c := total(res); c.Protocol != 0 || c.Status != 0 {
		t.Fatalf("counts %+v: a wrong scheme is not the server's fault", c)
	}
}

// TestHTTPSToAPlainServer: https:// against a plain HTTP server says so.
func TestHTTPSToAPlainServer(t *testing.T) {
	fx, err := bench.StartFixture(bench.FixtureConfig{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer fx.Close()
	url := "https://" + strings.TrimPrefix(fx.URL("/plain"), "http://")
	res := runBrk(t, brk.Target{URL: url, TLS: brk.TLSOptions{Insecure: true}}, shortPlan(2, 1, 300*time.Millisecond))
	if res.Verdict != brk.VerdictInconclusive || !strings.Contains(res.Reason, "answered plain HTTP, not TLS: use http://") {
		t.Fatalf("verdict %s (%s)", res.Verdict, res.Reason)
	}
}
