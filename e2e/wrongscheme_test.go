package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/brk-bench/brk"
	"github.com/brk-bench/brk/bench"
	"github.com/brk-bench/brk/internal/hostile"
	"github.com/brk-bench/brk/internal/testenv"
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

// TestHTTPToH2OsTLSPort: http:// against h2o's TLS port. h2o closes a
// plain connection without a byte, so nothing the client reads says TLS:
// before, the reconnect loop made it "Broken" (exit 1) with thousands of
// transport failures. Phase 0 having heard nothing from any connection,
// brk probes the port once with a TLS ClientHello, outside the counts, and
// says it: inconclusive, use https:// (exit 3).
func TestHTTPToH2OsTLSPort(t *testing.T) {
	h := testenv.StartH2O(t, nil, "")
	for _, h2c := range []bool{false, true} {
		t.Run(map[bool]string{false: "http1", true: "h2c"}[h2c], func(t *testing.T) {
			res := runBrk(t, brk.Target{URL: "http://" + h.Addr + "/ok.txt", Protocol: protocolOf(h2c)}, shortPlan(2, 1, 300*time.Millisecond))
			t.Log(describe(res))
			checkAccounting(t, res)
			if res.Verdict != brk.VerdictInconclusive || !strings.Contains(res.Reason, "the server speaks TLS on this port: use https://") {
				t.Fatalf("verdict %s (%s), want inconclusive: speaks TLS", res.Verdict, res.Reason)
			}
			if c := total(res); c.Succeeded != 0 || c.Protocol != 0 {
				t.Fatalf("counts %+v", c)
			}
		})
	}
}

// TestHangupOnEveryRequestIsNotAByte: a plain server that hangs up on
// every request without a byte is probed as h2o's TLS port is (one probe,
// counted), answers the ClientHello with nothing TLS, and has given the
// first phase not a byte: inconclusive (exit 3), not a server that broke.
func TestHangupOnEveryRequestIsNotAByte(t *testing.T) {
	testenv.Parallel(t, testenv.Waits)
	srv := hostile.Start(t, func(c *hostile.Conn, _ int) { c.ReadRequest() })
	res := runBrk(t, hostileTarget(srv), shortPlan(2, 1, 300*time.Millisecond))
	t.Log(describe(res))
	checkAccounting(t, res)
	if res.Verdict != brk.VerdictInconclusive || strings.Contains(res.Reason, "TLS") || !strings.Contains(res.Reason, "not a byte came back") {
		t.Fatalf("verdict %s (%s), want inconclusive: not a byte", res.Verdict, res.Reason)
	}
	if p := res.Phases[0].TLSProbes; p != 1 {
		t.Fatalf("tls probes %d, want 1", p)
	}
	if c := total(res); c.Transport == 0 || c.Succeeded != 0 {
		t.Fatalf("counts %+v", c)
	}
}
