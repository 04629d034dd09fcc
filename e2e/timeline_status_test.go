package e2e

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brk-bench/brk"
	"github.com/brk-bench/brk/internal/testenv"
)

// TestTimelineStatusClasses: a server that answers every third request
// 503 and the others 200 shows both in the timeline: over a phase's
// points, the 2xx and 5xx counts add up to its status_codes, and every
// point's classes to its complete responses' count.
func TestTimelineStatusClasses(t *testing.T) {
	testenv.Parallel(t, testenv.Waits)
	var n atomic.Uint64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1)%3 == 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	res := runBrk(t, brk.Target{URL: srv.URL + "/"}, brk.Plan{Conns: 4, Start: 1, Max: 1,
		Phase: 1500 * time.Millisecond, Timeout: time.Second, Threads: 1, Accept: brk.AcceptAny})
	checkAccounting(t, res)
	if len(res.Phases) != 1 || res.Phases[0].Timeline == nil {
		t.Fatalf("want one phase with a timeline: %s", describe(res))
	}
	p := res.Phases[0]
	var s2, s5, all uint64
	for _, pt := range p.Timeline.Points {
		c := pt.Statuses
		s2, s5 = s2+c.S2xx, s5+c.S5xx
		all += c.S1xx + c.S2xx + c.S3xx + c.S4xx + c.S5xx + c.Other
	}
	if s2 != p.StatusCodes["200"] || s5 != p.StatusCodes["503"] || s5 == 0 || all != p.LatencyMs.Count {
		t.Errorf("timeline 2xx %d, 5xx %d, all %d; the phase's status codes %v, responses %d", s2, s5, all, p.StatusCodes, p.LatencyMs.Count)
	}
}
