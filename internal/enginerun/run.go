// Package enginerun opens and drives the engine for the root package's runs: it
// resolves the target, checks the file descriptors, starts the workers,
// observes the idle baseline, sets up the rate test's connections, joins
// a sharded run and steps the ramp, alone or in turns with another (an
// A/B run). It speaks the engine's types (sched.Config, judge.Plan,
// judge.Judged): the root builds the Spec from its Plan and Target and
// converts what comes back into its results, so that this package never
// needs the API's types and the API's types stay documented where a
// library user reads them.
package enginerun

import (
	"context"
	"fmt"
	"time"

	"github.com/brk-bench/brk/internal/conn"
	"github.com/brk-bench/brk/internal/judge"
	"github.com/brk-bench/brk/internal/machine"
	"github.com/brk-bench/brk/internal/metrics"
	"github.com/brk-bench/brk/internal/sched"
	"github.com/brk-bench/brk/internal/shard"
)

// Spec is what a run needs from the root: the engine's configuration and
// plan (their Addr filled in by Open from Host), what to do before phase 0,
// and a sharded run's part.
type Spec struct {
	Host   string // the dial address's text (host:port)
	Config sched.Config
	Plan   judge.Plan
	// Baseline, when positive, observes the machine idle this long
	// before the load.
	Baseline time.Duration
	// ConnectFirst sets every connection up before phase 0 (bounded by
	// ConnectWithin), so that a schedule does not start on connects.
	ConnectFirst  bool
	ConnectWithin time.Duration
	// Shard, when set, joins a coordinated run with the engine as this
	// shard's part of every phase (its Plan and Local are Open's).
	Shard *shard.Config
}

// Observer is what a run tells its caller: the ramp's phases
// (judge.Observer), and the workers' start.
type Observer interface {
	judge.Observer
	WorkersStarted(threads int)
}

// Idle is the baseline: the machine and the client process while no
// request ran.
type Idle struct {
	Duration   time.Duration
	MachinePct *float64 // nil where unavailable
	Client     metrics.ProcessCPU
}

// Run is a started run: its engine and its ramp.
type Run struct {
	Eng      *sched.Engine
	Ramp     *judge.Ramp
	Shard    *shard.Lockstep // a sharded run's phaser (nil: one box)
	Plan     judge.Plan      // the engine's plan, Addr filled in
	Baseline *Idle           // with Spec.Baseline
}

// Ended is how a run ended before its first phase: interrupted, or
// inconclusive with Reason.
type Ended struct {
	Verdict judge.Verdict
	Reason  string
	// Baseline is the idle observation made before the end (or nil).
	Baseline *Idle
	// Dialed counts the connections set up before the end (a shard
	// that set up its rate test's connections, then failed to join):
	// counted in no phase.
	Dialed uint64
}

// Open starts the run of spec. It returns a nil *Run with how the run
// ended when it ended before its first phase. obs's WorkersStarted is
// called once the workers run; the ramp tells it of each phase. obs may
// use the Run's engine once Open returns.
func Open(ctx context.Context, spec Spec, obs Observer) (*Run, *Ended) {
	inconclusive := func(reason string) (*Run, *Ended) {
		return nil, &Ended{Verdict: judge.Inconclusive, Reason: reason}
	}
	if ctx.Err() != nil {
		return nil, &Ended{Verdict: judge.Interrupted, Reason: "interrupted"}
	}
	addrs, err := conn.Resolve(spec.Host)
	if err != nil {
		return inconclusive("setup impossible: " + err.Error())
	}
	cfg := spec.Config
	cfg.Addr = addrs[0]
	limit, _ := conn.RaiseNoFile()
	if need := uint64(cfg.Conns + 2*cfg.Threads + 64); limit > 0 && need > limit {
		return inconclusive(fmt.Sprintf("client needs about %d file descriptors for %d connections but RLIMIT_NOFILE is %d: raise `ulimit -n` or use fewer connections", need, cfg.Conns, limit))
	}
	eng, err := sched.Start(cfg)
	if err != nil {
		if msg, ok := conn.Exhausted(err); ok {
			return inconclusive(msg)
		}
		return inconclusive("client could not start its workers: " + err.Error())
	}
	obs.WorkersStarted(cfg.Threads)
	r := &Run{Eng: eng, Plan: spec.Plan}
	r.Plan.Addr = addrs[0].String()
	if spec.Baseline > 0 {
		r.Baseline = observeIdle(ctx, spec.Baseline)
		if ctx.Err() != nil {
			eng.Close()
			return nil, &Ended{Verdict: judge.Interrupted, Reason: "interrupted", Baseline: r.Baseline}
		}
	}
	if spec.ConnectFirst {
		eng.Connect(ctx, spec.ConnectWithin)
	}
	var ph judge.Phaser = eng
	if spec.Shard != nil { // a coordinated shard: phases in step, merged measurements
		sc := *spec.Shard
		sc.Plan, sc.Local = r.Plan, eng
		sp, err := shard.Join(ctx, sc)
		if err != nil {
			dialed := eng.Snapshot().Dialed
			eng.Close()
			return nil, &Ended{Verdict: judge.Inconclusive, Reason: err.Error(), Dialed: dialed}
		}
		r.Shard, ph = sp, sp
	}
	r.Ramp = judge.NewRamp(ph, r.Plan, obs)
	return r, nil
}

// Close stops the run's shard exchange and its engine.
func (r *Run) Close() {
	if r.Shard != nil {
		r.Shard.Close()
	}
	r.Eng.Close()
}

// Turns steps a and b in turns, one phase each, until both ramps have
// ended; a ramp that ends first leaves the other to go on alone. A nil
// run has ended before its first phase.
func Turns(ctx context.Context, a, b *Run) {
	for stepping(a) || stepping(b) {
		if stepping(a) {
			a.Ramp.Step(ctx)
		}
		if stepping(b) {
			b.Ramp.Step(ctx)
		}
	}
}

func stepping(r *Run) bool { return r != nil && !r.Ramp.Done() }

// observeIdle watches the machine for d with no traffic.
func observeIdle(ctx context.Context, d time.Duration) *Idle {
	m0, c0, t0 := machine.ReadMachineCPU(), machine.ReadProcessCPU(), time.Now()
	t := time.NewTimer(d)
	select {
	case <-t.C:
	case <-ctx.Done():
		t.Stop()
	}
	b := &Idle{Duration: time.Since(t0), Client: machine.ReadProcessCPU().Sub(c0)}
	if pct, ok := machine.ReadMachineCPU().BusyPct(m0); ok {
		b.MachinePct = &pct
	}
	return b
}
