package sched

import (
	"bytes"
	"context"
	"net"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/brk-bench/brk/internal/conn"
	"github.com/brk-bench/brk/internal/exchange"
	"github.com/brk-bench/brk/internal/h1"
	"github.com/brk-bench/brk/internal/judge"
	"github.com/brk-bench/brk/internal/uring"
)

const (
	cycleRequest  = "GET /plain HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: brk\r\n\r\n"
	cycleResponse = "HTTP/1.1 200 OK\r\nServer: t\r\nContent-Length: 2\r\nContent-Type: text/plain\r\n\r\nok"
)

// responder answers every request on each connection with cycleResponse,
// allocating nothing in steady state, so that allocation counts over a
// phase are the client's.
func responder(tb testing.TB) (conn.Addr, func()) {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				close(done)
				return
			}
			go serveCycle(c)
		}
	}()
	addrs, err := conn.Resolve(ln.Addr().String())
	if err != nil {
		tb.Fatal(err)
	}
	return addrs[0], func() { ln.Close(); <-done }
}

func serveCycle(c net.Conn) {
	defer c.Close()
	in := make([]byte, 64<<10)
	out := bytes.Repeat([]byte(cycleResponse), 1024)
	var carry int // bytes of a partial request terminator already seen
	end := []byte("\r\n\r\n")
	for {
		n, err := c.Read(in)
		if err != nil {
			return
		}
		// Count request ends, including one split across reads.
		reqs := 0
		b := in[:n]
		for _, ch := range b {
			if ch == end[carry] {
				carry++
				if carry == 4 {
					reqs++
					carry = 0
				}
			} else if ch == '\r' {
				carry = 1
			} else {
				carry = 0
			}
		}
		for reqs > 0 {
			k := reqs
			if k > 1024 {
				k = 1024
			}
			if _, err := c.Write(out[:k*len(cycleResponse)]); err != nil {
				return
			}
			reqs -= k
		}
	}
}

func cycleEngine(tb testing.TB, addr conn.Addr, conns int, io IO) *Engine {
	tb.Helper()
	tpl, err := h1.NewTemplate(exchange.Request{Host: "127.0.0.1", Target: "/plain"}, []byte("ok"), true)
	if err != nil {
		tb.Fatal(err)
	}
	e, err := Start(Config{
		IO: io, Threads: 1, Conns: conns, Addr: addr, Replay: true, Timeout: 5 * time.Second,
		NewSession: func() Session { return h1.NewSession(tpl) },
	})
	if err != nil {
		tb.Fatal(err)
	}
	return e
}

// runCycle runs one phase and returns responses and the process's heap
// allocations during it.
func runCycle(tb testing.TB, e *Engine, depth int, d time.Duration) (responses uint64, mallocs uint64) {
	tb.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	run, err := e.RunPhase(context.Background(), judge.PhaseSpec{Level: depth * e.Conns(), Duration: d})
	runtime.ReadMemStats(&after)
	if err != nil {
		tb.Fatal(err)
	}
	c := run.Stats.Counts
	if c.Succeeded != c.Attempted || c.Attempted == 0 {
		tb.Fatalf("phase: %d of %d succeeded (%+v)", c.Succeeded, c.Attempted, c.Failed)
	}
	return c.Succeeded, after.Mallocs - before.Mallocs
}

// Bounds of TestNoAllocationPerRequest.
const (
	// phaseAllocBound is what one phase may allocate whatever its length:
	// the controller's merge, histograms, timers (about 50 observed).
	phaseAllocBound = 500
	// minDecisive is the fewest responses a phase needs for the bound to
	// decide: one allocation per request would exceed it 20 times over.
	minDecisive = 20 * phaseAllocBound
	// wantResponses is what the test lengthens phases for: one allocation
	// per 200 requests would still exceed the bound.
	wantResponses = 100_000
	// maxCyclePhase caps the lengthening on a loaded machine.
	maxCyclePhase = 8 * time.Second
)

// TestNoAllocationPerRequest checks that a full admit → write → read →
// parse → record cycle allocates nothing per request: it counts the
// process's heap allocations over one phase and requires them to stay
// under a fixed per-phase bound while the phase carries at least 20 times
// as many responses. A loaded machine gets longer phases (up to
// maxCyclePhase) until the count is decisive; the test never skips for
// load. On each backend: epoll, and io_uring where the kernel has it.
func TestNoAllocationPerRequest(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	for _, io := range []IO{IOEpoll, IOUring} {
		t.Run(ioName(io), func(t *testing.T) {
			skipWithoutRing(t, io)
			noAllocationPerRequest(t, io)
		})
	}
}

func noAllocationPerRequest(t *testing.T, io IO) {
	addr, stop := responder(t)
	defer stop()
	e := cycleEngine(t, addr, 4, io)
	defer e.Close()
	runCycle(t, e, 4, 50*time.Millisecond) // warm up: connections, rings
	d := 300 * time.Millisecond
	var responses, allocs uint64
	for {
		responses, allocs = runCycle(t, e, 4, d)
		t.Logf("%v phase: %d responses, %d allocs (%.6f per response)", d, responses, allocs,
			float64(allocs)/float64(max(responses, 1)))
		if allocs > phaseAllocBound && responses >= minDecisive {
			t.Fatalf("%d allocations in a phase of %d responses: over the per-phase bound of %d, so requests allocate",
				allocs, responses, phaseAllocBound)
		}
		if responses >= wantResponses || d >= maxCyclePhase {
			break
		}
		// Lengthen towards wantResponses at the rate just seen.
		next := time.Duration(float64(d) * 1.5 * float64(wantResponses) / float64(max(responses, 1)))
		d = min(max(next, 2*d), maxCyclePhase)
	}
	if responses < minDecisive {
		t.Fatalf("only %d responses in a %v phase (%d needed to decide): the cycle is too slow to tell per-request from per-phase allocations",
			responses, d, minDecisive)
	}
}

// BenchmarkCycle measures the full request cycle on a loopback connection:
// ns/op and allocs/op are per response (server time included in ns/op:
// both share the machine).
func BenchmarkCycle(b *testing.B) {
	for _, io := range []IO{IOEpoll, IOUring} {
		for _, depth := range []int{1, 8} {
			b.Run(ioName(io)+"/depth"+strconv.Itoa(depth), func(b *testing.B) {
				skipWithoutRing(b, io)
				benchmarkCycle(b, io, depth)
			})
		}
	}
}

// ioName names a backend in a test's name.
func ioName(io IO) string {
	if io == IOUring {
		return "uring"
	}
	return "epoll"
}

// skipWithoutRing skips a test of the io_uring backend where the kernel
// cannot set a ring up.
func skipWithoutRing(tb testing.TB, io IO) {
	if io != IOUring {
		return
	}
	if err := uring.Available(); err != nil {
		tb.Skipf("io_uring: %v", err)
	}
}

func benchmarkCycle(b *testing.B, io IO, depth int) {
	addr, stop := responder(b)
	defer stop()
	e := cycleEngine(b, addr, 1, io)
	defer e.Close()
	runCycle(b, e, depth, 20*time.Millisecond)
	b.ResetTimer()
	d := time.Duration(b.N) * 2 * time.Microsecond
	if d < 50*time.Millisecond {
		d = 50 * time.Millisecond
	}
	start := time.Now()
	resp, allocs := runCycle(b, e, depth, d)
	el := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(el.Nanoseconds())/float64(resp), "ns/op")
	b.ReportMetric(float64(allocs)/float64(resp), "allocs/op")
	b.ReportMetric(float64(resp), "responses")
}
