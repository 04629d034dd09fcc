package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/brk-bench/brk"
	"github.com/brk-bench/brk/bench"
)

// TestRateOverHTTP2: the rate test over h2c against the fixture: every
// scheduled arrival is written on its schedule and answered, the streams
// of a connection carrying several at once.
func TestRateOverHTTP2(t *testing.T) {
	fx := startFixtureT(t, bench.FixtureConfig{Capacity: 64, Service: 5 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	res, err := brk.Run(ctx, brk.Target{URL: fx.URL("/plain"), ExpectBody: []byte("ok"), Protocol: brk.HTTP2},
		brk.Plan{Load: brk.Rate{Conns: 2}, Start: 400, Max: 400, Phase: 500 * time.Millisecond, Timeout: time.Second, Threads: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkAccounting(t, res)
	skipOnNoise(t, res)
	if res.Verdict != brk.VerdictDone || res.Protocol != "h2" || res.RateDepth != brk.HTTP2.DefaultRateDepth() {
		t.Fatalf("verdict %s (%s), protocol %s, rate depth %d", res.Verdict, res.Reason, res.Protocol, res.RateDepth)
	}
	ph := res.Phases[0]
	if ph.Rate == nil || ph.Rate.Scheduled == 0 || ph.Rate.Scheduled != ph.Rate.Written+ph.Rate.ExpiredUnsent || ph.Counts.Succeeded != ph.Rate.Written {
		t.Fatalf("rate %+v, counts %+v", ph.Rate, ph.Counts)
	}
}
