package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/brk-bench/brk"
	"github.com/brk-bench/brk/internal/hostile"
	"github.com/brk-bench/brk/internal/testenv"
)

// TestInterruptDoesNotWaitForTimeout: an interrupt lets the drain run for
// a second, then abandons what is outstanding, so a run against a server
// that never answers (or never finishes a TLS handshake) ends within
// seconds even with a 20 s --timeout; the cut-short phase is reported,
// marked interrupted and not judged.
func TestInterruptDoesNotWaitForTimeout(t *testing.T) {
	never := hostile.Start(t, hostile.Never())
	targets := map[string]brk.Target{
		"never answers":        {URL: "http://" + never.Addr() + "/"},
		"handshake never ends": {URL: "https://" + testenv.StallHandshake(t) + "/", TLS: brk.TLSOptions{Insecure: true}},
	}
	for name, target := range targets {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			time.AfterFunc(300*time.Millisecond, cancel)
			start := time.Now()
			res, err := brk.Run(ctx, target, brk.Plan{Conns: 3, Start: 2, Phase: 10 * time.Second,
				Timeout: 20 * time.Second, Threads: 1}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if took := time.Since(start); took > 5*time.Second {
				t.Fatalf("interrupted run took %s", took)
			}
			checkAccounting(t, res)
			if res.Verdict != brk.VerdictInterrupted || len(res.Phases) != 1 {
				t.Fatalf("%s", describe(res))
			}
			p := res.Phases[0]
			if !p.Interrupted || p.Accepted || p.Counts.Abandoned != 6 || p.Counts.Attempted != 6 {
				t.Fatalf("cut-short phase: interrupted %v accepted %v counts %+v", p.Interrupted, p.Accepted, p.Counts)
			}
		})
	}
}
