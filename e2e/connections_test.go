package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brk-bench/brk"
	"github.com/brk-bench/brk/internal/hostile"
	"github.com/brk-bench/brk/internal/testenv"
)

func runConn(t *testing.T, target brk.Target, plan brk.Plan) *brk.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := brk.Run(ctx, target, plan, nil)
	if err != nil {
		t.Fatalf("brk.Run: %v", err)
	}
	checkAccounting(t, res)
	return res
}

// TestConnectionsAgainstNginx: the connections test against a real nginx,
// one and ten requests per connection: every request nginx logged is one
// brk attempted, every connection was set up apart, and the levels count
// connections.
func TestConnectionsAgainstNginx(t *testing.T) {
	for _, per := range []int{1, 10} {
		t.Run(fmt.Sprintf("requests=%d", per), func(t *testing.T) {
			ngx := testenv.StartNginx(t, testenv.NginxOptions{})
			res := runConn(t, brk.Target{URL: "http://" + ngx.Addr + "/"},
				brk.Plan{Load: brk.Connections{Requests: per}, Start: 4, Pace: 4, Max: 8, Phase: 400 * time.Millisecond,
					Timeout: time.Second, Threads: 1, Repeat: 1}) // two phases, whatever the box's load
			if res.Verdict != brk.VerdictDone || res.Test != "connections" {
				t.Fatalf("verdict %s (%s), test %s", res.Verdict, res.Reason, res.Test)
			}
			if *res.LastAccepted != 8 || len(res.Phases) != 2 || res.Phases[0].Level != 4 || res.Phases[1].Level != 8 {
				t.Fatalf("levels: last accepted %d, %s", *res.LastAccepted, describe(res))
			}
			c, s := total(res), totalSetups(res)
			if c.Attempted == 0 || c.Succeeded != c.Attempted {
				t.Fatalf("requests %+v", c)
			}
			if s.Established == 0 || s.Established != s.Attempted {
				t.Fatalf("setups %+v", s)
			}
			// Each connection carries at most `per` requests; only the
			// connections cut by a phase end carry fewer.
			if c.Attempted > s.Established*uint64(per) || c.Attempted < (s.Established-16)*uint64(per) {
				t.Fatalf("%d requests over %d connections of %d requests", c.Attempted, s.Established, per)
			}
			if got := ngx.WaitRequests(t, int(c.Attempted), 3*time.Second); got != int(c.Attempted) {
				t.Fatalf("nginx logged %d requests, brk attempted %d", got, c.Attempted)
			}
		})
	}
}

// TestConnectionsSetupFailures: nothing listening makes the connections
// test inconclusive (no setup ever succeeded); a server that accepts but
// never answers is a request timeout, and its setups are established:
// a first phase without a byte from the server, inconclusive too.
func TestConnectionsSetupFailures(t *testing.T) {
	testenv.Parallel(t, testenv.Waits)
	res := runConn(t, brk.Target{URL: "http://" + closedAddr(t) + "/"},
		brk.Plan{Load: brk.Connections{}, Start: 2, Phase: 2 * time.Second, Timeout: 200 * time.Millisecond, Threads: 1})
	if res.Verdict != brk.VerdictInconclusive || !strings.Contains(res.Reason, "refused") {
		t.Fatalf("nothing listening: %s (%s)", res.Verdict, res.Reason)
	}
	if s := totalSetups(res); s.Failed == 0 || s.Established != 0 {
		t.Fatalf("setups %+v", s)
	}
	// Each refused setup ended, failed, in a span of its phase's timeline
	// (the connections test's interval reads them there).
	for _, p := range res.Phases {
		var setups, failed uint64
		for _, pt := range p.Timeline.Points {
			setups += pt.Setups
			failed += pt.SetupsFailed
		}
		if failed == 0 || setups != failed || failed != p.Setups.Failed+p.Setups.TimedOut {
			t.Errorf("phase %d: the timeline counts %d setups, %d failed; the phase %+v", p.Index, setups, failed, p.Setups)
		}
	}

	srv := hostile.Start(t, hostile.Never())
	res = runConn(t, hostileTarget(srv), brk.Plan{Load: brk.Connections{}, Start: 2, Max: 2, Phase: 300 * time.Millisecond,
		Timeout: 100 * time.Millisecond, Threads: 1})
	if res.Verdict != brk.VerdictInconclusive || !strings.Contains(res.Reason, "not a byte came back") {
		t.Fatalf("never answers: %s (%s)", res.Verdict, res.Reason)
	}
	c := total(res)
	if c.Timeout == 0 || c.Succeeded != 0 || totalSetups(res).Established == 0 {
		t.Fatalf("never answers: %+v setups %+v", c, totalSetups(res))
	}
}

// TestConnectionsWaitForServerClose: after the last response the client
// waits for the server's FIN; a server that closes gives clean successes
// and one connection per `--requests` requests.
func TestConnectionsWaitForServerClose(t *testing.T) {
	srv := hostile.Start(t, func(c *hostile.Conn, _ int) {
		for {
			req, err := c.ReadRequest()
			if err != nil {
				return
			}
			if strings.EqualFold(req.Header.Get("Connection"), "close") {
				c.Respond([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"))
				c.Close()
				return
			}
			c.Respond([]byte(hostile.OKResponse))
		}
	})
	res := runConn(t, hostileTarget(srv), brk.Plan{Load: brk.Connections{Requests: 3}, Start: 2, Max: 2,
		Phase: 300 * time.Millisecond, Timeout: 500 * time.Millisecond, Threads: 1})
	if res.Verdict != brk.VerdictDone {
		t.Fatalf("%s (%s)", res.Verdict, res.Reason)
	}
	st := serverStats(srv, total(res).Succeeded)
	if uint64(st.Responses) != total(res).Succeeded || uint64(st.Conns) != totalSetups(res).Established {
		t.Fatalf("server %+v, client %+v setups %+v", st, total(res), totalSetups(res))
	}
}

// countingServer answers each connection's requests (closing after the
// one that asks it to) and counts the connections on which it read no
// byte at all: a client that opened them and closed them unused
// (haproxy logs each as a 400 <BADREQ>).
type countingServer struct {
	ln     net.Listener
	wg     sync.WaitGroup
	conns  atomic.Int64
	unused atomic.Int64
}

func startCountingServer(t *testing.T) *countingServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &countingServer{ln: ln}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.conns.Add(1)
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer c.Close()
				s.serve(c)
			}()
		}
	}()
	t.Cleanup(s.stop)
	return s
}

func (s *countingServer) serve(c net.Conn) {
	r := bufio.NewReader(c)
	for n := 0; ; n++ {
		req, err := http.ReadRequest(r)
		if err != nil {
			if n == 0 {
				s.unused.Add(1)
			}
			return
		}
		resp := "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
		if req.Close {
			resp = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"
		}
		if _, err := io.WriteString(c, resp); err != nil || req.Close {
			return
		}
	}
}

// stop closes the listener and waits for every connection to end.
func (s *countingServer) stop() {
	s.ln.Close()
	s.wg.Wait()
}

// TestConnectionsNeverUnused: each connection of the connections test
// carries exactly --requests requests, so none is set up and closed
// unused. Before, a setup started just before admission ended was
// established after it, carried nothing, and was closed at the run's end.
func TestConnectionsNeverUnused(t *testing.T) {
	t.Parallel()
	for _, per := range []int{1, 3} {
		t.Run(fmt.Sprintf("requests=%d", per), func(t *testing.T) {
			testenv.Parallel(t, testenv.Waits)
			var unused, conns, setups, requests int64
			for run := 0; run < 3; run++ {
				srv := startCountingServer(t)
				res := runConn(t, brk.Target{URL: "http://" + srv.ln.Addr().String() + "/"},
					brk.Plan{Load: brk.Connections{Requests: per}, Start: 50, Max: 50, Phase: 300 * time.Millisecond,
						Timeout: time.Second, Threads: 1})
				srv.stop()
				if res.Verdict != brk.VerdictDone {
					t.Fatalf("run %d: %s", run, describe(res))
				}
				s, c := totalSetups(res), total(res)
				if c.Attempted != s.Established*uint64(per) {
					t.Errorf("run %d: %d requests over %d connections: not %d each", run, c.Attempted, s.Established, per)
				}
				unused += srv.unused.Load()
				conns += srv.conns.Load()
				setups += int64(s.Established)
				requests += int64(c.Attempted)
			}
			t.Logf("3 runs: server saw %d connections (%d unused), client %d setups, %d requests", conns, unused, setups, requests)
			if unused != 0 || conns != setups {
				t.Fatalf("%d of %d connections carried no request (client: %d setups)", unused, conns, setups)
			}
		})
	}
}
