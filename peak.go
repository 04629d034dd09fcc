package brk

import "slices"

// Peak is the highest throughput of successful responses one phase had,
// whatever its verdict: what the server gave at most, beside the break of
// the SLA.
type Peak struct {
	Phase    int     `json:"phase"`
	Level    int     `json:"level"`
	OKPerSec float64 `json:"ok_per_sec"` // the phase's requests_per_sec: successes ÷ its duration
	P99Ms    float64 `json:"p99_ms"`
	Accepted bool    `json:"accepted"`
}

// Knee is the lowest level past which doubling the load stopped paying:
// the step to about twice it (the lowest level run at 2× to 3× it) added
// less than KneeGain throughput while the p99 rose by at least KneeRise,
// what Little's law predicts once the server is saturated (the extra load
// only queues). It is a claim about the server: a run the client could
// not drive (PhaseStats.ClientBound) is no evidence for it (knee).
type Knee struct {
	Level      int     `json:"level"`
	Next       int     `json:"next"`         // the level of the step past it
	GainPct    float64 `json:"gain_pct"`     // the throughput the step added, % of the knee's
	P99RisePct float64 `json:"p99_rise_pct"` // the p99's rise over the step, % of the knee's
}

// KneeGain and KneeRise are the knee's thresholds: a step to about twice
// the load that added less than 5 % throughput while the p99 rose by
// 50 % or more.
const (
	KneeGain = 0.05
	KneeRise = 0.50
)

// peaks finds the phase with the highest throughput of successful
// responses, and the accepted phase with the highest when that is another
// phase (nil: none, or the same). Interrupted and unjudged phases count:
// they measured what the server gave.
func peaks(phases []*PhaseStats) (peak, accepted *Peak) {
	for _, p := range phases {
		if p.RequestsPerSec <= 0 {
			continue
		}
		pk := &Peak{Phase: p.Index, Level: p.Level, OKPerSec: p.RequestsPerSec, P99Ms: p.LatencyMs.P99, Accepted: p.Accepted}
		if peak == nil || pk.OKPerSec > peak.OKPerSec {
			peak = pk
		}
		if p.Accepted && (accepted == nil || pk.OKPerSec > accepted.OKPerSec) {
			accepted = pk
		}
	}
	if accepted != nil && peak != nil && accepted.Phase == peak.Phase {
		accepted = nil
	}
	return peak, accepted
}

// knee finds the lowest level whose step to about twice it added less than
// KneeGain throughput while the p99 rose by KneeRise or more; a level run
// more than once counts with the mean of its runs' throughputs and p99s.
// Nil when no step qualifies (or fewer than two levels had responses).
//
// A client-bound run (PhaseStats.ClientBound: its workers were saturated,
// or a rate test's client fell behind its schedule) is left out, as
// interrupted and silent ones are: its throughput and p99 describe the
// client, and a flat throughput with a rising p99 there is the client's
// limit, not the server's. The run is dropped, not its level: another run
// at that level that the client did drive measured the server there, and
// stays the level's evidence. A level left with no run is no step's end:
// the step from a level below goes to the lowest level at 2× to 3× it that
// kept a run, or there is none. So when the only step that would qualify
// had a client-bound end, there is no knee: the client's limit came first,
// and the phases' client_bound say so.
func knee(phases []*PhaseStats) *Knee {
	type level struct {
		n       int
		ok, p99 float64
	}
	by := map[int]*level{}
	for _, p := range phases {
		if p.Interrupted || p.ClientBound || p.RequestsPerSec <= 0 {
			continue
		}
		l := by[p.Level]
		if l == nil {
			l = &level{}
			by[p.Level] = l
		}
		l.n++
		l.ok += p.RequestsPerSec
		l.p99 += p.LatencyMs.P99
	}
	levels := make([]int, 0, len(by))
	for l := range by {
		levels = append(levels, l)
	}
	slices.Sort(levels)
	for i, l := range levels {
		j := i + 1
		for j < len(levels) && levels[j] < 2*l {
			j++
		}
		if j == len(levels) || levels[j] >= 3*l {
			continue
		}
		a, b := by[l], by[levels[j]]
		okA, okB := a.ok/float64(a.n), b.ok/float64(b.n)
		p99A, p99B := a.p99/float64(a.n), b.p99/float64(b.n)
		if okA <= 0 || p99A <= 0 {
			continue
		}
		gain, rise := okB/okA-1, p99B/p99A-1
		if gain < KneeGain && rise >= KneeRise {
			return &Knee{Level: l, Next: levels[j], GainPct: 100 * gain, P99RisePct: 100 * rise}
		}
	}
	return nil
}

// summarize fills in what a run's phases say beside the verdict: its peak
// and knee.
func (res *Result) summarize() {
	res.Peak, res.PeakAccepted = peaks(res.Phases)
	res.Knee = knee(res.Phases)
}
