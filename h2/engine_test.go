package h2

import (
	"context"
	"testing"
	"time"

	"brk/conn"
	"brk/internal/hostile"
	"brk/metrics"
	"brk/sched"
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
	m, err := e.RunPhase(context.Background(), sched.PhaseSpec{Depth: 8, Duration: 300 * time.Millisecond})
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
