package e2e

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/brk-bench/brk"
	"github.com/brk-bench/brk/bench"
	"github.com/brk-bench/brk/internal/e2ekit"
	"github.com/brk-bench/brk/internal/hostile"
	"github.com/brk-bench/brk/internal/testenv"
)

// h2Depths are the levels issue #9 asks to hold at 100 % success.
var h2Depths = []int{1, 8, 32, 100}

// checkH2Exact: the run is Done, every request succeeded, and the server
// handled exactly what the client attempted. It reports whether brk ended
// inconclusive instead, saying it could not hold the level (the counts
// still checked).
func checkH2Exact(t *testing.T, res *brk.Result, served func(want int) int) (busy bool) {
	t.Helper()
	checkAccounting(t, res)
	// brk may say it could not tell: on a busy box, or because a connection
	// never held its streams in the short phase (TLS set-ups beside other
	// tests: "target unfulfilled", seen once at depth 100 on a quiet run).
	busy = res.Verdict == brk.VerdictInconclusive &&
		(2*e2ekit.BusyPhases(res) > len(res.Phases) || strings.Contains(res.Reason, "target unfulfilled"))
	switch {
	case res.Protocol == "h2" && busy:
		// brk could not hold the level on a busy box and said so; what it
		// sent must still be what the server served.
		t.Logf("inconclusive, as it should be when the level was not held: %s; the counts are still checked", res.Reason)
	case res.Verdict != brk.VerdictDone || res.Protocol != "h2":
		t.Fatalf("verdict %s protocol %s, want done h2: %s", res.Verdict, res.Protocol, describe(res))
	}
	tc := total(res)
	if tc.Attempted == 0 || tc.Attempted != tc.Succeeded {
		t.Fatalf("attempted %d, succeeded %d: %+v", tc.Attempted, tc.Succeeded, tc)
	}
	if got := served(int(tc.Attempted)); uint64(got) != tc.Attempted {
		t.Errorf("server handled %d requests, client attempted %d", got, tc.Attempted)
	}
	return busy
}

func fixtureServed(f *bench.Fixture) func(int) int {
	return func(want int) int {
		deadline := time.Now().Add(2 * time.Second)
		for f.Requests() < int64(want) && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		return int(f.Requests())
	}
}

// TestH2FixtureRequests: the requests test over h2c and h2 (TLS) against
// the fixture, at 1, 8, 32 and 100 concurrent streams per connection.
func TestH2FixtureRequests(t *testing.T) {
	t.Parallel()
	for _, tlsOn := range []bool{false, true} {
		for _, d := range h2Depths {
			t.Run(fmt.Sprintf("tls=%v/depth=%d", tlsOn, d), func(t *testing.T) {
				testenv.Parallel(t, testenv.Waits)
				f, err := bench.StartFixture(bench.FixtureConfig{TLS: tlsOn})
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				target := brk.Target{URL: f.URL("/plain"), Protocol: brk.HTTP2, ExpectBody: []byte("ok")}
				target.TLS.Insecure = tlsOn
				res := runBrk(t, target, shortPlan(4, d, 300*time.Millisecond))
				busy := checkH2Exact(t, res, fixtureServed(f))
				p := res.Phases[0]
				// On a busy box brk may not have held the level on every
				// connection: that is why it said it could not tell.
				if !busy && p.TargetReachedOnce != 4 || p.ResetsSent != 0 || p.Setups.Established != 4 {
					t.Errorf("reached once %d, resets %d, setups %+v", p.TargetReachedOnce, p.ResetsSent, p.Setups)
				}
			})
		}
	}
}

// TestH2FixtureConnections: the connections test over h2c and h2: each
// connection carries 3 streams one at a time, then GOAWAY and close.
func TestH2FixtureConnections(t *testing.T) {
	for _, tlsOn := range []bool{false, true} {
		for _, d := range h2Depths {
			t.Run(fmt.Sprintf("tls=%v/conns=%d", tlsOn, d), func(t *testing.T) {
				f, err := bench.StartFixture(bench.FixtureConfig{TLS: tlsOn})
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				target := brk.Target{URL: f.URL("/plain"), Protocol: brk.HTTP2, ExpectBody: []byte("ok")}
				target.TLS.Insecure = tlsOn
				plan := brk.Plan{Load: brk.Connections{Requests: 3}, Start: d, Max: d, Phase: connsPhase(t, f, tlsOn, d), Timeout: 2 * time.Second, Accept: 100, Threads: 1}
				ctx, cancel := contextWithTimeout()
				defer cancel()
				res, err := brk.Run(ctx, target, plan, nil)
				if err != nil {
					t.Fatal(err)
				}
				checkH2Exact(t, res, fixtureServed(f))
				su := totalSetups(res)
				tc := total(res)
				checkThreePerConn(t, su, tc.Attempted, d)
			})
		}
	}
}

// connsPhase is a phase long enough for every one of d connections to
// carry a request on this machine now: the one client thread sets up all
// d at once, so the last waits up to d setups, each at most the slowest of
// five measured here (a TLS handshake against the fixture, or a connect);
// four times that, and never less than a second.
func connsPhase(t *testing.T, f *bench.Fixture, tlsOn bool, d int) time.Duration {
	t.Helper()
	addr := f.Addr()
	var slowest time.Duration
	for range 5 {
		t0 := time.Now()
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if tlsOn {
			tc := tls.Client(c, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h2"}})
			if err := tc.Handshake(); err != nil {
				t.Fatal(err)
			}
		}
		slowest = max(slowest, time.Since(t0))
		c.Close()
	}
	phase := max(time.Second, 4*time.Duration(d)*slowest)
	t.Logf("slowest setup of 5: %s; phase %s for %d connections", slowest, phase, d)
	return phase
}

// TestH2NginxTLS: nginx's http2 over TLS ends each connection after 1000
// streams (keepalive_requests) with GOAWAY: the streams above its last
// stream id are replayed on a new connection and nginx logs exactly what
// the client counted.
func TestH2NginxTLS(t *testing.T) {
	t.Parallel()
	for _, d := range h2Depths {
		t.Run(fmt.Sprintf("depth=%d", d), func(t *testing.T) {
			testenv.Parallel(t, testenv.Waits)
			ng := testenv.StartNginxTLS(t, testenv.NginxTLSOptions{Nginx: testenv.NginxOptions{ListenSuffix: "http2"}})
			target := brk.Target{URL: "https://" + ng.Addr + "/", Protocol: brk.HTTP2, ExpectBody: []byte("ok")}
			target.TLS.Insecure = true
			res := runBrk(t, target, shortPlan(4, d, 500*time.Millisecond))
			checkH2Exact(t, res, func(want int) int { return ng.WaitRequests(t, want, 5*time.Second) })
			t.Logf("%s; goaways %d, replayed %d, peer limit %v", describe(res), res.Phases[0].GoAwaysReceived,
				res.Phases[0].StreamsReplayed, res.Phases[0].PeerMaxStreams)
		})
	}
}

// TestH2O: h2o over TLS, both tests, at 1, 8, 32 and 100.
func TestH2O(t *testing.T) {
	t.Parallel()
	for _, d := range h2Depths {
		t.Run(fmt.Sprintf("requests/depth=%d", d), func(t *testing.T) {
			testenv.Parallel(t, testenv.Waits)
			h := testenv.StartH2O(t, nil, "")
			target := brk.Target{URL: "https://" + h.Addr + "/ok.txt", Protocol: brk.HTTP2, ExpectBody: []byte("ok")}
			target.TLS.Insecure = true
			res := runBrk(t, target, shortPlan(4, d, 500*time.Millisecond))
			if res.Verdict != brk.VerdictDone {
				b, _ := os.ReadFile(h.ErrorLog)
				t.Logf("h2o error log:\n%s", b)
			}
			checkH2Exact(t, res, func(want int) int { return h.WaitRequests(t, want, 5*time.Second) })
		})
		t.Run(fmt.Sprintf("connections/conns=%d", d), func(t *testing.T) {
			testenv.Parallel(t, testenv.Waits)
			h := testenv.StartH2O(t, nil, "")
			target := brk.Target{URL: "https://" + h.Addr + "/ok.txt", Protocol: brk.HTTP2, ExpectBody: []byte("ok")}
			target.TLS.Insecure = true
			plan := brk.Plan{Load: brk.Connections{Requests: 3}, Start: d, Max: d, Phase: time.Second, Timeout: 2 * time.Second, Accept: 100, Threads: 1}
			ctx, cancel := contextWithTimeout()
			defer cancel()
			res, err := brk.Run(ctx, target, plan, nil)
			if err != nil {
				t.Fatal(err)
			}
			checkH2Exact(t, res, func(want int) int { return h.WaitRequests(t, want, 5*time.Second) })
			checkThreePerConn(t, totalSetups(res), total(res).Attempted, d)
		})
	}
}

func contextWithTimeout() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), runTimeout)
}

// checkThreePerConn: every setup succeeded, and each connection carried 3
// requests but those the phase's end cut short (at most d connections).
func checkThreePerConn(t *testing.T, su brk.Setups, attempted uint64, d int) {
	t.Helper()
	if su.Established != su.Attempted || su.Established == 0 ||
		attempted > 3*su.Established || attempted+3*uint64(d) < 3*su.Established {
		t.Errorf("setups %+v for %d requests (3 per connection, %d concurrent)", su, attempted, d)
	}
}

// TestH2EchoUpload: --body-file with --expect-echo over h2c and h2: a
// 200 KB body goes out within the server's windows (65535 at first) and
// comes back whole.
func TestH2EchoUpload(t *testing.T) {
	body := make([]byte, 200<<10)
	for i := range body {
		body[i] = byte('a' + i%26)
	}
	for _, tlsOn := range []bool{false, true} {
		t.Run(fmt.Sprintf("tls=%v", tlsOn), func(t *testing.T) {
			f, err := bench.StartFixture(bench.FixtureConfig{TLS: tlsOn})
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			target := brk.Target{URL: f.URL("/echo"), Protocol: brk.HTTP2, Body: body, ExpectEcho: true}
			target.TLS.Insecure = tlsOn
			res := runBrk(t, target, shortPlan(2, 4, 300*time.Millisecond))
			checkH2Exact(t, res, fixtureServed(f))
		})
	}
}

// Setup failures: a server that never sends SETTINGS (setup timeout), an
// HTTP/1.1-only server spoken to with h2c (setup failed), and a TLS
// server that does not select h2 (setup failed): the run is inconclusive,
// no request is counted against the server.
func TestH2SetupFailures(t *testing.T) {
	testenv.Parallel(t, testenv.Waits)
	silent := hostile.Start(t, func(c *hostile.Conn, _ int) { <-c.Done() })
	h1only := hostile.Start(t, func(c *hostile.Conn, _ int) {
		buf := make([]byte, 4096)
		c.Raw().Read(buf)
		c.Raw().Write([]byte("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"))
	})
	ngx := testenv.StartNginxTLS(t, testenv.NginxTLSOptions{}) // no http2: ALPN offers http/1.1 only
	// A TLS server that ignores ALPN (selects nothing).
	leaf := testenv.NewCA(t).Server(t, "localhost", "127.0.0.1")
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{leaf.Cert}})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.(*tls.Conn).Handshake()
				io.Copy(io.Discard, c)
			}()
		}
	}()
	cases := []struct {
		name, url, want string
		timedOut        bool
	}{
		{"no SETTINGS", "http://" + silent.Addr() + "/", "SETTINGS did not arrive", true},
		{"HTTP/1.1 server", "http://" + h1only.Addr() + "/", "not an HTTP/2 server", false},
		{"ALPN without h2", "https://" + ngx.Addr + "/", "no application protocol", false},
		{"ALPN ignored", "https://" + ln.Addr().String() + "/", "did not select h2", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			target := brk.Target{URL: c.url, Protocol: brk.HTTP2}
			target.TLS.Insecure = strings.HasPrefix(c.url, "https")
			res := runBrk(t, target, h2Plan(1, 1, 300*time.Millisecond, 200*time.Millisecond))
			checkAccounting(t, res)
			su := totalSetups(res)
			if res.Verdict != brk.VerdictInconclusive || !strings.Contains(res.Reason, c.want) || su.Established != 0 ||
				c.timedOut != (su.TimedOut > 0) {
				t.Fatalf("verdict %s (%s), setups %+v", res.Verdict, res.Reason, su)
			}
		})
	}
}

// TestH2OSearchStreamCap: h2o admits 100 streams a connection
// (http2-max-concurrent-requests-per-connection's default). The search
// over 2 connections stops growing at the 200 its SETTINGS allow and ends
// done there, saying so, or broken below it; it never runs a level the
// server's limit would leave unfulfilled.
func TestH2OSearchStreamCap(t *testing.T) {
	testenv.Parallel(t, testenv.Waits)
	h := testenv.StartH2O(t, nil, "")
	target := brk.Target{URL: "https://" + h.Addr + "/ok.txt", Protocol: brk.HTTP2, ExpectBody: []byte("ok")}
	target.TLS.Insecure = true
	// 1 s phases: phase 0 includes the TLS setups, which take hundreds of
	// milliseconds under -race on a loaded machine.
	plan := brk.Plan{Conns: 2, Start: 25, Search: &brk.Search{Growth: 2}, Phase: time.Second,
		Timeout: 2 * time.Second, Budget: 30 * time.Second, Accept: 99.9, Threads: 1}
	res := runBrk(t, target, plan)
	t.Logf("%s", describe(res))
	for _, p := range res.Phases {
		if p.Level > 200 {
			t.Errorf("phase %d at %d concurrent requests, past the server's 2 × 100 streams", p.Index, p.Level)
		}
	}
	at := func(p *int) int {
		if p == nil {
			return -1
		}
		return *p
	}
	held, broke := at(res.LastAccepted), at(res.FirstRejected)
	switch {
	case res.Verdict == brk.VerdictDone:
		if held != 200 || !strings.Contains(res.Reason, "the server's stream limit capped the search at 200") ||
			!strings.Contains(res.Reason, "more Plan.Conns goes further") {
			t.Fatalf("done at %d: %s", held, res.Reason)
		}
	case res.Verdict == brk.VerdictBroken && broke >= 0 && broke <= 200:
		t.Logf("broken below the cap: %d–%d", held, broke)
	default:
		t.Fatalf("verdict %s (%d–%d): %s", res.Verdict, held, broke, res.Reason)
	}
}

// protocolOf is HTTP/2 when h2, else HTTP/1.1: a test case's protocol.
func protocolOf(h2 bool) brk.Protocol {
	if h2 {
		return brk.HTTP2
	}
	return brk.HTTP1
}
