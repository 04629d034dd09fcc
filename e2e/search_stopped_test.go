package e2e

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"

	"github.com/brk-bench/brk"
	"github.com/brk-bench/brk/internal/hostile"
	"github.com/brk-bench/brk/internal/testenv"
)

// stormThenLimit is the server of TestSearchStoppedAfterBreak's view of
// the search: the level of the phase running, and whether a phase at the
// storm's level has ended.
type stormThenLimit struct {
	brk.NopObserver
	level   atomic.Int64
	stormed atomic.Bool
}

func (o *stormThenLimit) PhaseStarted(p brk.PhaseStart) { o.level.Store(int64(p.Level)) }

func (o *stormThenLimit) PhaseFinished(s *brk.PhaseStats) {
	if s.Level >= 4 {
		o.stormed.Store(true)
	}
}

// TestSearchStoppedAfterBreak: a search whose phase after a rejection
// cannot be judged ends by that rejection's evidence, not by the
// rejection alone. An HTTP/2 server answers 503 to every request of the
// first phase at 4 concurrent requests or more; from then on it lowers
// its SETTINGS_MAX_CONCURRENT_STREAMS to 1, so the next phase (a repeat
// of 4 or a bisection at 3, on one connection) cannot hold its depth and
// is inconclusive (target unfulfilled). One rejection, never confirmed, is no break: the run
// ends inconclusive with the pair it had and says why the search stopped
// (the judge's stoppedAfterBreak, internal/judge/levels.go).
func TestSearchStoppedAfterBreak(t *testing.T) {
	testenv.Parallel(t, testenv.Busy)
	var st hostile.H2Stats
	obs := &stormThenLimit{}
	var mu sync.Mutex
	lowered := map[*hostile.H2Conn]bool{} // the connections told the lower limit
	_, target := h2Hostile(t, &st, []http2.Setting{{ID: http2.SettingMaxConcurrentStreams, Val: 100}}, func(h *hostile.H2Conn, ev hostile.H2Event) bool {
		if ev.Kind != hostile.H2Request {
			return true
		}
		status := 200
		mu.Lock()
		lower := obs.stormed.Load() && !lowered[h]
		lowered[h] = lowered[h] || lower
		mu.Unlock()
		switch {
		case lower:
			if h.Fr.WriteSettings(http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: 1}) != nil {
				return false
			}
		case !obs.stormed.Load() && obs.level.Load() >= 4:
			status = 503
		}
		// A millisecond per response: at most 1,000 requests/s, so
		// that the test does not starve the rate tests' in-process
		// clients beside it (flat out, under -race, it put
		// TestRateStallIsLatency's client 2.5 s behind its schedule).
		time.Sleep(time.Millisecond)
		return h.Respond(ev.Stream, status, "ok") == nil
	})
	target.ExpectBody = []byte("ok")
	plan := brk.Plan{
		Load: brk.Requests{Conns: 1}, Ramp: brk.Search{}, Start: 1, Max: 64,
		Phase: 300 * time.Millisecond, Timeout: time.Second, Accept: 99.99, Threads: 1,
	}
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	res, err := brk.Run(ctx, target, plan, obs)
	if err != nil {
		t.Fatal(err)
	}
	checkAccounting(t, res)
	t.Logf("%s", describe(res))
	var levels []int
	for _, p := range res.Phases {
		levels = append(levels, p.Level)
	}
	if len(levels) != 4 || levels[0] != 1 || levels[1] != 2 || levels[2] != 4 || levels[3] < 3 || levels[3] > 4 {
		t.Fatalf("levels %v: want 1, 2, 4, then a repeat of 4 or a bisection at 3", levels)
	}
	last := res.Phases[3]
	// The lowered limit came before the phase held its depth ("never
	// held 3 requests outstanding (the server's
	// SETTINGS_MAX_CONCURRENT_STREAMS is 1)") or after ("… fell to 1").
	if !last.Inconclusive || !strings.Contains(last.Reason, "target unfulfilled") || !strings.Contains(last.Reason, "SETTINGS_MAX_CONCURRENT_STREAMS") {
		t.Fatalf("the phase after the storm: inconclusive %v (%s), want inconclusive on the lowered stream limit", last.Inconclusive, last.Reason)
	}
	if res.Verdict != brk.VerdictInconclusive || !strings.Contains(res.Reason, "the search stopped at ") ||
		!strings.Contains(res.Reason, "before it confirmed its bracket (held 2, broke at 4)") {
		t.Fatalf("verdict %s (%s): want inconclusive, the unconfirmed pair 2/4 and why the search stopped", res.Verdict, res.Reason)
	}
	if res.LastAccepted == nil || *res.LastAccepted != 2 || res.FirstRejected == nil || *res.FirstRejected != 4 {
		t.Errorf("bracket %v/%v, want the pair it had: 2/4", res.LastAccepted, res.FirstRejected)
	}
}
