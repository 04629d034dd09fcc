package sched

import (
	"context"
	"net"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/brk-bench/brk/internal/conn"
	"github.com/brk-bench/brk/internal/judge"
)

// pipelineServer answers each connection's requests one at a time, 2 ms
// each, and records the most requests a connection had sent and not yet
// been answered: the pipeline depth the client kept on it.
type pipelineServer struct {
	mu   sync.Mutex
	deep []int // per connection, in accept order
}

func startPipelineServer(t *testing.T) (*pipelineServer, conn.Addr) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	s := &pipelineServer{}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.deep = append(s.deep, 0)
			i := len(s.deep) - 1
			s.mu.Unlock()
			go s.serve(c, i)
		}
	}()
	addrs, err := conn.Resolve(ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	return s, addrs[0]
}

func (s *pipelineServer) serve(c net.Conn, i int) {
	defer c.Close()
	var mu sync.Mutex
	received, answered := 0, 0
	ready := make(chan struct{}, 1<<16)
	go func() { // the answers, one at a time
		for range ready {
			time.Sleep(2 * time.Millisecond)
			mu.Lock()
			answered++ // before the write: the client may send the next request as soon as it reads this one
			mu.Unlock()
			if _, err := c.Write([]byte(cycleResponse)); err != nil {
				return
			}
		}
	}()
	defer close(ready)
	in := make([]byte, 64<<10)
	end, carry := []byte("\r\n\r\n"), 0
	for {
		n, err := c.Read(in)
		if err != nil {
			return
		}
		for _, ch := range in[:n] {
			switch {
			case ch == end[carry]:
				carry++
			case ch == '\r':
				carry = 1
			default:
				carry = 0
			}
			if carry == 4 {
				carry = 0
				mu.Lock()
				received++
				if d := received - answered; d > 0 {
					s.mu.Lock()
					s.deep[i] = max(s.deep[i], d)
					s.mu.Unlock()
				}
				mu.Unlock()
				ready <- struct{}{}
			}
		}
	}
}

// A level that is not a multiple of the connections: the server sees
// ⌈N/C⌉ pipelined requests on exactly N mod C connections and ⌊N/C⌋ on
// the others; a level below C leaves the rest idle (none sent). Each
// connection's own target decides "reached once".
func TestLevelSharedOverConnections(t *testing.T) {
	for _, c := range []struct {
		level, conns, threads int
	}{
		{20, 8, 1}, // 4 × 3 + 4 × 2
		{21, 8, 2}, // 5 × 3 + 3 × 2, over two workers
		{5, 8, 2},  // 5 × 1, 3 idle
	} {
		srv, addr := startPipelineServer(t)
		e := cycleEngine(t, addr, c.conns, IOEpoll)
		if c.threads > 1 {
			e.Close()
			var err error
			cfg := e.cfg
			cfg.Threads = c.threads
			if e, err = Start(cfg); err != nil {
				t.Fatal(err)
			}
		}
		m, err := e.RunPhase(context.Background(), judge.PhaseSpec{Level: c.level, Duration: 300 * time.Millisecond})
		e.Close()
		if err != nil {
			t.Fatal(err)
		}
		srv.mu.Lock()
		got := append([]int(nil), srv.deep...)
		srv.mu.Unlock()
		for len(got) < c.conns {
			got = append(got, 0) // connections that never sent (accepted late or not at all)
		}
		sort.Sort(sort.Reverse(sort.IntSlice(got)))
		want := make([]int, c.conns)
		for g := range want {
			want[g] = judge.DepthOf(c.level, c.conns, g)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("level %d over %d connections: the server saw pipelines %v, want %v", c.level, c.conns, got, want)
		}
		inUse := uint64(min(c.level, c.conns))
		if m.Stats.ReachedOnce != inUse {
			t.Fatalf("level %d: reached once on %d connections, want %d", c.level, m.Stats.ReachedOnce, inUse)
		}
		if j := judge.Judge(m, judge.Plan{Mode: judge.Requests, Conns: c.conns, Accept: judge.Accept{Num: 1, Den: 2}}, 1, c.level); !j.Accepted {
			t.Fatalf("level %d judged %+v", c.level, j)
		}
		t.Logf("level %d over %d connections: pipelines %v, %d responses", c.level, c.conns, got, m.Stats.Counts.Succeeded)
	}
}
