package brk

import (
	"context"
)

// Run runs the requests test: Conns connections opened once, each phase
// raising the outstanding requests per connection, until a phase is
// rejected, the max is reached, the run turns inconclusive, or ctx ends.
// The error is non-nil only for a bad plan or target (*PlanError), found
// before any traffic; every other ending is in the Result.
func Run(ctx context.Context, t Target, p Plan, obs Observer) (*Result, error) {
	return RunMode(ctx, ModeRequests, t, p, obs)
}

// RunConnections runs the connections test: each phase holds Start + n ×
// Pace concurrent connections; each connection is set up (connect and TLS
// handshake), carries p.Requests requests one at a time (the last with
// Connection: close), waits for the server to close, and its owner opens
// the next one at once. A phase is accepted when both the established share
// of setups and the success share of requests meet Accept. Conns is not
// used. The error is non-nil only for a bad plan or target.
func RunConnections(ctx context.Context, t Target, p Plan, obs Observer) (*Result, error) {
	return RunMode(ctx, ModeConnections, t, p, obs)
}

// RunRate runs the rate test, an open model: Conns connections opened
// once; each phase offers Start + n × Pace requests/s on a schedule against
// the clock (p.Arrivals: uniform or poisson), whatever the server does. A
// due arrival takes a free slot (at most p.RateDepth outstanding per
// connection) or waits for one in FIFO order; its latency and deadline
// start at its scheduled instant, so a stall shows up as the latency it
// caused. A phase whose client fell behind its schedule by more than 1 %
// is unfulfilled (inconclusive), never a server verdict. The error is
// non-nil only for a bad plan or target.
func RunRate(ctx context.Context, t Target, p Plan, obs Observer) (*Result, error) {
	return RunMode(ctx, ModeRate, t, p, obs)
}

// RunMode runs the test of mode m (Run, RunConnections or RunRate).
func RunMode(ctx context.Context, m Mode, t Target, p Plan, obs Observer) (*Result, error) {
	return run(ctx, t, p, obs, m)
}

// Check validates a target and plan as RunMode would for mode m, without
// any traffic; the error is a *PlanError (or CheckPlatform's).
func Check(t Target, p Plan, m Mode) error {
	_, _, err := check(&t, p, m)
	return err
}

func check(t *Target, p Plan, m Mode) (*prepared, Plan, error) {
	if err := CheckPlatform(); err != nil {
		return nil, p, err
	}
	rules := rulesOf(m)
	if rules == nil {
		return nil, p, refuse("unknown test %q", m)
	}
	if err := rules.fill(t, &p); err != nil {
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

func run(ctx context.Context, t Target, p Plan, obs Observer, m Mode) (*Result, error) {
	r, res, err := open(ctx, t, p, obs, m)
	if r == nil {
		return res, err
	}
	defer r.close()
	r.ramp.Run(ctx)
	return r.finish(), nil
}
