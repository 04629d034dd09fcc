package e2e

import (
	"testing"
	"time"

	"github.com/brk-bench/brk"
	"github.com/brk-bench/brk/bench"
	"github.com/brk-bench/brk/internal/testenv"
)

// TestStatusCodeBreakdown: every phase counts its responses per status
// code, so a status failure says which status it was.
func TestStatusCodeBreakdown(t *testing.T) {
	testenv.Parallel(t, testenv.Busy)
	fx := startFixtureT(t, bench.FixtureConfig{})
	res := runBrk(t, brk.Target{URL: fx.URL("/missing")}, shortPlan(2, 1, 300*time.Millisecond))
	checkAccounting(t, res)
	for _, ph := range res.Phases {
		if ph.Counts.Status == 0 || len(ph.StatusCodes) != 1 || ph.StatusCodes["404"] != ph.Counts.Status {
			t.Fatalf("phase %d: counts %+v, status codes %v", ph.Index, ph.Counts, ph.StatusCodes)
		}
	}
	res = runBrk(t, brk.Target{URL: fx.URL("/plain")}, shortPlan(2, 1, 300*time.Millisecond))
	if sc := res.Phases[0].StatusCodes; sc["200"] != res.Phases[0].Counts.Succeeded || len(sc) != 1 {
		t.Fatalf("status codes %v, counts %+v", sc, res.Phases[0].Counts)
	}
}

// TestBodySample: a body failure shows what the server sent.
func TestBodySample(t *testing.T) {
	testenv.Parallel(t, testenv.Busy)
	fx := startFixtureT(t, bench.FixtureConfig{})
	res := runBrk(t, brk.Target{URL: fx.URL("/hello"), ExpectBody: []byte("ok")}, shortPlan(2, 1, 300*time.Millisecond))
	ph := res.Phases[0]
	if ph.Counts.Body == 0 || len(ph.BodySamples) == 0 || ph.BodySamples[0] != "Hello, World!" {
		t.Fatalf("counts %+v, body samples %q", ph.Counts, ph.BodySamples)
	}
}
