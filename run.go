package brk

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"math/rand/v2"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/brk-bench/brk/h1"
	"github.com/brk-bench/brk/h2"
	enginerun "github.com/brk-bench/brk/internal/run"
	"github.com/brk-bench/brk/metrics"
	"github.com/brk-bench/brk/sched"
	"github.com/brk-bench/brk/shard"
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

// running is a started run: the engine's run (internal/run) and the
// Result it fills, stepped by run (or in turns with another, by RunAB).
type running struct {
	res   *Result
	run   *enginerun.Run
	ramp  *sched.Ramp
	shard *shardRun // a sharded run's part (shard.go)
}

func (r *running) close() { r.run.Close() }

// open checks a run, builds its Result's head and the engine's spec, and
// starts it (internal/run). It returns a nil *running with the Result
// when the run ended before its first phase, and an error only for a bad
// plan or target.
func open(ctx context.Context, t Target, p Plan, obs Observer, m Mode) (*running, *Result, error) {
	pr, p, err := check(&t, p, m)
	if err != nil {
		return nil, nil, err
	}
	res := &Result{
		Schema: 1, Test: m, URL: t.URL, Protocol: "http/1.1", TLS: pr.tls != nil,
		Conns: p.Conns, TimeoutMs: ms(p.Timeout), Accept: pr.accept.String(),
		Phases:  []*PhaseStats{},
		Version: Version(), StartedAt: time.Now().UTC().Format(time.RFC3339),
	}
	newSession := func() sched.Session { return h1.NewSession(pr.template) }
	alpn := ""
	if pr.h2 != nil {
		res.Protocol = "h2"
		newSession = func() sched.Session { return h2.NewSession(pr.h2) }
		if pr.tls != nil {
			alpn = "h2"
		}
	}
	threads := p.Threads
	if threads == 0 {
		threads = usableCPUs()
	}
	threads = min(threads, rulesOf(m).firstConns(p)) // never more threads than phase 0's connections
	engConns, connBase := p.Conns, 0
	if p.Shard != nil { // this shard's share of the connections (shard.go)
		engConns, connBase, threads = p.Shard.localConns(p, m, threads)
	}
	res.Threads = threads
	if p.Arrivals == "poisson" && p.Seed == 0 {
		p.Seed = rand.Uint64N(MaxSeed) + 1 // 1..MaxSeed
	}
	res.Plan = resultPlan(p, m, res.Protocol, pr.accept, threads)
	rulesOf(m).report(res, p)
	res.Plan.RateDepth, res.Plan.Arrivals, res.Plan.Seed = res.RateDepth, res.Arrivals, res.Seed
	shardIndex, shards := 0, 0
	if p.Shard != nil && m.Clocked() { // this shard's arrivals of each phase's schedule
		shardIndex, shards = p.Shard.Index, p.Shard.Count
	}
	spec := enginerun.Spec{
		Host: pr.hostport,
		Config: sched.Config{
			Threads: threads, Conns: engConns,
			LevelConns: p.Conns, ConnBase: connBase,
			Replay:  pr.replay,
			Timeout: p.Timeout, StatusOK: pr.statusOK,
			TLS: pr.tls, NoResume: t.TLS.NoResume, ALPN: alpn,
			Mode: m, PerConn: p.Requests, KeepAlive: p.KeepAlive,
			RateDepth: p.RateDepth, Poisson: p.Arrivals == "poisson", Seed: p.Seed,
			ShardIndex: shardIndex, Shards: shards,
			NewSession: newSession,
		},
		Plan:         enginePlan(p, m, pr.accept, ""),
		ConnectFirst: m.Clocked(), ConnectWithin: p.Timeout + 100*time.Millisecond,
	}
	if p.Baseline {
		spec.Baseline = p.Phase
	}
	if p.Shard != nil {
		spec.Shard = shardConfig(p.Shard, &t, p, m, spec.Plan, res)
	}
	if obs == nil {
		obs = nopObserver{}
	}
	h := &hooks{obs: obs, res: res, plan: p, servers: newServerSampler(p.ServerPIDs)}
	er, ended := enginerun.Open(ctx, spec, h)
	if ended != nil {
		res.Baseline = baseline(ended.Baseline)
		res.Verdict, res.Reason = ended.Verdict, ended.Reason
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

// resultPlan is the report's plan of p (defaults filled in) in test m.
func resultPlan(p Plan, m Mode, protocol string, acc sched.Accept, threads int) ResultPlan {
	rp := ResultPlan{
		Test: m, Protocol: protocol, Ramp: "linear", Start: p.Start, Pace: p.Pace, Max: p.Max,
		PhaseS: p.Phase.Seconds(), TimeoutMs: ms(p.Timeout), AcceptPct: acc.Pct(), Threads: threads,
		MaxP99Ms: ms(p.MaxP99), MaxP999Ms: ms(p.MaxP999), Refine: p.Refine, BudgetS: p.Budget.Seconds(),
	}
	if s := p.Search; s != nil {
		rp.Ramp, rp.Growth, rp.Resolution, rp.ResolutionPct = "search", s.Growth, s.Resolution, s.ResolutionPct
	}
	if p.Refine || p.Search != nil {
		rp.Repeat = max(p.Repeat, 1)
	}
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
func enginePlan(p Plan, m Mode, acc sched.Accept, addr string) sched.Plan {
	unit := m.PlanUnit(p.Conns)
	l := sched.Levels{Start: p.Start * unit, Pace: p.Pace * unit, Max: p.Max * unit, Refine: p.Refine}
	if s := p.Search; s != nil {
		l.Search, l.Growth, l.Resolution, l.ResolutionPct = true, s.Growth, s.Resolution, s.ResolutionPct
	}
	sp := sched.Plan{
		Mode: m, Conns: p.Conns, Levels: l, Phase: p.Phase, Accept: acc, Addr: addr,
		MaxP99: p.MaxP99, MaxP999: p.MaxP999, Repeat: p.Repeat, RateDepth: p.RateDepth,
		Budget: p.Budget, PhaseCost: p.Phase + p.Timeout,
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
func (r *running) finishOutcome(out *sched.Outcome) *Result {
	res := r.res
	res.Verdict, res.Reason = out.Verdict, out.Reason
	res.LastAccepted, res.FirstRejected = optional(out.LastAccepted), optional(out.FirstRejected)
	if b := out.Bracket; b.HeldPhase >= 0 || b.BrokePhase >= 0 {
		res.FinalPair = &FinalPair{HeldPhase: optional(b.HeldPhase), BrokePhase: optional(b.BrokePhase),
			HeldRuns: b.HeldRuns, HeldOf: b.HeldOf, BrokeRun: b.BrokeRun, BrokeOf: b.BrokeOf}
	}
	if r.shard != nil {
		r.shard.report(res)
	}
	return res
}

// optional is v, or nil for the engine's -1 (none).
func optional(v int) *int {
	if v < 0 {
		return nil
	}
	return &v
}

type nopObserver struct{}

func (nopObserver) WorkersStarted(int)        {}
func (nopObserver) PhaseStarted(Phase)        {}
func (nopObserver) PhaseFinished(*PhaseStats) {}

// hooks adapts sched's phase hooks to the public Observer.
type hooks struct {
	obs  Observer
	res  *Result
	plan Plan
	eng  *sched.Engine
	rep  *reporter

	servers *serverSampler
	shard   *shard.Phaser // a sharded run: each phase keeps this box's raw measurement
}

func (h *hooks) WorkersStarted(threads int) { h.obs.WorkersStarted(threads) }

func (h *hooks) PhaseStarted(index, depth, target int, role sched.Role) {
	h.servers.start()
	h.obs.PhaseStarted(Phase{Index: index, Depth: depth, Target: target, Role: role.String()})
	if po, ok := h.obs.(ProgressObserver); ok {
		h.rep = startReporter(h.eng, po, index, target)
	}
}

func (h *hooks) PhaseFinished(j *sched.Judged) {
	if h.rep != nil {
		h.rep.halt()
		h.rep = nil
	}
	s := phaseStats(j)
	s.Server = h.servers.finish(s.Counts.Succeeded)
	if h.shard != nil {
		s.Raw = rawMeasurement(h.shard.Local())
	}
	h.res.Phases = append(h.res.Phases, s)
	h.obs.PhaseFinished(s)
}

// rawMeasurement is m's JSON form for PhaseStats.Raw (nil: none).
func rawMeasurement(m *sched.Measurement) json.RawMessage {
	if m == nil {
		return nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil
	}
	return b
}

// measurementOf reads PhaseStats.Raw back (nil: none, or no stats).
func measurementOf(raw json.RawMessage) *sched.Measurement {
	if len(raw) == 0 {
		return nil
	}
	var m sched.Measurement
	if json.Unmarshal(raw, &m) != nil || m.Stats == nil {
		return nil
	}
	return &m
}

func phaseStats(j *sched.Judged) *PhaseStats {
	r := j.Run
	m := r.Stats
	c := &m.Counts
	s := &PhaseStats{
		Index: j.Index, Role: j.Role.String(), Level: j.Target, Depth: j.Depth, Probe: j.Probe,
		Accepted: j.Accepted, Interrupted: r.Interrupted, Inconclusive: j.Inconclusive, NotJudged: j.NotJudged, Reason: j.Reason,
		DurationS: r.Elapsed.Seconds(), ActiveS: r.Active.Seconds(),
		Counts: Counts{
			Attempted: c.Attempted, Succeeded: c.Succeeded,
			Timeout:        c.Failed[metrics.Timeout],
			Transport:      c.Failed[metrics.Transport],
			Abandoned:      c.Failed[metrics.Abandoned],
			Connect:        c.Failed[metrics.Connect],
			ConnectTimeout: c.Failed[metrics.ConnectTimeout],
			Status:         c.Failed[metrics.Status],
			Body:           c.Failed[metrics.Body],
			Protocol:       c.Failed[metrics.Protocol],
		},
		StatusCodes:         m.Statuses.Map(),
		BodySamples:         m.BodySamples,
		LatencyMs:           latency(m.Latency.TotalCount(), m.LatencySumNs, m),
		SetupLatencyMs:      setupLatency(m),
		LatencyHdr:          encodeHist(m),
		LatencyDistribution: latencyDistribution(m.Latency),
		TargetReachedOnce:   m.ReachedOnce,
		BlockedWrites:       m.BlockedWrites,
		MaxSendDelayMs:      float64(m.MaxSendDelay) / 1e6,
		MaxLatenessMs:       float64(m.MaxLateness) / 1e6,
		Setups: Setups{
			Attempted: m.Setups.Attempted, Established: m.Setups.Established,
			Failed: m.Setups.Failed, TimedOut: m.Setups.TimedOut, Abandoned: m.Setups.Abandoned,
			Resumed: m.Setups.Resumed,
		},
		TLS:           tlsStats(j),
		ProtocolFault: m.ProtocolReason,
		SetupError:    m.SetupError,

		ResetsSent: m.ResetsSent, GoAwaysReceived: m.GoAwaysReceived, StreamsReplayed: m.Replayed,
	}
	if m.PeerMaxKnown {
		v := m.PeerMaxStreams
		s.PeerMaxStreams = &v
	}
	if c.Attempted > 0 {
		s.SuccessPct = 100 * float64(c.Succeeded) / float64(c.Attempted)
	}
	if r.Elapsed > 0 {
		s.RequestsPerSec = float64(c.Succeeded) / r.Elapsed.Seconds()
		s.SetupsPerSec = float64(m.Setups.Established) / r.Elapsed.Seconds()
	}
	if m.ActiveNs > 0 && m.Workers > 0 && m.SendLag == nil {
		active := float64(m.ActiveNs) / float64(m.Workers)
		s.MeanOutstanding = float64(m.OutstandingNs) / active
		if j.Target > 0 {
			s.TargetCoveragePct = 100 * s.MeanOutstanding / float64(j.Target)
		}
		if owners := j.Owners; owners > 0 {
			s.TimeAtTargetPct = 100 * float64(m.AtTargetNs) / (active * float64(owners))
		}
	}
	s.ClientCPU = ClientCPU{UserS: r.CPU.User.Seconds(), SystemS: r.CPU.System.Seconds()}
	if resp := m.LatencyCount; resp > 0 {
		s.ClientCPU.UsPerResponse = float64((r.CPU.User + r.CPU.System).Microseconds()) / float64(resp)
	}
	if r.MachineOK {
		v := r.Machine
		s.MachineCPUPct = &v
	}
	if r.WorkerBusyOK {
		v := 100 * r.WorkerBusy
		s.WorkerBusyPct = &v
		s.ClientBound = r.WorkerBusy >= sched.ClientBoundShare
	}
	if m.SendLag != nil {
		// The rate test has no depth to cover: mean outstanding only.
		if m.ActiveNs > 0 && m.Workers > 0 {
			s.MeanOutstanding = float64(m.OutstandingNs) / (float64(m.ActiveNs) / float64(m.Workers))
		}
		s.Rate = rateStats(r, s.RequestsPerSec)
		s.ClientBound = s.ClientBound || r.Shortfall() > sched.MaxShortfall
	}
	s.Timeline = timeline(r)
	return s
}

// timeline is a phase's outcomes over time: its spans through the end of
// its drain (an empty span inside the phase is a stall, and kept).
func timeline(r *sched.Measurement) *Timeline {
	t := r.Stats.Timeline
	if t == nil || t.WidthNs <= 0 {
		return nil
	}
	n := int((int64(r.Elapsed) + t.WidthNs - 1) / t.WidthNs)
	n = min(max(n, len(t.Trimmed())), len(t.Spans))
	out := &Timeline{
		StartS: float64(t.StartNs) / 1e9, WidthS: float64(t.WidthNs) / 1e9,
		Points: make([]TimelinePoint, n),
	}
	for i, sp := range t.Spans[:n] {
		c := &sp.Statuses
		out.Points[i] = TimelinePoint{Succeeded: sp.Succeeded, Failed: sp.Failed, P99Ms: float64(sp.P99Us) / 1e3,
			Statuses: StatusClasses{S1xx: c[1], S2xx: c[2], S3xx: c[3], S4xx: c[4], S5xx: c[5], Other: c[0]}}
	}
	return out
}

// rateStats is a rate test phase's schedule accounting.
func rateStats(r *sched.Measurement, achieved float64) *RateStats {
	m := r.Stats
	rs := &RateStats{
		Scheduled: m.Scheduled, Written: m.Written, ExpiredUnsent: m.ExpiredUnsent,
		AchievedPerSec: achieved,
		SendLagMs:      histLatency(m.SendLag),
		ServiceMs:      histLatency(m.Service),
		ClientLagMs:    histLatency(m.ClientLag),
		ShortfallPct:   100 * r.Shortfall(),
	}
	if r.Active > 0 {
		rs.OfferedPerSec = float64(m.Scheduled) / r.Active.Seconds()
	}
	return rs
}

func latency(count int64, sumNs uint64, m *metrics.Phase) Latency {
	if count == 0 {
		return Latency{}
	}
	h := m.Latency
	return Latency{
		Count: uint64(count),
		Mean:  float64(sumNs) / float64(m.LatencyCount) / 1e6,
		P50:   float64(h.ValueAtQuantile(50)) / 1e3,
		P90:   float64(h.ValueAtQuantile(90)) / 1e3,
		P99:   float64(h.ValueAtQuantile(99)) / 1e3,
		P999:  float64(h.ValueAtQuantile(99.9)) / 1e3,
		Max:   float64(h.Max()) / 1e3,
	}
}

// latencyDistribution is h's percentile distribution in ms (empty, not
// nil, when h has no values: the JSON always has the array).
func latencyDistribution(h *hdrhistogram.Histogram) []LatencyPoint {
	d := metrics.Distribution(h)
	out := make([]LatencyPoint, len(d))
	for i, p := range d {
		out[i] = LatencyPoint{Percentile: p.Percentile, Ms: float64(p.ValueUs) / 1e3, Count: uint64(p.Count)}
	}
	return out
}

func tlsStats(j *sched.Judged) *TLSStats {
	m := j.Run.Stats
	if m.TLS.Version == 0 && m.Setups.Resumed == 0 {
		return nil
	}
	return &TLSStats{
		Version: versionName(m.TLS.Version),
		Cipher:  tls.CipherSuiteName(m.TLS.CipherSuite),
		Group:   groupName(tls.CurveID(m.TLS.Group)),
		Resumed: m.Setups.Resumed,
	}
}

func encodeHist(m *metrics.Phase) string {
	b, err := m.Latency.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return ""
	}
	return string(b)
}

func setupLatency(m *metrics.Phase) Latency { return histLatency(m.SetupLatency) }

// histLatency summarises a µs histogram in milliseconds (its mean from
// the histogram).
func histLatency(h *hdrhistogram.Histogram) Latency {
	if h == nil || h.TotalCount() == 0 {
		return Latency{}
	}
	return Latency{
		Count: uint64(h.TotalCount()),
		Mean:  h.Mean() / 1e3,
		P50:   float64(h.ValueAtQuantile(50)) / 1e3,
		P90:   float64(h.ValueAtQuantile(90)) / 1e3,
		P99:   float64(h.ValueAtQuantile(99)) / 1e3,
		P999:  float64(h.ValueAtQuantile(99.9)) / 1e3,
		Max:   float64(h.Max()) / 1e3,
	}
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }
