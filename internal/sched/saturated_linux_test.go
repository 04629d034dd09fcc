package sched

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/brk-bench/brk/internal/judge"
	"github.com/brk-bench/brk/internal/metrics"
)

// queueOfOne listens on 127.0.0.1 with a backlog of 0 and never
// accepts: Linux completes and queues one connection, then drops every
// SYN, so that each later connect times out (the client's retransmission
// comes after a second). It returns the address. Unlike
// hostile.FullBacklog, whose queue is full before the test so that no
// setup completes (setup impossible), the one connection here carries a
// request that times out beside the connects.
func queueOfOne(t *testing.T) string {
	t.Helper()
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := unix.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	in, ok := sa.(*unix.SockaddrInet4)
	if !ok {
		t.Fatalf("getsockname: %T", sa)
	}
	return "127.0.0.1:" + strconv.Itoa(in.Port)
}

// TestConnectTimeoutsAreTiming: in the requests test, connects that time
// out (a server whose accept queue is full drops the SYNs) are timeouts as
// a response's are, and so are the requests queued behind them (at a depth
// of 2: that timeout's followers, attributed as a response timeout's
// are): on saturated workers a phase that failed only on them and on
// response timeouts reads client-bound, since there a connect follows the
// retirement of a connection whose request timed out, and a saturated
// client's timeouts retire many; the same counts on workers with slack are
// the server's break. Two flagless rate runs against one nginx split on
// this: 64 connects timed out among 856,808 timeouts made one phase the
// server's break, and the other run's phase, timeouts only, the client's.
func TestConnectTimeoutsAreTiming(t *testing.T) {
	for _, level := range []int{4, 8} { // depth 1, then 2 on 4 connections
		m, addr := h1Phase(t, queueOfOne(t), 4, 100*time.Millisecond, judge.PhaseSpec{Level: level, Duration: 500 * time.Millisecond})
		s := m.Stats
		f := &s.Counts.Failed
		t.Logf("level %d: counts %+v, setups %+v, connect timeout followers %d", level, s.Counts, s.Setups, s.ConnectTimeoutFollowers)
		followers := level > 4
		if f[metrics.ConnectTimeout] == 0 || s.Counts.Succeeded != 0 || (f[metrics.Abandoned] > 0) != followers ||
			s.ConnectTimeoutFollowers != f[metrics.Abandoned] ||
			f[metrics.Timeout]+f[metrics.ConnectTimeout]+f[metrics.Abandoned] != s.Counts.FailedTotal() {
			t.Fatalf("level %d: failures %+v, connect timeout followers %d: want connects that timed out (with followers: %v) and response timeouts only",
				level, f, s.ConnectTimeoutFollowers, followers)
		}
		plan := judge.Plan{Mode: judge.Requests, Conns: 4, Accept: judge.Accept{Num: 9999, Den: 10000}, Addr: addr}
		m.WorkerBusy, m.WorkerBusyOK = 0.95, true
		if j := judge.Judge(m, plan, 1, level); j.Verdict != judge.Inconclusive || !j.ClientBound {
			t.Fatalf("level %d: connects that timed out on saturated workers judged %+v, want client-bound", level, j)
		}
		m.WorkerBusy = 0.5
		if j := judge.Judge(m, plan, 1, level); j.Verdict != judge.Broken {
			t.Fatalf("level %d: connects that timed out on workers with slack judged %+v, want broken", level, j)
		}
	}
}

// TestConnectionsSetupTimeoutsAreTheServers: in the connections test the
// setups are the declared load, so setups that timed out break the phase
// whatever the workers' load: a saturated client offers fewer connects,
// not more, and a SYN the server's full accept queue dropped waits the
// whole timeout however busy the client is.
func TestConnectionsSetupTimeoutsAreTheServers(t *testing.T) {
	m, addr := h1PhaseOf(t, queueOfOne(t), 4, 100*time.Millisecond, judge.PhaseSpec{Level: 4, Duration: 500 * time.Millisecond},
		func(c *Config) { c.Load = ConnectionsLoad{PerConn: 1} })
	s := m.Stats
	t.Logf("counts %+v, setups %+v", s.Counts, s.Setups)
	if s.Setups.TimedOut == 0 || s.Setups.Failed != 0 {
		t.Fatalf("setups %+v: want some timed out, none refused", s.Setups)
	}
	plan := judge.Plan{Mode: judge.Connections, Accept: judge.Accept{Num: 9999, Den: 10000}, Addr: addr}
	for _, busy := range []float64{0.95, 0.5} {
		m.WorkerBusy, m.WorkerBusyOK = busy, true
		if j := judge.Judge(m, plan, 1, 4); j.Verdict != judge.Broken || !strings.HasPrefix(j.Reason, "setups: ") {
			t.Fatalf("setups that timed out on workers %.0f %% busy judged %+v, want broken by the setups", 100*busy, j)
		}
	}
}
