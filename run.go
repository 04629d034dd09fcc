package brk

import (
	"context"
)

// Run runs the test of p.Load (Requests, Connections or Rate; nil: the
// requests test with Plan.Conns connections, or the test a recorded plan
// ran) until a phase is rejected,
// the max is reached, the run turns inconclusive, or ctx ends. The error
// is non-nil only for a bad plan or target (*PlanError), found before any
// traffic; every other ending is in the Result.
func Run(ctx context.Context, t Target, p Plan, obs Observer) (*Result, error) {
	return run(ctx, t, p, obs, "")
}

// RunConnections runs the connections test (Connections) with the
// plan's older fields Plan.Requests and Plan.KeepAlive: each phase holds
// Start + n × Pace concurrent connections; each connection is set up
// (connect and TLS handshake), carries p.Requests requests one at a time
// (the last with Connection: close), waits for the server to close, and
// its owner opens the next one at once. A phase is accepted when both the
// established share of setups and the success share of requests meet
// Accept. Conns is not used. The error is non-nil only for a bad plan or
// target. Run with Plan.Load = Connections{...} is the same run.
//
// Deprecated: set Plan.Load to Connections{Requests, KeepAlive} and call
// Run. RunConnections stays for one release.
func RunConnections(ctx context.Context, t Target, p Plan, obs Observer) (*Result, error) {
	return RunMode(ctx, ModeConnections, t, p, obs)
}

// RunRate runs the rate test, an open model (Rate), with the plan's older
// fields Plan.Conns, RateDepth, Arrivals and Seed: Conns connections
// opened once; each phase offers Start + n × Pace requests/s on a
// schedule against the clock (p.Arrivals: uniform or poisson), whatever
// the server does. A due arrival takes a free slot (at most p.RateDepth
// outstanding per connection) or waits for one in FIFO order; its latency
// and deadline start at its scheduled instant, so a stall shows up as the
// latency it caused. A phase whose client fell behind its schedule by
// more than 1 % is unfulfilled (inconclusive), never a server verdict.
// The error is non-nil only for a bad plan or target. Run with Plan.Load
// = Rate{...} is the same run.
//
// Deprecated: set Plan.Load to Rate{Conns, Depth, Arrivals, Seed} and
// call Run. RunRate stays for one release.
func RunRate(ctx context.Context, t Target, p Plan, obs Observer) (*Result, error) {
	return RunMode(ctx, ModeRate, t, p, obs)
}

// RunMode runs the test of mode m (Run, RunConnections or RunRate); a
// plan whose Load is another test is refused.
//
// Deprecated: set Plan.Load to the test's value (Requests, Connections
// or Rate) and call Run. RunMode stays for one release.
func RunMode(ctx context.Context, m Mode, t Target, p Plan, obs Observer) (*Result, error) {
	return run(ctx, t, p, obs, m)
}

// Validate checks a target and plan as Run would, without any traffic;
// the error is a *PlanError (or CheckPlatform's).
func Validate(t Target, p Plan) error {
	_, _, _, err := check(&t, p, "")
	return err
}

// Check validates a target and plan as RunMode would for mode m, without
// any traffic; the error is a *PlanError (or CheckPlatform's). Validate
// is the same check of the test of p.Load.
//
// Deprecated: set Plan.Load to the test's value and call Validate. Check
// stays for one release.
func Check(t Target, p Plan, m Mode) error {
	_, _, _, err := check(&t, p, m)
	return err
}

// check validates t and p for test want ("": p.Load's, requests for a
// nil Load) and prepares them: the prepared run, the plan as the engine
// reads it (the Load's settings in the older fields, defaults filled in)
// and the test it runs.
func check(t *Target, p Plan, want Mode) (*prepared, Plan, Mode, error) {
	if err := CheckPlatform(); err != nil {
		return nil, p, want, err
	}
	p, m, names, err := resolveLoad(p, want)
	if err != nil {
		return nil, p, m, err
	}
	p, rampNames, err := resolveRamp(p)
	if err != nil {
		return nil, p, m, err
	}
	pr, p, err := checkMode(t, p, m)
	return pr, p, m, renamed(renamed(err, names), rampNames)
}

// checkMode is check of a plan whose test's settings are in its older
// fields.
func checkMode(t *Target, p Plan, m Mode) (*prepared, Plan, error) {
	l := loadOf(m)
	if l == nil {
		return nil, p, refuse("unknown test %q", m)
	}
	if err := l.fill(t, &p); err != nil {
		return nil, p, err
	}
	pr, err := prepare(t, p, m)
	if err != nil {
		return nil, p, err
	}
	if p.Shard != nil {
		if err := p.Shard.check(pr.plan, m); err != nil {
			return nil, p, err
		}
	}
	p = pr.plan
	p.Conns = levelConns(p, m)
	return pr, p, nil
}

func run(ctx context.Context, t Target, p Plan, obs Observer, want Mode) (*Result, error) {
	r, res, err := open(ctx, t, p, obs, want)
	if r == nil {
		return res, err
	}
	defer r.close()
	r.ramp.Run(ctx)
	return r.finish(), nil
}
