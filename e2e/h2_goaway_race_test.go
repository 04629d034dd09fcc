package e2e

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"

	"github.com/brk-bench/brk"
	"github.com/brk-bench/brk/internal/hostile"
	"github.com/brk-bench/brk/internal/testenv"
)

// A server that sends GOAWAY after its 20th response on a connection (the
// last id: the highest stream it has read), answers the streams at or
// below it (5 ms each, concurrently), ignores those above and closes once
// it has answered: every stream above the last id is replayed, none is a
// transport failure, in each of three runs (issue 21 item 6 saw 0 to 6 of
// ~1,470 per run).
func TestH2GoAwayEvery20Replayed(t *testing.T) {
	testenv.Parallel(t, testenv.Waits)
	for run := 0; run < 3; run++ {
		var st hostile.H2Stats
		var ignored, goaways atomic.Int64
		srv := hostile.Start(t, func(c *hostile.Conn, _ int) {
			h, err := hostile.NewH2(c, &st)
			if err != nil {
				return
			}
			mu := &h.Mu // Respond and GOAWAY from the responders, as Next reads
			var wg sync.WaitGroup
			n, last, high := 0, uint32(0), uint32(0)
			owed := 0 // streams at or below last not yet answered
			for {
				ev, err := h.Next()
				if err != nil {
					break
				}
				if ev.Kind != hostile.H2Request {
					continue
				}
				mu.Lock()
				if last != 0 && ev.Stream > last {
					ignored.Add(1)
					h.Unanswered--
					mu.Unlock()
					continue
				}
				owed++
				high = ev.Stream
				mu.Unlock()
				wg.Add(1)
				go func(id uint32) {
					defer wg.Done()
					time.Sleep(5 * time.Millisecond)
					mu.Lock()
					defer mu.Unlock()
					h.Respond(id, 200, "ok")
					if n++; n == 20 {
						last = high
						goaways.Add(1)
						h.Fr.WriteGoAway(last, http2.ErrCodeNo, nil)
					}
					if owed--; owed == 0 && last != 0 {
						c.Raw().Close()
					}
				}(ev.Stream)
			}
			wg.Wait()
		})
		target := brk.Target{URL: "http://" + srv.Addr() + "/", Protocol: brk.HTTP2, ExpectBody: []byte("ok")}
		plan := brk.Plan{Conns: 2, Start: 4, Max: 4, Phase: time.Second, Timeout: time.Second, Accept: 100, Threads: 1}
		res := runBrk(t, target, plan)
		checkAccounting(t, res)
		tc, p := total(res), res.Phases[0]
		t.Logf("run %d: %s; goaways %d ignored %d replayed %d", run, describe(res), goaways.Load(), ignored.Load(), p.StreamsReplayed)
		if tc.Transport != 0 || res.Verdict != brk.VerdictDone {
			t.Errorf("run %d: %d transport failures of %d: %s", run, tc.Transport, tc.Attempted, describe(res))
		}
	}
}

// A server that refuses a stream (REFUSED_STREAM) and then sends GOAWAY:
// the streams above the GOAWAY's last id are replayed, not lost, though
// the refusal had already stopped new streams on the connection (they
// were lost as transport failures when the server closed: the refusal
// had made the session ignore the GOAWAY). The server refuses its 10th
// stream, sends GOAWAY with its 11th as the last id and closes 20 ms
// later.
func TestH2RefusedThenGoAwayReplayed(t *testing.T) {
	testenv.Parallel(t, testenv.Busy)
	var st hostile.H2Stats
	var ignored atomic.Int64
	srv := hostile.Start(t, func(c *hostile.Conn, _ int) {
		h, err := hostile.NewH2(c, &st)
		if err != nil {
			return
		}
		n, last := 0, uint32(0)
		for {
			ev, err := h.Next()
			if err != nil {
				return
			}
			if ev.Kind != hostile.H2Request {
				continue
			}
			switch n++; {
			case last != 0:
				ignored.Add(1) // above the last id: not processed
				h.Unanswered--
			case n == 10:
				h.Unanswered--
				h.Fr.WriteRSTStream(ev.Stream, http2.ErrCodeRefusedStream)
			case n == 11:
				last = ev.Stream
				h.Fr.WriteGoAway(last, http2.ErrCodeNo, nil)
				if h.Respond(ev.Stream, 200, "ok") != nil {
					return
				}
				// Read what the client still sends for 20 ms, then close.
				c.Raw().SetReadDeadline(time.Now().Add(20 * time.Millisecond))
			default:
				if h.Respond(ev.Stream, 200, "ok") != nil {
					return
				}
			}
		}
	})
	target := brk.Target{URL: "http://" + srv.Addr() + "/", Protocol: brk.HTTP2, ExpectBody: []byte("ok")}
	res := runBrk(t, target, h2Plan(1, 4, 300*time.Millisecond, time.Second))
	checkAccounting(t, res)
	tc := total(res)
	t.Logf("%s; ignored %d", describe(res), ignored.Load())
	if res.Verdict != brk.VerdictDone || tc.Attempted != tc.Succeeded || tc.Succeeded != uint64(st.Responses.Load()) {
		t.Fatalf("counts %+v, server answered %d: %s", tc, st.Responses.Load(), describe(res))
	}
}
