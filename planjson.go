package brk

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"time"
)

// A Plan has two JSON forms, both of one Plan value: the report's "plan"
// (MarshalJSON: the plan as run, with its test, protocol and threads, the
// phase in seconds) and a shard's "shard.plan" (ShardInfo's MarshalJSON:
// the schedule the shards agreed on, in milliseconds, hashed by
// reportPlanHash). Both go through an unexported struct that holds the
// form's fields and tags; durations are written as float seconds or
// milliseconds and read back rounded to the nanosecond, so that
// marshalling, unmarshalling and marshalling again gives the same bytes.

// reportPlan is a Plan's form in a report ("plan"): what was asked, with
// defaults filled in.
type reportPlan struct {
	Test        Mode   `json:"test"`
	Protocol    string `json:"protocol"`
	Connections int    `json:"connections,omitempty"` // requests and rate tests
	Ramp        string `json:"ramp"`                  // linear or search
	Start       int    `json:"start"`
	Pace        int    `json:"pace"`
	Max         int    `json:"max"` // 0: none
	// The search (ramp "search"): the growth factor and the resolution
	// (a total, or a percentage of the highest accepted level).
	Growth        float64 `json:"growth,omitempty"`
	Resolution    int     `json:"resolution,omitempty"`
	ResolutionPct float64 `json:"resolution_pct,omitempty"`
	BudgetS       float64 `json:"budget_s,omitempty"` // 0: none
	PhaseS        float64 `json:"phase_s"`
	TimeoutMs     float64 `json:"timeout_ms"`
	AcceptPct     float64 `json:"accept_pct"` // a number, unlike the top level's text
	Threads       int     `json:"threads"`
	Requests      int     `json:"requests_per_connection,omitempty"` // connections test
	KeepAlive     bool    `json:"keep_alive,omitempty"`              // connections test
	MaxP99Ms      float64 `json:"max_p99_ms,omitempty"`
	MaxP999Ms     float64 `json:"max_p999_ms,omitempty"`
	Refine        bool    `json:"refine,omitempty"`
	Repeat        int     `json:"repeat,omitempty"`
	RateDepth     int     `json:"rate_depth,omitempty"` // rate test
	Arrivals      string  `json:"arrivals,omitempty"`   // rate test
	Seed          uint64  `json:"seed,omitempty"`       // rate test, poisson
}

// shardPlan is a Plan's form in a shard's report ("shard.plan"): the
// schedule of a sharded run, beside the report's own test, conns,
// timeout_ms and accept_pct.
type shardPlan struct {
	Start       int     `json:"start"`
	Pace        int     `json:"pace"`
	Max         int     `json:"max"`
	PhaseMs     float64 `json:"phase_ms"`
	AllowanceMs float64 `json:"allowance_ms"`
	MaxP99Ms    float64 `json:"max_p99_ms,omitempty"`
	MaxP999Ms   float64 `json:"max_p999_ms,omitempty"`
	Refine      bool    `json:"refine,omitempty"`
	Repeat      int     `json:"repeat,omitempty"`
	Addr        string  `json:"addr"`
	// Search is the adaptive search's parameters (nil: the linear ramp),
	// BudgetMs the run's budget (0: none).
	Search   *Search `json:"search,omitempty"`
	BudgetMs float64 `json:"budget_ms,omitempty"`
}

// Mode is the test a recorded plan ran (a Result's Plan, or one read from
// a report's "plan"); "" for a plan that was not recorded.
func (p Plan) Mode() Mode { return p.mode }

// Protocol is the protocol a recorded plan ran over ("http/1.1" or "h2";
// a Result's Plan, or one read from a report's "plan"); "" for a plan
// that was not recorded.
func (p Plan) Protocol() string { return p.protocol }

// MarshalJSON writes p as a report's "plan" object (Result.Plan): the
// phase and budget in seconds, the timeout and latency limits in
// milliseconds, the ramp "search" where p.Search is set, accept_pct 0 for
// AcceptAny.
func (p Plan) MarshalJSON() ([]byte, error) {
	rp := reportPlan{
		Test: p.mode, Protocol: p.protocol, Connections: p.Conns, Ramp: "linear", Start: p.Start, Pace: p.Pace, Max: p.Max,
		BudgetS: p.Budget.Seconds(), PhaseS: p.Phase.Seconds(), TimeoutMs: ms(p.Timeout), AcceptPct: max(p.Accept, 0),
		Threads: p.Threads, Requests: p.Requests, KeepAlive: p.KeepAlive, MaxP99Ms: ms(p.MaxP99), MaxP999Ms: ms(p.MaxP999),
		Refine: p.Refine, Repeat: p.Repeat, RateDepth: p.RateDepth, Arrivals: p.Arrivals, Seed: p.Seed,
	}
	if s := p.Search; s != nil {
		rp.Ramp, rp.Growth, rp.Resolution, rp.ResolutionPct = "search", s.Growth, s.Resolution, s.ResolutionPct
	}
	return marshalForm(rp)
}

// UnmarshalJSON reads a report's "plan" object (MarshalJSON's inverse):
// its test and protocol are p.Mode() and p.Protocol(), accept_pct 0 is
// AcceptAny, a duration beyond time.Duration's range is refused, and
// null changes nothing.
func (p *Plan) UnmarshalJSON(b []byte) error {
	if string(b) == "null" { // as encoding/json does: no change
		return nil
	}
	var rp reportPlan
	if err := json.Unmarshal(b, &rp); err != nil {
		return err
	}
	var d durations
	*p = Plan{
		mode: rp.Test, protocol: rp.Protocol, Conns: rp.Connections, Start: rp.Start, Pace: rp.Pace, Max: rp.Max,
		Budget: d.seconds("budget_s", rp.BudgetS), Phase: d.seconds("phase_s", rp.PhaseS),
		Timeout: d.ms("timeout_ms", rp.TimeoutMs), Accept: rp.AcceptPct, Threads: rp.Threads,
		Requests: rp.Requests, KeepAlive: rp.KeepAlive,
		MaxP99: d.ms("max_p99_ms", rp.MaxP99Ms), MaxP999: d.ms("max_p999_ms", rp.MaxP999Ms),
		Refine: rp.Refine, Repeat: rp.Repeat, RateDepth: rp.RateDepth, Arrivals: rp.Arrivals, Seed: rp.Seed,
	}
	if p.Accept == 0 {
		p.Accept = AcceptAny
	}
	if rp.Ramp == "search" {
		p.Search = &Search{Growth: rp.Growth, Resolution: rp.Resolution, ResolutionPct: rp.ResolutionPct}
	}
	return d.err
}

// shardForm is p's form in a shard's report: p.Shard's Allowance (none:
// 0) and the dialled address beside the schedule.
func (p Plan) shardForm() shardPlan {
	sp := shardPlan{Start: p.Start, Pace: p.Pace, Max: p.Max, PhaseMs: ms(p.Phase),
		MaxP99Ms: ms(p.MaxP99), MaxP999Ms: ms(p.MaxP999), Refine: p.Refine, Repeat: p.Repeat, Addr: p.addr,
		Search: p.Search, BudgetMs: ms(p.Budget)}
	if p.Shard != nil {
		sp.AllowanceMs = ms(p.Shard.Allowance)
	}
	return sp
}

// plan is the Plan that sp holds (shardForm's inverse): its Shard holds
// only the Allowance.
func (sp shardPlan) plan() (Plan, error) {
	var d durations
	p := Plan{Start: sp.Start, Pace: sp.Pace, Max: sp.Max, Search: sp.Search,
		Budget: d.ms("budget_ms", sp.BudgetMs), Phase: d.ms("phase_ms", sp.PhaseMs),
		MaxP99: d.ms("max_p99_ms", sp.MaxP99Ms), MaxP999: d.ms("max_p999_ms", sp.MaxP999Ms),
		Refine: sp.Refine, Repeat: sp.Repeat, addr: sp.Addr,
		Shard: &Sharding{Allowance: d.ms("allowance_ms", sp.AllowanceMs)}}
	return p, d.err
}

// shardInfoFields is ShardInfo without its JSON methods.
type shardInfoFields ShardInfo

// MarshalJSON writes s as a report's "shard" object, its Plan in the
// shard form (milliseconds, the allowance and the dialled addr).
func (s ShardInfo) MarshalJSON() ([]byte, error) {
	// The outer Plan shadows the embedded one; Unjudged follows it, as in
	// ShardInfo.
	return marshalForm(struct {
		*shardInfoFields
		Plan     shardPlan `json:"plan"`
		Unjudged bool      `json:"unjudged,omitempty"`
	}{(*shardInfoFields)(&s), s.Plan.shardForm(), s.Unjudged})
}

// UnmarshalJSON reads a report's "shard" object (MarshalJSON's inverse).
func (s *ShardInfo) UnmarshalJSON(b []byte) error {
	v := struct {
		*shardInfoFields
		Plan shardPlan `json:"plan"`
	}{shardInfoFields: (*shardInfoFields)(s)}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	p, err := v.Plan.plan()
	s.Plan = p
	return err
}

// marshalForm is v's JSON without HTML escaping (the enclosing encoder
// escapes, or not, as it is set).
func marshalForm(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// durations reads a form's float seconds and milliseconds as durations,
// rounded to the nanosecond, keeping the first value out of range.
type durations struct{ err error }

func (d *durations) seconds(field string, v float64) time.Duration { return d.of(field, v, 1e9) }

func (d *durations) ms(field string, v float64) time.Duration { return d.of(field, v, 1e6) }

func (d *durations) of(field string, v, unit float64) time.Duration {
	ns := math.Round(v * unit)
	if !(ns >= math.MinInt64 && ns < math.MaxInt64) {
		if d.err == nil {
			d.err = fmt.Errorf("plan %s %v: beyond a duration's range", field, v)
		}
		return 0
	}
	return time.Duration(ns)
}
