package brk

import (
	"context"

	"github.com/brk-bench/brk/internal/enginerun"
)

// ABResult is an A/B run: one plan against two targets, phases taken in
// turns (A0, B0, A1, B1, …) so that both see the same machine conditions,
// each ramp judged on its own.
type ABResult struct {
	A *Result `json:"a"`
	B *Result `json:"b"`
}

// ExitCode is 0 only when both ramps are Done; otherwise the most serious
// of the two: interrupted (130), then inconclusive (3), then broken (1).
func (r *ABResult) ExitCode() int {
	a, b := r.A.Verdict.ExitCode(), r.B.Verdict.ExitCode()
	for _, code := range []int{130, 3, 1} {
		if a == code || b == code {
			return code
		}
	}
	return 0
}

// AB runs the test of p.Load (as Run runs it) against a and b in turns,
// one phase each, until both ramps have ended; a ramp that ends first
// leaves the other to go on alone. obsA and obsB observe each side. The
// error is non-nil only for a bad plan or target (*PlanError), found
// before any traffic.
func AB(ctx context.Context, a, b Target, p Plan, obsA, obsB Observer) (*ABResult, error) {
	return runAB(ctx, "", a, b, p, obsA, obsB)
}

// RunAB runs the test of mode m with plan p against a and b in turns, as
// AB does (m "": the test of p.Load); a plan whose Load is another test is
// refused.
//
// Deprecated: set Plan.Load to the test's value and call AB. RunAB stays
// for one release.
func RunAB(ctx context.Context, m Mode, a, b Target, p Plan, obsA, obsB Observer) (*ABResult, error) {
	return runAB(ctx, m, a, b, p, obsA, obsB)
}

// runAB is AB of test m ("": p.Load's).
func runAB(ctx context.Context, m Mode, a, b Target, p Plan, obsA, obsB Observer) (*ABResult, error) {
	if p.Shard != nil {
		return nil, refuse("%s: an A/B run cannot be sharded", fShard)
	}
	for _, t := range []Target{a, b} {
		if _, _, _, err := check(&t, p, m); err != nil {
			return nil, err
		}
	}
	ra, resA, err := open(ctx, a, p, obsA, m)
	if err != nil {
		return nil, err
	}
	if ra != nil {
		defer ra.close()
	}
	rb, resB, err := open(ctx, b, p, obsB, m)
	if err != nil {
		return nil, err
	}
	if rb != nil {
		defer rb.close()
	}
	enginerun.Turns(ctx, engineRun(ra), engineRun(rb))
	if ra != nil {
		resA = ra.finish()
	}
	if rb != nil {
		resB = rb.finish()
	}
	return &ABResult{A: resA, B: resB}, nil
}

// engineRun is r's engine run (nil: r ended before its first phase).
func engineRun(r *running) *enginerun.Run {
	if r == nil {
		return nil
	}
	return r.run
}
