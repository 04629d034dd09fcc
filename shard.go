package brk

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/brk-bench/brk/internal/judge"
	"github.com/brk-bench/brk/internal/shard"
)

// Sharding makes a run shard Index of Count of one plan run on several
// load boxes (Plan.Shard). The requests and connections tests split their
// connections (and so their concurrent requests) so that the union of the
// shards is the plan; the rate test splits its connections and each
// phase's one schedule: shard I takes arrivals k ≡ I (mod Count). Levels,
// verdict and final line speak of the whole plan. Shard 0 listens on Coordinator (or Listen) and coordinates: after
// each phase every shard sends it its measurement; it merges them, judges
// the merged phase with the verdict code of a single box and tells every
// shard to go on or stop. A shard lost, late or silent makes the run
// inconclusive, never a server verdict.
type Sharding struct {
	Index, Count int
	Coordinator  string // HOST:PORT: shard 0 listens, the others dial
	Listen       string // shard 0's listen address ("" = Coordinator)
	Token        string // shared secret (BRK_TOKEN); never sent
	// StartAt is when phase 0 starts on every shard; zero: the
	// coordinator picks it two seconds after every shard joined. Phase n
	// starts at StartAt + n × (Phase + Allowance).
	StartAt time.Time
	// Tolerance is how late a shard may start a phase before the run fails
	// closed (default 1s).
	Tolerance time.Duration
	// Allowance follows each phase's admission: the drain and the exchange
	// (default Timeout + 1s).
	Allowance time.Duration
	// JoinTimeout bounds the wait for every shard when StartAt is zero
	// (default 2m).
	JoinTimeout time.Duration
}

// ShardInfo is one shard's part of a sharded run, in its report
// ("shard"). Plan holds what the merge needs to judge the phases again:
// the schedule, the latency limits, the budget, Shard.Allowance and the
// dialled address, written in milliseconds (MarshalJSON).
type ShardInfo struct {
	Index int `json:"index"`
	Count int `json:"count"`
	// PlanHash names the whole plan: TargetHash (the request and its
	// checks, which the report does not hold) and the plan as this report
	// gives it (test, url, conns, requests_per_connection, timeout_ms,
	// accept_pct, count and Plan but its addr), so that brk merge can
	// check the embedded plan it judges by against it.
	PlanHash   string `json:"plan_hash"`
	TargetHash string `json:"target_hash"`
	// StartAt is phase 0's start on every shard (RFC 3339, UTC, ms).
	StartAt         string  `json:"start_at"`
	StartLatenessMs float64 `json:"start_lateness_ms"` // this shard's phase 0 start after StartAt
	MaxLatenessMs   float64 `json:"max_lateness_ms"`   // the latest of its phase starts
	Plan            Plan    `json:"plan"`
	// Unjudged: the shard ran without a coordinator; its phases are not
	// judged, the verdict is brk merge's.
	Unjudged bool `json:"unjudged,omitempty"`
}

// ShardSummary is one shard of a merged report ("shards").
type ShardSummary struct {
	Index           int     `json:"index"`
	StartLatenessMs float64 `json:"start_lateness_ms"`
	MaxLatenessMs   float64 `json:"max_lateness_ms"`
	Threads         int     `json:"threads,omitempty"`
}

func (s *Sharding) check(p Plan, m Mode) error {
	if err := (shard.Spec{Index: s.Index, Count: s.Count}).Valid(); err != nil {
		return refuse("%s: %v", fShard, err)
	}
	switch {
	case s.Coordinator == "" && s.StartAt.IsZero():
		return refuse("%s needs %s HOST:PORT (shard 0 listens there), or %s T to run in step without a coordinator", fShard, fShardCoordinator, fShardStartAt)
	case s.Coordinator == "" && s.Listen != "":
		return refuse("%s needs %s", fShardListen, fShardCoordinator)
	case s.Token == "" && s.Coordinator != "":
		return refuse("%s needs %s", fShardCoordinator, fShardToken)
	case s.Token == "":
		return refuse("%s needs %s: it signs the shard's report", fShard, fShardToken)
	case s.free() && p.Search != nil:
		return refuse("%s without %s runs every phase unjudged, so its levels must not depend on verdicts, and %s does: give %s and %s (a linear ramp), or a coordinator", fShardStartAt, fShardCoordinator, fSearch, fPace, fMax)
	case s.free() && p.Refine:
		return refuse("%s without %s runs every phase unjudged, so its levels must not depend on verdicts, and %s does: run it with a coordinator", fShardStartAt, fShardCoordinator, fRefine)
	case s.free() && p.Max == 0:
		return refuse("%s without %s runs every phase of the plan: it needs %s", fShardStartAt, fShardCoordinator, fMax)
	case p.Baseline:
		return refuse("%s is not supported with %s", fBaseline, fShard)
	case p.Arrivals == "poisson" && p.Seed == 0:
		return refuse("%s with %s poisson needs %s: every shard replays the same gaps", fShard, fArrivals, fSeed)
	case loadOf(m).splitsConns() && p.Conns < s.Count:
		return refuse("%s %d cannot be split over %d shards: every shard needs a connection", fConns, p.Conns, s.Count)
	case s.Tolerance < 0 || s.Allowance < 0 || s.JoinTimeout < 0:
		return refuse("%s, %s and %s must not be negative", fShardTolerance, fShardAllowance, fShardJoinTimeout)
	case p.Budget > 0 && p.Budget < p.Phase+s.allowance(p):
		return refuse("%s (%s) is shorter than one sharded phase (%s %s + %s %s)", fBudget, p.Budget, fPhase, p.Phase, fShardAllowance, s.allowance(p))
	}
	return nil
}

func (s *Sharding) spec() shard.Spec { return shard.Spec{Index: s.Index, Count: s.Count} }

// free reports whether this shard runs without a coordinator: every phase
// of the plan on absolute boundaries from StartAt, no exchange, nothing
// judged (brk merge judges the reports).
func (s *Sharding) free() bool { return s.Coordinator == "" && !s.StartAt.IsZero() }

// allowance is the time after each phase's admission (default timeout + 1s).
func (s *Sharding) allowance(p Plan) time.Duration {
	if s.Allowance > 0 {
		return s.Allowance
	}
	return p.Timeout + time.Second
}

// localConns is this shard's share of the engine's connection owners, the
// index among the run's connections of its first (a requests-test level is
// spread over all of them), and its thread count.
func (s *Sharding) localConns(p Plan, m Mode, threads int) (conns, base, thr int) {
	conns = max(1, shard.Share(p.Conns, s.Index, s.Count))
	for i := range s.Index {
		base += shard.Share(p.Conns, i, s.Count)
	}
	limit := max(1, shard.Share(loadOf(m).firstConns(p), s.Index, s.Count)) // phase 0's share of the connections
	return conns, base, max(1, min(threads, limit))
}

// targetHash names what every shard must send and check that its
// report does not hold: method, headers, body, checks, protocol.
func targetHash(t *Target) string {
	body := sha256.Sum256(t.Body)
	v := struct {
		Method       string
		Headers      []Header
		Body         string
		ExpectStatus []int
		ExpectBody   []byte
		ExpectEcho   bool
		HTTP2        bool      // the protocol, as the bool Target.HTTP2 was: Protocol.hashedHTTP2 keeps the hash byte-identical across versions
		Mix          []mixHash `json:",omitempty"` // mix_run.go
	}{t.Method, t.Headers, hex.EncodeToString(body[:]), t.ExpectStatus, t.ExpectBody, t.ExpectEcho, t.Proto().hashedHTTP2(), mixHashes(t)}
	b, _ := json.Marshal(v)
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// shardPlanOf is the plan a shard's report embeds: the schedule of p,
// its allowance, and the address splan dialled.
func shardPlanOf(s *Sharding, p Plan, splan judge.Plan) Plan {
	return Plan{Start: p.Start, Pace: p.Pace, Max: p.Max, Phase: p.Phase, Shard: &Sharding{Allowance: s.allowance(p)},
		MaxP99: p.MaxP99, MaxP999: p.MaxP999, Refine: p.Refine, Repeat: p.Repeat, addr: splan.Addr,
		Search: p.Search, Budget: p.Budget}
}

// reportPlanHash names everything every shard must agree on, from the
// values its report gives (r's own fields and the embedded plan p, in
// its report form; the
// dialled addr may differ between boxes) and the target's hash: the
// shards compare it when they join, brk merge recomputes it from each
// report, so that a report whose plan was edited is refused.
func reportPlanHash(target string, r *Result, count int, p Plan) string {
	sp := p.shardForm()
	sp.Addr = ""
	v := struct {
		Target          string
		Test            Mode
		URL             string
		Conns, Requests int
		TimeoutMs       float64
		Accept          string
		Count           int
		Plan            shardPlan
		// The rate test's slots and schedule.
		RateDepth int    `json:",omitempty"`
		Arrivals  string `json:",omitempty"`
		Seed      uint64 `json:",omitempty"`
	}{target, r.Test, r.URL, r.Conns, r.Requests, r.TimeoutMs, r.Accept, count, sp, r.RateDepth, r.Arrivals, r.Seed}
	b, _ := json.Marshal(v)
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// planHash is reportPlanHash of the run about to start (res: its report
// as far as it is set up).
func planHash(t *Target, p Plan, s *Sharding, splan judge.Plan, res *Result) string {
	return reportPlanHash(targetHash(t), res, s.Count, shardPlanOf(s, p, splan))
}

// shardConfig is the coordinated run's configuration of this shard
// (internal/enginerun joins it with the engine as this shard's part of every
// phase and the engine's plan).
func shardConfig(s *Sharding, t *Target, p Plan, m Mode, splan judge.Plan, res *Result) *shard.Config {
	spec := s.spec()
	local := func(ps judge.PhaseSpec) judge.PhaseSpec {
		ps.Level = loadOf(m).shardLevel(ps.Level, spec.Index, spec.Count)
		if ps.Level == 0 {
			ps.FailFast = false // nothing to set up on this shard in this phase
		}
		return ps
	}
	return &shard.Config{
		Spec: spec, Addr: s.Coordinator, Listen: s.Listen, Token: s.Token,
		PlanHash: planHash(t, p, s, splan, res), StartAt: s.StartAt,
		Tolerance: s.Tolerance, Allowance: s.allowance(p), JoinTimeout: s.JoinTimeout,
		LocalSpec: local,
	}
}

// shardInfo is this shard's report section at the end of the run.
func shardInfo(s *Sharding, t *Target, p Plan, splan judge.Plan, ph *shard.Lockstep, res *Result) *ShardInfo {
	info := &ShardInfo{Index: s.Index, Count: s.Count, PlanHash: planHash(t, p, s, splan, res), TargetHash: targetHash(t),
		Plan: shardPlanOf(s, p, splan)}
	if st := ph.StartAt(); !st.IsZero() {
		info.StartAt = st.UTC().Format(time.RFC3339Nano)
	}
	if ls := ph.Shards(); len(ls) > 0 {
		info.StartLatenessMs, info.MaxLatenessMs = ms(ls[0].Start), ms(ls[0].Max)
	}
	return info
}

// shardSummaries is shard 0's "shards": every shard's lateness and
// worker threads (its own: threads; another's: as its measurements
// counted them), as brk merge gives them from the reports.
func shardSummaries(ph *shard.Lockstep, threads int) []ShardSummary {
	var out []ShardSummary
	for _, l := range ph.Shards() {
		s := ShardSummary{Index: l.Index, StartLatenessMs: ms(l.Start), MaxLatenessMs: ms(l.Max), Threads: l.Threads}
		if l.Index == 0 {
			s.Threads = threads
		}
		out = append(out, s)
	}
	return out
}

// MergeError is a set of shard reports that cannot be merged (exit 2).
type MergeError struct{ Msg string }

func (e *MergeError) Error() string { return e.Msg }

// MergeReports merges the reports of every shard of one sharded run
// (names label them in errors) into one report of the same schema, with
// "shards": each phase's raw measurements are merged (counts and
// integrals add, histograms merge) and judged again by the verdict code
// of a single box, so the verdict, levels and exit code are recomputed,
// never averaged. It refuses a missing or duplicate shard index, reports
// of different plans or start times, and a report without its shard
// section or raw measurements. Its reasons and refusals name the
// settings they suggest as this package's fields (a zero Names); with
// MergeReportsNamed they name them otherwise.
func MergeReports(reports []*Result, labels []string) (*Result, error) {
	return MergeReportsNamed(reports, labels, Names{})
}

// MergeReportsNamed is MergeReports whose reasons and refusals name the
// settings they suggest with names (Plan.Names), as the shards' own
// reasons did: brk merge gives its flags.
func MergeReportsNamed(reports []*Result, labels []string, names Names) (*Result, error) {
	bad := func(format string, args ...any) (*Result, error) {
		return nil, &MergeError{Msg: fmt.Sprintf(format, args...)}
	}
	if len(reports) == 0 {
		return bad("no shard reports to merge")
	}
	name := func(i int) string {
		if i < len(labels) {
			return labels[i]
		}
		return fmt.Sprintf("report %d", i+1)
	}
	byIndex := map[int]int{}
	var first *ShardInfo
	for i, r := range reports {
		s := r.Shard
		if s == nil {
			return bad("%s is not a shard's report (no \"shard\" section): run each shard with %s", name(i), names.Filled().Shard)
		}
		if first == nil {
			first = s
		}
		switch {
		case s.Count != first.Count:
			return bad("%s is shard %d of %d, but %s is of %d: not the same run", name(i), s.Index, s.Count, name(0), first.Count)
		case s.PlanHash != reportPlanHash(s.TargetHash, r, s.Count, s.Plan):
			// brk merge judges by the embedded plan: it must be the plan
			// the shards agreed on.
			return bad("%s: its embedded plan does not match its plan hash %.12s (the report was edited, or written by another brk version)", name(i), s.PlanHash)
		case s.PlanHash != first.PlanHash:
			return bad("%s has another plan than %s (plan hash %.12s vs %.12s)", name(i), name(0), s.PlanHash, first.PlanHash)
		case s.StartAt != first.StartAt:
			return bad("%s started at %q, %s at %q: not the same run", name(i), s.StartAt, name(0), first.StartAt)
		case s.Index < 0 || s.Index >= s.Count:
			return bad("%s has shard index %d, not in 0..%d", name(i), s.Index, s.Count-1)
		}
		if j, dup := byIndex[s.Index]; dup {
			return bad("duplicate shard index %d: %s and %s", s.Index, name(j), name(i))
		}
		byIndex[s.Index] = i
	}
	ordered, err := orderShards(reports, byIndex, first.Count)
	if err != nil {
		return nil, err
	}
	r0 := ordered[0]
	acc, err := judge.ParseAccept(r0.Accept)
	if err != nil {
		return bad("%s: accept_pct %v", name(byIndex[0]), err)
	}
	mode := r0.Test
	if !mode.Valid() {
		return bad("%s: unknown test %q", name(byIndex[0]), mode)
	}
	// The embedded plan with the report's conns and timeout: what the
	// merged phases are judged by.
	p := first.Plan
	p.Conns = r0.Conns
	var d durations
	if p.Timeout = d.ms("timeout_ms", r0.TimeoutMs); d.err != nil {
		return bad("%s: %v", name(byIndex[0]), d.err)
	}
	if p.Shard == nil {
		p.Shard = &Sharding{}
	}
	p.Conns = levelConns(p, mode)
	p.Names = names
	splan := enginePlan(p, mode, acc, p.addr)
	if r0.Shard.Unjudged {
		// Shards without a coordinator ran each level of the ramp once:
		// the merge judges each on that run, with nothing to confirm it.
		splan.Repeat = 1
	}
	res := &Result{Schema: 1, Test: mode, URL: r0.URL, Protocol: r0.Protocol, TLS: r0.TLS, Conns: r0.Conns,
		Requests: r0.Requests, TimeoutMs: r0.TimeoutMs, Accept: r0.Accept, Phases: []*PhaseStats{},
		Plan: r0.Plan, Version: Version(), Command: r0.Command, StartedAt: r0.StartedAt}
	res.Plan.Threads = 0
	for k, r := range ordered {
		res.Threads += r.Threads
		res.Plan.Threads += r.Plan.Threads
		res.Shards = append(res.Shards, ShardSummary{Index: k, StartLatenessMs: r.Shard.StartLatenessMs,
			MaxLatenessMs: r.Shard.MaxLatenessMs, Threads: r.Threads})
	}
	recs := make([]shard.Report, len(ordered))
	for k, r := range ordered {
		recs[k] = shardReport(r)
	}
	rh := &replayObserver{res: res}
	out := (&running{res: res}).finishOutcome(shard.Replay(splan, recs, rh))
	// Shards without a coordinator ran every phase of the plan: those past
	// the merged run's end are reported, merged, as run but not judged.
	end := len(out.Phases)
	for n := end; ; n++ {
		m, ps := shard.Unjudged(recs, n)
		if m == nil {
			break
		}
		st := phaseStats(&judge.Judged{Judgement: judge.Judgement{Verdict: judge.Done, NotJudged: true, Reason: fmt.Sprintf("run but not judged: the merged run ended at phase %d", end-1)},
			Index: n, Depth: ps.Depth, Target: ps.Level, Run: m})
		st.Role = ps.Role
		out.Phases = append(out.Phases, st)
	}
	nameMergedTargets(out, ordered[0]) // mix_run.go
	return out, nil
}

// orderShards is the reports in shard order (byIndex: a report's index
// in reports by its shard index), or a *MergeError naming the missing
// shard indexes of count.
func orderShards(reports []*Result, byIndex map[int]int, count int) ([]*Result, error) {
	var missing []string
	for k := 0; k < count; k++ {
		if _, ok := byIndex[k]; !ok {
			missing = append(missing, fmt.Sprint(k))
		}
	}
	if len(missing) > 0 {
		return nil, &MergeError{Msg: fmt.Sprintf("missing shard index %s of %d shards", strings.Join(missing, ", "), count)}
	}
	ordered := make([]*Result, count)
	for k, i := range byIndex {
		ordered[k] = reports[i]
	}
	return ordered, nil
}

// shardReport is a shard report's phases as shard.Replay reads them.
func shardReport(r *Result) shard.Report {
	rep := shard.Report{}
	if r.Reason != "" {
		rep.Ended = string(r.Verdict) + ", " + r.Reason
	}
	for _, ps := range r.Phases {
		rep.Phases = append(rep.Phases, shard.Recorded{Index: ps.Index, Level: ps.Level, Depth: ps.Depth, Role: ps.Role,
			M: measurementOf(ps.Raw)})
	}
	return rep
}

// replayObserver keeps each phase a merge's replay judged as the
// Result's phase.
type replayObserver struct{ res *Result }

func (h *replayObserver) PhaseStarted(int, int, int, judge.Role, judge.Bracket, time.Duration) {}
func (h *replayObserver) PhaseFinished(j *judge.Judged) {
	h.res.Phases = append(h.res.Phases, phaseStats(j))
}

// shardRun is a running shard's part, for its report.
type shardRun struct {
	s     *Sharding
	t     Target
	p     Plan
	m     Mode
	splan judge.Plan
	ph    *shard.Lockstep
}

func (r *shardRun) report(res *Result) {
	res.Shard = shardInfo(r.s, &r.t, r.p, r.splan, r.ph, res)
	if r.s.free() {
		// Nothing judged: no bracket; a plan run to the end is done.
		res.Shard.Unjudged = true
		res.LastAccepted, res.FirstRejected, res.FinalPair = nil, nil, nil
		if res.Verdict == VerdictDone {
			res.Reason = fmt.Sprintf("shard %d/%d ran its plan to the end (%d phases) without a coordinator; it judges nothing: the verdict is brk merge's",
				r.s.Index, r.s.Count, len(res.Phases))
		}
		return
	}
	if r.s.Index == 0 {
		res.Shards = shardSummaries(r.ph, res.Threads)
	}
}

// ParseShard reads a shard's place, "I/N" (shard I of N, e.g. 0/3), as
// Sharding's Index and Count.
func ParseShard(v string) (index, count int, err error) {
	s, err := shard.ParseSpec(v)
	return s.Index, s.Count, err
}

// ErrNoShardIndex is ShardFromEnv's error when JOB_COMPLETION_INDEX is
// not set.
var ErrNoShardIndex = shard.ErrNoIndexEnv

// ShardFromEnv is shard I of count, I read from JOB_COMPLETION_INDEX (set
// by a Kubernetes Indexed Job).
func ShardFromEnv(count int) (index, n int, err error) {
	s, err := shard.FromEnv(count)
	return s.Index, s.Count, err
}

// ParseStartAt reads Sharding.StartAt: a Unix time in milliseconds or an
// RFC 3339 time.
func ParseStartAt(v string) (time.Time, error) { return shard.ParseStartAt(v) }
