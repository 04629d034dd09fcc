package h2

import (
	"context"
	"io"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/brk-bench/brk/internal/conn"
	"github.com/brk-bench/brk/internal/hostile"
	"github.com/brk-bench/brk/internal/judge"
	"github.com/brk-bench/brk/internal/metrics"
	"github.com/brk-bench/brk/internal/sched"
)

// TestEngineReplacesConnectionWhenIDsRunOut: connections start 40 stream
// ids below 2^31−1; the engine replaces each one when its ids run out
// (GOAWAY, close, a new connection), with nothing lost or counted twice.
func TestEngineReplacesConnectionWhenIDsRunOut(t *testing.T) {
	var st hostile.H2Stats
	srv := hostile.Start(t, func(c *hostile.Conn, _ int) {
		h, err := hostile.NewH2(c, &st)
		if err != nil {
			return
		}
		for {
			ev, err := h.Next()
			if err != nil {
				return
			}
			if ev.Kind == hostile.H2Request && h.Respond(ev.Stream, 200, "ok") != nil {
				return
			}
		}
	})
	tm := testTemplate(t, nil)
	tm.FirstStreamID = maxStreamID - 2*39 // 40 ids per connection
	addrs, err := conn.Resolve(srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	e, err := sched.Start(sched.Config{Threads: 1, Conns: 2, Addr: addrs[0], Timeout: time.Second,
		NewSession: func() sched.Session { return NewSession(tm) }})
	if err != nil {
		t.Fatal(err)
	}
	m, err := e.RunPhase(context.Background(), judge.PhaseSpec{Level: 8 * 2, Duration: 300 * time.Millisecond})
	e.Close()
	if err != nil {
		t.Fatal(err)
	}
	srv.Close()
	c := m.Stats.Counts
	t.Logf("attempted %d succeeded %d, setups %+v, server responses %d", c.Attempted, c.Succeeded, m.Stats.Setups, st.Responses.Load())
	if c.Attempted == 0 || c.Attempted != c.Succeeded || c.Succeeded != uint64(st.Responses.Load()) || c.Failed[metrics.Protocol] != 0 {
		t.Fatalf("counts %+v, server answered %d", c, st.Responses.Load())
	}
	if min := c.Succeeded/40 - 2; m.Stats.Setups.Established < min || st.GoAways.Load() < int64(min) {
		t.Errorf("%d setups, %d GOAWAYs from the client for %d requests at 40 per connection", m.Stats.Setups.Established, st.GoAways.Load(), c.Succeeded)
	}
}

// rawResponder answers every HEADERS+END_STREAM with a static response
// (HEADERS :status 200, content-length 2; DATA "ok"), allocating nothing
// in steady state, so that allocation counts over a phase are the
// client's.
func rawResponder(tb testing.TB) (conn.Addr, func()) {
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
			go serveRaw(c)
		}
	}()
	addrs, err := conn.Resolve(ln.Addr().String())
	if err != nil {
		tb.Fatal(err)
	}
	return addrs[0], func() { ln.Close(); <-done }
}

func serveRaw(c net.Conn) {
	defer c.Close()
	pre := make([]byte, 24)
	if _, err := io.ReadFull(c, pre); err != nil {
		return
	}
	if _, err := c.Write(settings); err != nil {
		return
	}
	resp := []byte{0, 0, byte(len(block200CL)), 1, flEndHeaders, 0, 0, 0, 0}
	resp = append(resp, block200CL...)
	resp = append(resp, 0, 0, 2, 0, flEndStream, 0, 0, 0, 0, 'o', 'k')
	hl := 9 + len(block200CL)
	buf := make([]byte, 0, 256<<10)
	out := make([]byte, 0, 256<<10)
	for {
		n, err := c.Read(buf[len(buf):cap(buf)])
		if err != nil {
			return
		}
		buf = buf[:len(buf)+n]
		b := buf
		out = out[:0]
		for len(b) >= 9 {
			l := int(b[0])<<16 | int(b[1])<<8 | int(b[2])
			if len(b) < 9+l {
				break
			}
			if b[3] == ftHeaders && b[4]&flEndStream != 0 {
				at := len(out)
				out = append(out, resp...)
				copy(out[at+5:at+9], b[5:9])
				copy(out[at+hl+5:at+hl+9], b[5:9])
			}
			b = b[9+l:]
		}
		buf = buf[:copy(buf, b)]
		if len(out) > 0 {
			if _, err := c.Write(out); err != nil {
				return
			}
		}
	}
}

// TestEngineNoAllocationPerRequest: the full cycle over HTTP/2 (admit →
// HEADERS copied from the template → write → read → frames parsed in
// place → record) allocates nothing per request: a phase of at least
// 20 000 responses stays under a fixed per-phase bound of 500.
func TestEngineNoAllocationPerRequest(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	addr, stop := rawResponder(t)
	defer stop()
	tm := testTemplate(t, nil)
	e, err := sched.Start(sched.Config{Threads: 1, Conns: 4, Addr: addr, Timeout: 5 * time.Second,
		NewSession: func() sched.Session { return NewSession(tm) }})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	phase := func(d time.Duration) (uint64, uint64) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		m, err := e.RunPhase(context.Background(), judge.PhaseSpec{Level: 8 * 4, Duration: d})
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		c := m.Stats.Counts
		if c.Attempted == 0 || c.Succeeded != c.Attempted {
			t.Fatalf("counts %+v", c)
		}
		return c.Succeeded, after.Mallocs - before.Mallocs
	}
	phase(50 * time.Millisecond) // warm up
	for d := 300 * time.Millisecond; ; d *= 2 {
		resp, allocs := phase(d)
		t.Logf("%v phase: %d responses, %d allocs (%.6f per response)", d, resp, allocs, float64(allocs)/float64(resp))
		if allocs > 500 && resp >= 10000 {
			t.Fatalf("%d allocations in a phase of %d responses: requests allocate", allocs, resp)
		}
		if resp >= 20000 || d >= 4*time.Second {
			if resp < 10000 {
				t.Fatalf("only %d responses: too slow to decide", resp)
			}
			return
		}
	}
}
