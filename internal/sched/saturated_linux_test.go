package sched

import (
	"strconv"
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

// TestConnectTimeoutsAreTiming: connects that time out (a server whose
// accept queue is full drops the SYNs) are timeouts as a response's are:
// on saturated workers a phase that failed only on them and on response
// timeouts reads client-bound, since a saturated client sees a
// connection complete as late as a response; the same counts on workers
// with slack are the server's break. Two flagless rate runs against one
// nginx split on this: 64 connects timed out among 856,808 timeouts made
// one phase the server's break, and the other run's phase, timeouts only,
// the client's.
func TestConnectTimeoutsAreTiming(t *testing.T) {
	m, addr := h1Phase(t, queueOfOne(t), 4, 100*time.Millisecond, judge.PhaseSpec{Level: 4, Duration: 500 * time.Millisecond})
	s := m.Stats
	f := &s.Counts.Failed
	t.Logf("counts %+v, setups %+v", s.Counts, s.Setups)
	if f[metrics.ConnectTimeout] == 0 || s.Counts.Succeeded != 0 ||
		f[metrics.Timeout]+f[metrics.ConnectTimeout] != s.Counts.FailedTotal() {
		t.Fatalf("failures %+v: want connects that timed out (and response timeouts) only", f)
	}
	plan := judge.Plan{Mode: judge.Requests, Conns: 4, Accept: judge.Accept{Num: 9999, Den: 10000}, Addr: addr}
	m.WorkerBusy, m.WorkerBusyOK = 0.95, true
	if j := judge.Judge(m, plan, 1, 4); j.Verdict != judge.Inconclusive || !j.ClientBound {
		t.Fatalf("connects that timed out on saturated workers judged %+v, want client-bound", j)
	}
	m.WorkerBusy = 0.5
	if j := judge.Judge(m, plan, 1, 4); j.Verdict != judge.Broken {
		t.Fatalf("connects that timed out on workers with slack judged %+v, want broken", j)
	}
}
