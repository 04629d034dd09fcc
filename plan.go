package brk

import (
	"math"
	"strconv"
	"time"

	"github.com/brk-bench/brk/internal/judge"
	"github.com/brk-bench/brk/internal/machine"
	"github.com/brk-bench/brk/internal/shard"
)

// Defaults fills zero fields of p with their defaults, all but the
// search's first level, which depends on the test (DefaultsFor). With a
// Load or a Ramp set, their fields take the defaults (Requests.Conns,
// Rate.Conns, Linear.Pace, Search.Growth and ResolutionPct) in place of
// the older fields.
func (p *Plan) Defaults() {
	if p.Load != nil {
		if !isNilPointer(p.Load) { // Run refuses a nil one
			p.Load = p.Load.withDefaults()
		}
	} else if p.Conns == 0 {
		p.Conns = DefaultConns
	}
	switch {
	case isNilPointer(p.Ramp): // Run refuses it
	case p.Ramp != nil:
		p.Ramp = p.Ramp.withDefaults()
		if r := p.Ramp.settings(); r.search == nil && p.Start == 0 {
			p.Start = r.pace
		}
	case p.Search != nil:
		c := p.Search.withDefaults().(Search)
		p.Search = &c
	default:
		if p.Pace == 0 {
			p.Pace = 1
		}
		if p.Start == 0 {
			p.Start = p.Pace
		}
	}
	if p.Phase == 0 {
		p.Phase = 10 * time.Second
	}
	if p.Timeout == 0 {
		p.Timeout = time.Second
	}
	if p.Accept == 0 {
		p.Accept = DefaultAccept
	}
	if p.Repeat == 0 {
		p.Repeat = DefaultRepeat
	}
}

// searches reports whether p's levels are the search's (Plan.Ramp or
// the older Plan.Search).
func (p Plan) searches() bool {
	if p.Ramp != nil && !isNilPointer(p.Ramp) {
		return p.Ramp.settings().search != nil
	}
	return p.Search != nil
}

// DefaultRepeat is the most runs of one level (Plan.Repeat) by default: a
// level that must be confirmed runs until 2 of 3 runs agree.
const DefaultRepeat = 3

// DefaultsFor is Defaults with the search's first level of test m
// (DefaultSearchStart).
func (p *Plan) DefaultsFor(m Mode) {
	p.Defaults()
	if p.searches() && p.Start == 0 {
		p.Start = DefaultSearchStart(m)
		if p.Max > 0 {
			p.Start = min(p.Start, p.Max)
		}
	}
}

// validateRamp checks what the choice of levels shares across the tests:
// the search's parameters and the budget.
func validateRamp(p Plan) error {
	if s := p.Search; s != nil {
		switch {
		case p.Pace != 0:
			return refuse("%s applies to the linear ramp, not to %s", fPace, fSearch)
		case math.IsNaN(s.Growth) || s.Growth <= 1 || s.Growth > 1000:
			return refuse("%s %s: want a factor above 1 (at most 1000), such as 2", fGrowth, strconv.FormatFloat(s.Growth, 'g', -1, 64))
		case s.Resolution < 0:
			return refuse("%s must not be negative", fResolution)
		case s.Resolution > 0 && s.ResolutionPct != 0:
			return refuse("%s and %s exclude each other", fResolution, fResPct)
		case math.IsNaN(s.ResolutionPct) || s.ResolutionPct < 0 || s.ResolutionPct > 100:
			return refuse("%s %s: want a percentage from 0 to 100", fResPct, strconv.FormatFloat(s.ResolutionPct, 'g', -1, 64))
		}
	}
	switch {
	case p.Budget < 0:
		return refuse("%s must not be negative", fBudget)
	case p.Budget > 0 && p.Budget < p.Phase+p.Timeout:
		return refuse("%s (%s) is shorter than one phase (%s %s + %s %s of drain)", fBudget, p.Budget, fPhase, p.Phase, fTimeout, p.Timeout)
	}
	return nil
}

// validatePlan checks a plan with its defaults filled in against the
// engine's bounds and turns its acceptance threshold into a fraction: the
// checks every test shares, then the test's own (its entry's checks, in
// order).
func validatePlan(p Plan, m Mode) (judge.Accept, error) {
	if err := validateSharper(p); err != nil {
		return judge.Accept{}, err
	}
	if err := validateRamp(p); err != nil {
		return judge.Accept{}, err
	}
	for _, c := range loadOf(m).checks() {
		if err := c(p); err != nil {
			return judge.Accept{}, err
		}
	}
	return acceptFraction(p.Accept)
}

// The plan's checks, each refusing one thing; a test's Load lists those
// that apply to it (load_rules.go).

func noRateFields(p Plan) *PlanError {
	if p.RateDepth != 0 || p.Arrivals != "" || p.Seed != 0 {
		return refuse("%s, %s and %s apply to the rate test only", fRateDepth, fArrivals, fSeed)
	}
	return nil
}

func noRequests(p Plan) *PlanError {
	if p.Requests != 0 {
		return refuse("%s applies to the connections test", fRequests)
	}
	return nil
}

func connsAtLeast1(p Plan) *PlanError {
	if p.Conns < 1 {
		return refuse("%s must be at least 1", fConns)
	}
	return nil
}

// startPaceAtLeast1 refuses a first level or step below 1; unit follows
// the words (" (requests/s)").
func startPaceAtLeast1(unit string) planCheck {
	return func(p Plan) *PlanError {
		if p.Start < 1 || p.Pace < 1 && p.Search == nil {
			return refuse("%s and %s must be at least 1"+unit, fStart, fPace)
		}
		return nil
	}
}

func maxNotNegative(p Plan) *PlanError {
	if p.Max < 0 {
		return refuse("%s must not be negative", fMax)
	}
	return nil
}

func startNotAboveMax(p Plan) *PlanError {
	if p.Max > 0 && p.Start > p.Max {
		return refuse("%s (%d) is above %s (%d)", fStart, p.Start, fMax, p.Max)
	}
	return nil
}

func phaseAtLeast1ms(p Plan) *PlanError {
	if p.Phase < time.Millisecond {
		return refuse("%s must be at least 1ms", fPhase)
	}
	return nil
}

func timeoutAtLeast1ms(p Plan) *PlanError {
	if p.Timeout < time.Millisecond {
		return refuse("%s must be at least 1ms", fTimeout)
	}
	return nil
}

func threadsNotNegative(p Plan) *PlanError {
	if p.Threads < 0 {
		return refuse("%s must not be negative", fThreads)
	}
	return nil
}

func threadsWithinConns(p Plan) *PlanError {
	if p.Threads > p.Conns {
		return refuse("%s (%d) is more than %s (%d): a thread needs a connection", fThreads, p.Threads, fConns, p.Conns)
	}
	return nil
}

func levelsWithinEngine(p Plan) *PlanError {
	if p.Max > judge.MaxLevel || p.Start > judge.MaxLevel {
		return refuse("%s/%s above %d are not supported", fStart, fMax, judge.MaxLevel)
	}
	return nil
}

// perConnLevelsWithinEngine is levelsWithinEngine for a test whose
// --start and --max count per connection (the requests test): its
// refusal says so.
func perConnLevelsWithinEngine(p Plan) *PlanError {
	if n := max(p.Max, p.Start); n > judge.MaxLevel {
		return refuse("%s/%s above %d are not supported: they count requests per connection (%d on each of %s is %d outstanding)",
			fStart, fMax, judge.MaxLevel, n, countOf(p.Conns, "connection"), int64(n)*int64(p.Conns))
	}
	return nil
}

func connsWithinEngine(p Plan) *PlanError {
	if p.Conns > judge.MaxLevel {
		return refuse("%s above %d is not supported", fConns, judge.MaxLevel)
	}
	return nil
}

func outstandingWithinEngine(p Plan) *PlanError {
	if p.Conns*max(p.Start, p.Max) > judge.MaxOutstanding {
		return refuse("%s × %s/%s above %d outstanding requests is not supported", fConns, fStart, fMax, judge.MaxOutstanding)
	}
	return nil
}

func rateWithinEngine(p Plan) *PlanError {
	if p.Max > judge.MaxRate || p.Start > judge.MaxRate {
		return refuse("%s/%s above %d requests/s are not supported", fStart, fMax, judge.MaxRate)
	}
	return nil
}

func rateDepthAtLeast1(p Plan) *PlanError {
	if p.RateDepth < 1 {
		return refuse("%s must be at least 1", fRateDepth)
	}
	return nil
}

func slotsWithinEngine(p Plan) *PlanError {
	if p.RateDepth > judge.MaxLevel || p.Conns*p.RateDepth > judge.MaxOutstanding {
		return refuse("%s × %s above %d outstanding requests is not supported", fConns, fRateDepth, judge.MaxOutstanding)
	}
	return nil
}

func arrivalsKnown(p Plan) *PlanError {
	if p.Arrivals != "uniform" && p.Arrivals != "poisson" {
		return refuse("%s %q: want uniform or poisson", fArrivals, p.Arrivals)
	}
	return nil
}

func seedWithinJSON(p Plan) *PlanError {
	if p.Seed > MaxSeed {
		return refuse("%s %d is above %d (2^53−1): the JSON report could not carry it exactly (jq and JavaScript read its numbers as doubles)", fSeed, p.Seed, uint64(MaxSeed))
	}
	return nil
}

// validateSharper checks what every test shares: the latency limits,
// the runs of a level and the ServerPIDs processes.
func validateSharper(p Plan) error {
	switch {
	case p.MaxP99 < 0 || p.MaxP999 < 0:
		return refuse("%s and %s must not be negative", fMaxP99, fMaxP999)
	case p.Repeat < 0:
		return refuse("%s must be at least 1", fRepeat)
	}
	if err := machine.CheckProcesses(p.ServerPIDs); err != nil {
		return refuse("%s %v", fServerPIDs, err)
	}
	return nil
}

// acceptFraction is Plan.Accept as the exact fraction that its shortest
// decimal form reads as (99.99 → 9999/10000); AcceptAny is 0/100.
func acceptFraction(v float64) (judge.Accept, error) {
	if v == AcceptAny {
		return judge.Accept{Num: 0, Den: 100}, nil
	}
	s := strconv.FormatFloat(v, 'f', -1, 64)
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return judge.Accept{}, refuse("%s %s: want a percentage such as 99.99", fAccept, s)
	case v < 0:
		return judge.Accept{}, refuse("%s %s: must not be negative (AcceptAny accepts every phase)", fAccept, s)
	case v > 100:
		return judge.Accept{}, refuse("%s %s: must be at most 100", fAccept, s)
	}
	acc, err := judge.ParseAccept(s)
	if err != nil { // in 0..100, so too many decimals
		return judge.Accept{}, refuse("%s %s: at most 9 decimals", fAccept, s)
	}
	return acc, nil
}

// AcceptWarning is the plan-time warning of an Accept below 1, or nil:
// Accept is a percentage, so Accept 0.9 asks that 0.9 % of requests
// succeed, where a fraction's 0.9 (90 %) was probably meant. It does not
// refuse the plan (Check and the runs accept it: 0.9 % is a value of its
// own); it is a *PlanError only so that it names its field like a
// refusal, and a caller can Reword it, as the CLI words its warning.
func AcceptWarning(p Plan) *PlanError {
	if !(p.Accept > 0 && p.Accept < 1) {
		return nil
	}
	v := strconv.FormatFloat(p.Accept, 'f', -1, 64)
	return refuse("%s %s means %s %% of requests must succeed, not %s %%; %s is a percentage",
		fAccept, v, v, strconv.FormatFloat(p.Accept*100, 'g', -1, 64), fAccept)
}

// RateSlotWarning is the rate test's plan-time warning, or nil: by
// Little's law the requests outstanding at once are rate × latency, so a
// run whose connections × depth slots are below its highest planned rate
// × timeout can fail from a lack of slots alone (arrivals waiting past
// their deadline) before the server is at fault. It does not refuse the
// plan (Validate and Run accept it); it is a *PlanError only so that it
// names its fields like a refusal, and a caller can Reword them.
func RateSlotWarning(p Plan) *PlanError {
	r, _, names, err := resolveLoad(p, "")
	if err != nil { // Run refuses the plan itself
		return nil
	}
	if w := rateSlotWarning(r); w != nil {
		return renamed(w, names).(*PlanError) // a Rate's fields by its names
	}
	return nil
}

// rateSlotWarning is RateSlotWarning of a plan whose settings are in its
// older fields.
func rateSlotWarning(p Plan) *PlanError {
	p.Defaults()
	if p.RateDepth == 0 {
		p.RateDepth = 1
	}
	rate, which := p.Start, fStart
	if p.Max > 0 {
		rate, which = p.Max, fMax
	}
	conns, n := p.Conns, 1
	if s := p.Shard; s != nil && s.Count > 1 {
		// Per shard: its connections against its share of the arrivals.
		conns, n = max(1, shard.Share(p.Conns, s.Index, s.Count)), s.Count
	}
	slots := conns * p.RateDepth
	share := float64(rate) / float64(n)
	need := share * p.Timeout.Seconds()
	if float64(slots) >= need {
		return nil
	}
	slotsText := countOf(slots, "slot")
	if n > 1 {
		return refuse("shard %d/%d: its %d of %s %d connections × %s %d = %s is below its share of %s %d requests/s (%.0f/s) × %s %s = %.0f outstanding (Little's law): from %.0f requests/s a shard on, a slow response can fail the run from a lack of slots alone",
			p.Shard.Index, n, conns, fConns, p.Conns, fRateDepth, p.RateDepth, slotsText, which, rate, share, fTimeout, p.Timeout, need,
			float64(slots)/p.Timeout.Seconds())
	}
	return refuse("%s %d × %s %d = %s is below %s %d requests/s × %s %s = %.0f outstanding (Little's law): from %.0f requests/s on, a slow response can fail the run from a lack of slots alone",
		fConns, p.Conns, fRateDepth, p.RateDepth, slotsText, which, rate, fTimeout, p.Timeout, need, float64(slots)/p.Timeout.Seconds())
}

// ParseAccept reads an acceptance threshold's text ("99.99", "99.99%",
// "0") as Plan.Accept: the float64 nearest to the exact fraction the text
// spells, whose shortest form Check reads back as that same fraction; 0
// is AcceptAny.
func ParseAccept(text string) (float64, error) {
	acc, err := judge.ParseAccept(text)
	if err != nil {
		return 0, err
	}
	if acc.Num == 0 {
		return AcceptAny, nil
	}
	return acc.Pct(), nil
}

// countOf is "1 thing" or "N things".
func countOf(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return strconv.Itoa(n) + " " + thing + "s"
}
