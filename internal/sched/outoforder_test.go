package sched

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brk-bench/brk/internal/conn"
	"github.com/brk-bench/brk/internal/exchange"
	"github.com/brk-bench/brk/internal/judge"
	"github.com/brk-bench/brk/internal/metrics"
)

// A line protocol that multiplexes like HTTP/2 does, to prove that the
// worker drives any session that completes requests out of order, cancels
// single requests and has bytes of its own to send:
//
//	client: "REQ <token>\n", "CAN <token>\n" (cancel)
//	server: "RSP <token> <status>\n", in any order
//
// The server answers each batch of requests it reads in reverse order and
// never answers tokens ≡ 3 (mod 4): those expire and are cancelled while
// the connection stays.

type lineSession struct {
	out       []byte
	ends      []int  // offsets in out where a queued request's line ends
	in        []byte // a partial response line
	cancelled map[uint32]bool
	live      exchange.State
	last      uint32 // highest token completed so far
	outOfOrd  *atomic.Int64
}

func newLineSession(capacity int, outOfOrder *atomic.Int64) *lineSession {
	live := exchange.State{Ready: true, Capacity: capacity, Counters: exchange.Counters{MaxStreams: -1, LowestMaxStreams: -1}}
	return &lineSession{cancelled: map[uint32]bool{}, live: live, outOfOrd: outOfOrder}
}

func (s *lineSession) Reset() {
	s.out, s.ends, s.in = s.out[:0], s.ends[:0], s.in[:0]
	clear(s.cancelled)
}

func (s *lineSession) Queue(tok uint32, _ int, last bool) {
	s.out = fmt.Appendf(s.out, "REQ %d\n", tok)
	s.ends = append(s.ends, len(s.out))
}

func (s *lineSession) Output() []byte { return s.out }

func (s *lineSession) Wrote(n int) (int, bool) {
	s.out = s.out[:copy(s.out, s.out[n:])]
	written := 0
	for len(s.ends) > 0 && s.ends[0] <= n {
		written++
		s.ends = s.ends[1:]
	}
	for i := range s.ends {
		s.ends[i] -= n
	}
	return written, len(s.out) > 0
}

func (s *lineSession) Parse(b []byte, done []Completion) (int, []Completion, error) {
	s.in = append(s.in, b...)
	for {
		line, rest, ok := strings.Cut(string(s.in), "\n")
		if !ok {
			return len(b), done, nil
		}
		s.in = append(s.in[:0], rest...)
		var tok uint32
		var status int
		if _, err := fmt.Sscanf(line, "RSP %d %d", &tok, &status); err != nil {
			return len(b), done, fmt.Errorf("bad line %q", line)
		}
		if s.cancelled[tok] {
			continue // a late answer to a cancelled request
		}
		if tok < s.last {
			s.outOfOrd.Add(1)
		}
		s.last = max(s.last, tok)
		done = append(done, Completion{Token: tok, Status: status, BodyOK: true})
	}
}

func (s *lineSession) EOF(done []Completion) ([]Completion, error) { return done, nil }

func (s *lineSession) Cancel(tok uint32) bool {
	s.cancelled[tok] = true
	s.out = fmt.Appendf(s.out, "CAN %d\n", tok)
	return true
}

func (s *lineSession) Unprocessed(uint32) bool { return false }

func (s *lineSession) Farewell() []byte { return nil }

func (s *lineSession) State() *exchange.State { return &s.live }

// lineServer serves the line protocol and counts what it saw.
type lineServer struct {
	answered, ignored, cancels atomic.Int64
	maxOpen                    atomic.Int64 // most unanswered requests seen on one connection
	conns                      atomic.Int64
	ln                         net.Listener
	wg                         sync.WaitGroup
}

func startLineServer(t *testing.T) (*lineServer, conn.Addr) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &lineServer{ln: ln}
	srv.wg.Add(1)
	go func() {
		defer srv.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			srv.conns.Add(1)
			srv.wg.Add(1)
			go func() {
				defer srv.wg.Done()
				srv.serve(c)
			}()
		}
	}()
	addrs, err := conn.Resolve(ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	return srv, addrs[0]
}

func (srv *lineServer) close() {
	srv.ln.Close()
	srv.wg.Wait()
}

func (srv *lineServer) serve(c net.Conn) {
	defer c.Close()
	r := bufio.NewReader(c)
	open := int64(0) // requests read and not answered, ignored ones included until cancelled
	for {
		var batch []uint32
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			verb, arg, _ := strings.Cut(strings.TrimSpace(line), " ")
			tok, _ := strconv.ParseUint(arg, 10, 32)
			switch verb {
			case "REQ":
				open++
				if open > srv.maxOpen.Load() {
					srv.maxOpen.Store(open)
				}
				if tok%4 == 3 {
					srv.ignored.Add(1)
				} else {
					batch = append(batch, uint32(tok))
				}
			case "CAN":
				open--
				srv.cancels.Add(1)
			}
			if r.Buffered() == 0 {
				break
			}
		}
		slices.Reverse(batch)
		var out []byte
		for _, tok := range batch {
			out = fmt.Appendf(out, "RSP %d 200\n", tok)
		}
		open -= int64(len(batch))
		srv.answered.Add(int64(len(batch)))
		if _, err := c.Write(out); err != nil {
			return
		}
	}
}

func lineEngine(t *testing.T, addr conn.Addr, conns, capacity int, outOfOrder *atomic.Int64) *Engine {
	t.Helper()
	e, err := Start(Config{
		Threads: 1, Conns: conns, Addr: addr, Timeout: 150 * time.Millisecond,
		NewSession: func() Session { return newLineSession(capacity, outOfOrder) },
	})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestOutOfOrderSessionCancelsSingleRequests drives the worker with the
// line session: responses complete out of order, every fourth request
// expires and is cancelled alone, and the connections stay. The counts
// are exact against the server's.
func TestOutOfOrderSessionCancelsSingleRequests(t *testing.T) {
	goroutines := runtime.NumGoroutine()
	srv, addr := startLineServer(t)
	var outOfOrder atomic.Int64
	e := lineEngine(t, addr, 4, 1<<20, &outOfOrder)
	m, err := e.RunPhase(context.Background(), judge.PhaseSpec{Level: 8 * 4, Duration: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	e.Close()
	// The last cancellations were written at the drain's end: let the
	// server read them.
	deadline := time.Now().Add(2 * time.Second)
	for srv.cancels.Load() < srv.ignored.Load() && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	srv.close()
	c := m.Stats.Counts
	t.Logf("attempted %d succeeded %d timeout %d; server answered %d ignored %d cancels %d; %d out of order; %d connections",
		c.Attempted, c.Succeeded, c.Failed[metrics.Timeout], srv.answered.Load(), srv.ignored.Load(), srv.cancels.Load(),
		outOfOrder.Load(), srv.conns.Load())
	if c.Attempted == 0 || c.Attempted != c.Succeeded+c.Failed[metrics.Timeout] {
		t.Fatalf("outcomes beyond success and timeout: %+v", c)
	}
	if c.Succeeded != uint64(srv.answered.Load()) {
		t.Errorf("succeeded %d, server answered %d", c.Succeeded, srv.answered.Load())
	}
	if c.Failed[metrics.Timeout] != uint64(srv.ignored.Load()) || srv.cancels.Load() != srv.ignored.Load() {
		t.Errorf("timeouts %d, server ignored %d and saw %d cancellations", c.Failed[metrics.Timeout], srv.ignored.Load(), srv.cancels.Load())
	}
	if srv.ignored.Load() == 0 || outOfOrder.Load() == 0 {
		t.Errorf("the test did not exercise expiry (%d) or out-of-order completion (%d)", srv.ignored.Load(), outOfOrder.Load())
	}
	if srv.conns.Load() != 4 || m.Stats.Setups.Attempted != 4 {
		t.Errorf("connections were replaced: server accepted %d, setups %d", srv.conns.Load(), m.Stats.Setups.Attempted)
	}
	if m.Stats.ReachedOnce != 4 {
		t.Errorf("%d of 4 connections reached the depth", m.Stats.ReachedOnce)
	}
	waitGoroutines(t, goroutines)
}

// TestAdmissionRespectsSessionCapacity: a session that can carry two
// requests never has more outstanding, whatever the depth, and the phase
// reports its target unfulfilled.
func TestAdmissionRespectsSessionCapacity(t *testing.T) {
	srv, addr := startLineServer(t)
	defer srv.close()
	var outOfOrder atomic.Int64
	e := lineEngine(t, addr, 2, 2, &outOfOrder)
	defer e.Close()
	m, err := e.RunPhase(context.Background(), judge.PhaseSpec{Level: 8 * 2, Duration: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if got := srv.maxOpen.Load(); got > 2 || got == 0 {
		t.Fatalf("server saw %d outstanding requests on a connection with capacity 2", got)
	}
	j := judge.Judge(m, judge.Plan{Mode: judge.Requests, Conns: 2, Accept: judge.Accept{Num: 1, Den: 2}}, 1, 8*2)
	if j.Verdict != judge.Inconclusive || !strings.Contains(j.Reason, "target unfulfilled") {
		t.Fatalf("judgement %+v, want target unfulfilled", j)
	}
}

func waitGoroutines(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > n && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if g := runtime.NumGoroutine(); g > n {
		buf := make([]byte, 1<<16)
		t.Fatalf("%d goroutines left, %d before:\n%s", g, n, buf[:runtime.Stack(buf, true)])
	}
}
