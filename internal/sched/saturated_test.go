package sched

import (
	"context"
	"io"
	"net"
	"testing"
	"time"

	"github.com/brk-bench/brk/internal/conn"
	"github.com/brk-bench/brk/internal/exchange"
	"github.com/brk-bench/brk/internal/h1"
	"github.com/brk-bench/brk/internal/judge"
	"github.com/brk-bench/brk/internal/metrics"
)

// TestTimeoutFollowersAttributed: an HTTP/1.1 timeout abandons the
// requests pipelined behind it (admitted later, so not yet expired), and the engine attributes those to the
// timeout, so that a phase of timeouts only, on saturated workers, still
// reads client-bound — while the same counts with the followers not
// attributed (transport's followers) read as the server's.
func TestTimeoutFollowersAttributed(t *testing.T) {
	// One response per connection, then silence: the requests admitted
	// after it follow the ones that time out.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
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
				b := make([]byte, 4096)
				if _, err := c.Read(b); err != nil {
					return
				}
				// The response comes 10 ms (ten wheel ticks) after the
				// requests, so that the one admitted after it expires
				// later than they do: a follower, not a timeout of the
				// same tick (an instant answer made every request a
				// timeout in 2 of 8 runs).
				time.Sleep(10 * time.Millisecond)
				if _, err := c.Write([]byte(cycleResponse)); err != nil {
					return
				}
				io.Copy(io.Discard, c)
			}()
		}
	}()
	// 150 ms: the one response must beat its deadline even when a loaded
	// machine schedules the server late (50 ms did not, now and then, and
	// every request timed out with no follower).
	m, addr := h1Phase(t, ln.Addr().String(), 2, 150*time.Millisecond, judge.PhaseSpec{Level: 8, Duration: 600 * time.Millisecond})
	s := m.Stats
	f := &s.Counts.Failed
	t.Logf("counts %+v, timeout followers %d", s.Counts, s.TimeoutFollowers)
	if f[metrics.Timeout] == 0 || f[metrics.Abandoned] == 0 || s.Counts.Succeeded == 0 || s.TimeoutFollowers != f[metrics.Abandoned] ||
		f[metrics.Timeout]+f[metrics.Abandoned] != s.Counts.FailedTotal() {
		t.Fatalf("failures %+v, timeout followers %d: want timeouts and their followers only", f, s.TimeoutFollowers)
	}
	m.WorkerBusy, m.WorkerBusyOK = 0.95, true
	plan := judge.Plan{Mode: judge.Requests, Conns: 2, Accept: judge.Accept{Num: 9999, Den: 10000}, Addr: addr}
	if j := judge.Judge(m, plan, 1, 8); j.Verdict != judge.Inconclusive || j.Reason != "the client was saturated: workers 95 % busy — give more Plan.Threads or a bigger load box" {
		t.Fatalf("timeouts on saturated workers judged %+v, want client-bound", j)
	}
	s.TimeoutFollowers = 0 // the same abandoned requests, not attributed to a timeout
	if j := judge.Judge(m, plan, 1, 8); j.Verdict != judge.Broken {
		t.Fatalf("unattributed abandoned requests judged %+v, want broken", j)
	}
}

// h1Phase runs one HTTP/1.1 phase of spec against address with conns
// connections on one worker and the request timeout, and returns its
// measurement and the address dialled.
func h1Phase(t *testing.T, address string, conns int, timeout time.Duration, spec judge.PhaseSpec) (*judge.Measurement, string) {
	t.Helper()
	return h1PhaseOf(t, address, conns, timeout, spec, func(*Config) {})
}

// h1PhaseOf is h1Phase with the engine's configuration changed by set
// (the connections test, say) before it starts.
func h1PhaseOf(t *testing.T, address string, conns int, timeout time.Duration, spec judge.PhaseSpec, set func(*Config)) (*judge.Measurement, string) {
	t.Helper()
	addrs, err := conn.Resolve(address)
	if err != nil {
		t.Fatal(err)
	}
	tpl, err := h1.NewTemplate(exchange.Request{Host: "127.0.0.1", Target: "/plain"}, []byte("ok"), true)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{
		Threads: 1, Conns: conns, Addr: addrs[0], Replay: true, Timeout: timeout,
		NewSession: func() Session { return h1.NewSession(tpl) },
	}
	set(&cfg)
	e, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	m, err := e.RunPhase(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	return m, addrs[0].String()
}
