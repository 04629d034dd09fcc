package brk

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/brk-bench/brk/internal/enginerun"
	"github.com/brk-bench/brk/internal/judge"
	"github.com/brk-bench/brk/internal/machine"
	"github.com/brk-bench/brk/internal/sched"
	"github.com/brk-bench/brk/internal/shard"
)

// running is a started run: the engine's run (internal/enginerun) and the
// Result it fills, stepped by run (or in turns with another, by AB).
type running struct {
	res   *Result
	run   *enginerun.Run
	ramp  *judge.Ramp
	shard *shardRun // a sharded run's part (shard.go)
}

func (r *running) close() { r.run.Close() }

// open checks a run of test want ("": p.Load's; check), builds its
// Result's head and the engine's spec, and starts it (internal/enginerun).
// It returns a nil *running with the Result when the run ended before its
// first phase, and an error only for a bad plan or target.
func open(ctx context.Context, t Target, p Plan, obs Observer, want Mode) (*running, *Result, error) {
	pr, p, m, err := check(&t, p, want)
	if err != nil {
		return nil, nil, err
	}
	res := &Result{
		Schema: 1, Test: m, URL: t.URL, Protocol: pr.proto.Name(), TLS: pr.tls != nil,
		Conns: p.Conns, TimeoutMs: ms(p.Timeout), Accept: pr.accept.String(),
		Phases:  []*PhaseStats{},
		Version: Version(), StartedAt: time.Now().UTC().Format(time.RFC3339),
	}
	alpn := "" // the protocol the TLS server must select (protocol.go)
	if pr.tls != nil {
		alpn = pr.proto.selectsALPN()
	}
	var mix *sched.MixConfig
	if pr.mix != nil { // a request mix (mix_run.go)
		res.URL, mix = pr.mix.url, pr.mix.cfg
	}
	io, perr := chooseIO(p)
	if perr != nil {
		return nil, nil, perr
	}
	threads := p.Threads
	if threads == 0 {
		threads = machine.UsableCPUs()
	}
	threads = min(threads, loadOf(m).firstConns(p)) // never more threads than phase 0's connections
	engConns, connBase := p.Conns, 0
	if p.Shard != nil { // this shard's share of the connections (shard.go)
		engConns, connBase, threads = p.Shard.localConns(p, m, threads)
	}
	res.Threads = threads
	if io == sched.IOUring {
		res.IO = IOUring
	}
	if p.Arrivals == "poisson" && p.Seed == 0 {
		p.Seed = rand.Uint64N(MaxSeed) + 1 // 1..MaxSeed
	}
	res.Plan = recordPlan(p, m, res.Protocol, pr.accept, threads)
	loadOf(m).report(res, p)
	spec := enginerun.Spec{
		Host: pr.hostport,
		Config: sched.Config{
			IO: io, Threads: threads, Conns: engConns,
			LevelConns: p.Conns, ConnBase: connBase,
			Replay:  pr.replay,
			Timeout: p.Timeout, StatusOK: pr.statusOK,
			MaxP99: p.MaxP99, MaxP999: p.MaxP999, ServerPIDs: p.ServerPIDs, Names: p.Names,
			TLS: pr.tls, NoResume: t.TLS.NoResume, ALPN: alpn,
			NewSession: pr.session, Mix: mix,
		},
		Plan:         enginePlan(p, m, pr.accept, ""),
		ConnectFirst: m.Clocked(), ConnectWithin: p.Timeout + 100*time.Millisecond,
	}
	spec.Config.Load = loadOf(m).engine(p)
	if p.Baseline {
		spec.Baseline = p.Phase
	}
	if p.Shard != nil {
		spec.Shard = shardConfig(p.Shard, &t, p, m, spec.Plan, res)
	}
	if obs == nil {
		obs = NopObserver{}
	}
	h := &engineObserver{obs: obs, res: res, plan: p, servers: machine.NewProcessSampler(p.ServerPIDs)}
	if pr.mix != nil {
		h.mix = pr.mix.describe()
	}
	er, ended := enginerun.Open(ctx, spec, h)
	if ended != nil {
		res.Baseline = baseline(ended.Baseline)
		res.Verdict, res.Reason = ended.Verdict, ended.Reason
		res.unphased(ended.Dialed)
		return nil, res, nil
	}
	res.Baseline = baseline(er.Baseline)
	h.eng = er.Eng
	r := &running{res: res, run: er, ramp: er.Ramp}
	if er.Shard != nil {
		h.shard = er.Shard
		r.shard = &shardRun{s: p.Shard, t: t, p: p, m: m, splan: er.Plan, ph: er.Shard}
	}
	return r, res, nil
}

// recordPlan is the plan as run of p (defaults filled in) in test m, as
// a report gives it: what every test reports (the mode's report adds its
// own fields), the threads as run, the acceptance threshold as the
// fraction that judged it, and Repeat with its default.
func recordPlan(p Plan, m Mode, protocol string, acc judge.Accept, threads int) Plan {
	rp := Plan{
		mode: m, protocol: protocol, Start: p.Start, Pace: p.Pace, Max: p.Max,
		Phase: p.Phase, Timeout: p.Timeout, Accept: acc.Pct(), Threads: threads,
		MaxP99: p.MaxP99, MaxP999: p.MaxP999, Refine: p.Refine, Budget: p.Budget,
	}
	if acc.Num == 0 {
		rp.Accept = AcceptAny
	}
	if s := p.Search; s != nil {
		c := *s
		rp.Search = &c
	}
	rp.Repeat = max(p.Repeat, 1)
	return rp
}

// baseline is the report's form of the idle observation (nil: none).
func baseline(b *enginerun.Idle) *Baseline {
	if b == nil {
		return nil
	}
	return &Baseline{DurationS: b.Duration.Seconds(), MachineCPUPct: b.MachinePct,
		ClientCPU: ClientCPU{UserS: b.Client.User.Seconds(), SystemS: b.Client.System.Seconds()}}
}

// enginePlan is the engine's plan of p (defaults filled in) in test m: its
// levels as totals (the requests test's per-connection Start, Pace and Max
// times Conns), and for a sharded run phases on absolute slots of Phase +
// the shard allowance, as the budget counts them.
func enginePlan(p Plan, m Mode, acc judge.Accept, addr string) judge.Plan {
	unit := m.PlanUnit(p.Conns)
	l := judge.Levels{Start: p.Start * unit, Max: p.Max * unit, Climb: judge.Linear{Pace: p.Pace * unit, Refine: p.Refine}}
	if s := p.Search; s != nil {
		l.Climb = judge.Search{Growth: s.Growth, Resolution: s.Resolution, ResolutionPct: s.ResolutionPct}
	}
	sp := judge.Plan{
		Mode: m, Conns: p.Conns, Levels: l, Phase: p.Phase, Timeout: p.Timeout, Accept: acc, Addr: addr,
		MaxP99: p.MaxP99, MaxP999: p.MaxP999, Repeat: p.Repeat, RateDepth: p.RateDepth,
		Budget: p.Budget, PhaseCost: p.Phase + p.Timeout, Names: p.Names,
	}
	if p.Shard != nil {
		sp.Slotted, sp.PhaseCost = true, p.Phase+p.Shard.allowance(p)
		sp.Unjudged = p.Shard.free()
	}
	return sp
}

// finish turns the ramp's outcome into the Result.
func (r *running) finish() *Result { return r.finishOutcome(r.ramp.Outcome()) }

// finishOutcome turns a ramp's outcome into the Result.
func (r *running) finishOutcome(out *judge.Outcome) *Result {
	res := r.res
	res.Verdict, res.Reason = out.Verdict, out.Reason
	res.LastAccepted, res.FirstRejected = optional(out.LastAccepted), optional(out.FirstRejected)
	if b := out.Bracket; b.HeldPhase >= 0 || b.BrokePhase >= 0 {
		res.FinalPair = finalPair(out)
	}
	res.CoolDowns = out.CoolDowns
	res.summarize()
	if r.shard != nil {
		r.shard.report(res)
	}
	if len(out.Phases) == 0 && r.run != nil {
		res.unphased(r.run.Eng.Snapshot().Dialed) // a shard's join that failed at the start
	}
	return res
}

// unphased records the connections a run set up before it ended without
// any phase to count them in (a shard whose join failed after it had set
// up its rate test's connections): in UnphasedSetups and in the reason.
func (res *Result) unphased(dialed uint64) {
	if dialed == 0 {
		return
	}
	res.UnphasedSetups = dialed
	res.Reason += fmt.Sprintf(" (%d connections to the target had been set up before the end, counted in no phase)", dialed)
}

// optional is v, or nil for the engine's -1 (none).
func optional(v int) *int {
	if v < 0 {
		return nil
	}
	return &v
}

// engineObserver turns what the engine's run tells (enginerun.Observer)
// into what the public Observer is told.
type engineObserver struct {
	obs  Observer
	res  *Result
	plan Plan
	eng  *sched.Engine
	rep  *reporter

	servers *machine.ProcessSampler
	shard   *shard.Lockstep // a sharded run: each phase keeps this box's raw measurement
	mix     []TargetStats   // a request mix's targets, named (mix_run.go)
}

func (h *engineObserver) WorkersStarted(threads int) { h.obs.WorkersStarted(threads) }

func (h *engineObserver) PhaseStarted(index, depth, level int, role judge.Role, b judge.Bracket, left time.Duration) {
	h.servers.Start()
	h.obs.PhaseStarted(PhaseStart{Index: index, Level: level, Target: level, Depth: depth, Role: role.String(),
		Held: max(b.Held, 0), Broke: max(b.Broke, 0), BudgetLeft: left})
	if _, nop := h.obs.(NopObserver); !nop {
		h.rep = startReporter(h.eng, h.obs, index, level)
	}
}

func (h *engineObserver) PhaseFinished(j *judge.Judged) {
	if h.rep != nil {
		h.rep.halt()
		h.rep = nil
	}
	s := phaseStats(j)
	s.nameTargets(h.mix)
	for _, u := range h.servers.Finish(s.Counts.Succeeded) {
		s.Server = append(s.Server, ServerCPU(u))
	}
	if h.shard != nil {
		s.Raw = rawMeasurement(h.shard.Local())
	}
	h.res.Phases = append(h.res.Phases, s)
	h.obs.PhaseFinished(s)
}
