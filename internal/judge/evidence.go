package judge

import (
	"math"
	"math/bits"
	"strconv"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/brk-bench/brk/internal/metrics"
)

// A phase's evidence: beside its verdict (Judge), what the search needs to
// tell a break from noise. Each SLA term's signed margin and the binding
// one, a stall (failures bunched in a short span while the rest of the
// phase held), a phase too close to call (one failure more or less would
// have changed it) and a busy box (other processes used the CPU). All of
// it is a pure function of the phase's measurement and the plan, so that a
// merge of shard reports finds the same evidence.

// Term is one term of the SLA a phase is judged on.
type Term uint8

// The terms.
const (
	TermSuccess Term = iota // the success ratio against --accept
	TermSetups              // the connections test's established setups against --accept
	TermP99                 // the share of responses slower than --max-p99
	TermP999                // the share of responses slower than --max-p999
)

var termNames = [...]string{"success ratio", "setups", "p99", "p99.9"}

// String is the term's name in reports.
func (t Term) String() string {
	if int(t) < len(termNames) {
		return termNames[t]
	}
	return "term(" + strconv.Itoa(int(t)) + ")"
}

// MarshalText is the term's name.
func (t Term) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// UnmarshalText reads a term's name.
func (t *Term) UnmarshalText(b []byte) error {
	for i, n := range termNames {
		if n == string(b) {
			*t = Term(i)
			return nil
		}
	}
	*t = TermSuccess
	return nil
}

// TermMargin is one SLA term of a phase: Bad of Total outcomes were
// outside it, Allowed is the share the SLA allows, and Margin their signed,
// normalised distance (Margin).
type TermMargin struct {
	Term    Term    `json:"term"`
	Bad     uint64  `json:"bad"`
	Total   uint64  `json:"total"`
	Allowed float64 `json:"allowed"`
	Margin  float64 `json:"margin"`
}

// Stall is a rejection whose failures came in one short span while the
// rest of the phase met --accept: a pause of the server (or of the box),
// not a load it could not carry.
type Stall struct {
	// At is the span's start, from the phase's start; Span its width.
	At       time.Duration `json:"at_ns"`
	Span     time.Duration `json:"span_ns"`
	Failures uint64        `json:"failures"` // failures inside the span
	Requests uint64        `json:"requests"` // outcomes inside the span
	Of       uint64        `json:"of"`       // the phase's failures
	// AtEnd: the span lasted to the phase's end (no response succeeded
	// after it), which only a test whose client holds the load (requests,
	// connections) tells as a stall.
	AtEnd bool `json:"at_end,omitempty"`
}

// Evidence is what a phase says beside its verdict.
type Evidence struct {
	Margins []TermMargin `json:"margins,omitempty"`
	// Binding is the term with the smallest margin: the one that
	// rejected the phase, or came closest to it.
	Binding Term   `json:"binding"`
	Stall   *Stall `json:"stall,omitempty"`
	// Close: the binding term's bad outcomes were within one of the most
	// the SLA allows (a phase without any is never close).
	Close bool `json:"too_close,omitempty"`
	// Busy: other processes (the hypervisor's steal included) used more
	// than metrics.BusyCores for more than half the phase.
	Busy bool `json:"busy,omitempty"`
}

// Noisy reports whether the phase's verdict needs a second run before it
// moves the search: a stall, too close to call, or a rejection on a busy
// box. A hold on a busy box stands: the other processes took from the
// server, they gave it nothing (and brk's own starvation is the
// client-bound rule's, not this one's).
func (e *Evidence) Noisy(accepted bool) bool {
	return e.Stall != nil || e.Close || e.Busy && !accepted
}

// Weak reports whether a rejection's evidence cannot tell the server's
// load from the box's: judged on a busy box, and too close to call (one
// response more or less would have changed it).
func (e *Evidence) Weak() bool { return e.Busy && e.Close }

// StallShare is the least share of a rejected phase's failures that one
// span must hold for a stall.
const StallShare = 0.8

// BusyShare is the share of a phase's windows in which the box must have
// been busy for the phase to be judged on a busy box.
const BusyShare = 0.5

// Examine finds a judged phase's evidence.
func Examine(m *Measurement, plan Plan, j Judgement) Evidence {
	var e Evidence
	if m == nil || m.Stats == nil {
		return e
	}
	s := m.Stats
	c := &s.Counts
	e.Margins = append(e.Margins, termMargin(TermSuccess, c.Attempted-min(c.Succeeded, c.Attempted), c.Attempted, plan.Accept.allowedShare()))
	if plan.Mode.spec().judgeSetups {
		st := &s.Setups
		e.Margins = append(e.Margins, termMargin(TermSetups, st.Attempted-min(st.Established, st.Attempted), st.Attempted, plan.Accept.allowedShare()))
	}
	for _, t := range []struct {
		term  Term
		limit time.Duration
		pct   float64
	}{{TermP99, plan.MaxP99, 99}, {TermP999, plan.MaxP999, 99.9}} {
		if t.limit > 0 && s.Latency != nil {
			n := uint64(s.Latency.TotalCount())
			var share float64
			if n > 0 {
				share = float64(quantileAllowed(t.pct, n)) / float64(n)
			}
			e.Margins = append(e.Margins, termMargin(t.term, slowerThan(s, t.limit), n, share))
		}
	}
	bind := &e.Margins[0]
	for i := range e.Margins {
		if e.Margins[i].Margin < bind.Margin {
			bind = &e.Margins[i]
		}
	}
	e.Binding = bind.Term
	e.Close = tooClose(bind, plan.Accept)
	e.Busy = m.Other.OK && m.Other.BusyShare() > BusyShare
	if j.Verdict == Broken && j.Stop {
		e.Stall = findStall(s.Timeline, plan, m.Active)
	}
	return e
}

func termMargin(t Term, bad, total uint64, allowed float64) TermMargin {
	return TermMargin{Term: t, Bad: bad, Total: total, Allowed: allowed, Margin: Margin(bad, total, allowed)}
}

// allowedShare is the share of failures the acceptance allows.
func (a Accept) allowedShare() float64 {
	if a.Den == 0 {
		return 0
	}
	return float64(a.Den-a.Num) / float64(a.Den)
}

// allowedOf is the most failures of n the acceptance allows:
// ⌊n × (Den − Num) / Den⌋, computed exactly.
func (a Accept) allowedOf(n uint64) uint64 {
	if a.Den == 0 || a.Num > a.Den {
		return 0
	}
	hi, lo := bits.Mul64(n, a.Den-a.Num)
	q, _ := bits.Div64(hi, lo, a.Den) // hi < Den: n × (Den−Num) < n × Den
	return q
}

// tooClose reports whether a term's bad outcomes were within one of the
// most it allows: one outcome more or fewer would have changed the
// verdict. None bad is never close.
func tooClose(t *TermMargin, acc Accept) bool {
	if t.Bad == 0 {
		return false
	}
	var allowed uint64
	switch t.Term {
	case TermSuccess, TermSetups:
		allowed = acc.allowedOf(t.Total)
	default:
		allowed = uint64(math.Round(float64(t.Total) * t.Allowed)) // quantileAllowed's count
	}
	return t.Bad+1 >= allowed && t.Bad <= allowed+1
}

// quantileAllowed is how many of n responses may be slower than a limit
// while the latency judge's percentile pct (latencyRule: the histogram's
// ValueAtQuantile, whose rank is ⌊pct/100 × n + 0.5⌋, at least 1, at most
// n) stays within it: n − rank. p99 of 92 responses allows 1 (rank 91),
// of 50 none (rank 50): ⌊0.01 × n⌋ would say 0 for 92, and a phase the
// judge held would show a negative margin.
func quantileAllowed(pct float64, n uint64) uint64 {
	rank := pct/100*float64(n) + 0.5
	if !(rank >= 1) {
		rank = 1
	}
	if rank >= float64(n) {
		return 0
	}
	return n - uint64(rank)
}

// slowerThan counts a phase's responses slower than limit as the latency
// judge reads them (latencyRule: the histogram's ValueAtQuantile, which
// gives the highest value of a response's bucket, so a response within a
// bucket's width of the limit, 64 µs at 100 ms, may read as slower): n
// less the highest rank whose value is within limit, found by bisection
// over the judge's own call (no allocation, log₂ n walks of the buckets).
func slowerThan(s *metrics.Phase, limit time.Duration) uint64 {
	h := s.Latency
	n := h.TotalCount()
	us := limit.Microseconds()
	if n == 0 || valueAtRank(h, n) <= us {
		return 0
	}
	lo, hi := int64(0), n // the value at rank lo is within limit (0: none is), at hi it is not
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if valueAtRank(h, mid) <= us {
			lo = mid
		} else {
			hi = mid
		}
	}
	return uint64(n - lo)
}

// valueAtRank is the value ValueAtQuantile gives for the r-th fastest of
// h's responses (1 ≤ r ≤ TotalCount): its rank is ⌊q/100 × n + 0.5⌋, and
// q = 100 × (r − ¼)/n makes that r.
func valueAtRank(h *hdrhistogram.Histogram, r int64) int64 {
	return h.ValueAtQuantile(100 * (float64(r) - 0.25) / float64(h.TotalCount()))
}

// findStall finds a stall in a rejected phase's timeline: a run of spans
// no wider than max(3 × timeout, 10 % of the phase) (one span more for
// their alignment), in a phase at least twice as long, holding at least
// StallShare of its failures, while the phase's other outcomes met
// --accept and responses succeeded after it (the server recovered) or,
// where the client holds the load (not the rate test), the span lasted to
// the phase's end: there an overload fails from the first round trips
// on, so failures that begin late, after a phase that held, are a pause
// the phase's end cut short (AtEnd).
func findStall(tl *metrics.Timeline, plan Plan, active time.Duration) *Stall {
	if tl == nil || tl.WidthNs <= 0 {
		return nil
	}
	spans := tl.Trimmed()
	var failed, ok uint64
	for _, s := range spans {
		failed, ok = failed+s.Failed, ok+s.Succeeded
	}
	if failed == 0 {
		return nil
	}
	limit := max(3*plan.Timeout, active/10)
	k := max(int((int64(limit)+tl.WidthNs-1)/tl.WidthNs)+1, 1)
	// A stall is a short part of the phase: in a phase shorter than twice
	// its span, a wave of timeouts is an overload as much as a pause, and
	// no stall is told.
	if int64(k)*tl.WidthNs*2 > int64(active) {
		return nil
	}
	// The window ending at span i holds spans[max(i-k+1, 0)..i]: at and
	// end bound the best one (near the phase's start it is narrower than
	// k spans, and bestOK counts only the spans it holds).
	best, at, end := uint64(0), 0, 0
	var win, winOK uint64
	bestOK := uint64(0)
	for i := range spans {
		win, winOK = win+spans[i].Failed, winOK+spans[i].Succeeded
		if i >= k {
			win, winOK = win-spans[i-k].Failed, winOK-spans[i-k].Succeeded
		}
		if win > best {
			best, bestOK, at, end = win, winOK, max(i-k+1, 0), i+1
		}
	}
	if float64(best) < StallShare*float64(failed) {
		return nil
	}
	restOK, restFailed := ok-bestOK, failed-best
	if !plan.Accept.Met(restOK, restOK+restFailed) {
		return nil
	}
	for at < end && spans[at].Failed == 0 { // the span from its first failure to its last
		bestOK -= spans[at].Succeeded
		at++
	}
	for end > at && spans[end-1].Failed == 0 {
		bestOK -= spans[end-1].Succeeded
		end--
	}
	// The server recovered: responses succeeded after the span. In the
	// rate test failures that last to the phase's end are an overload
	// building up (a backlog), not a pause.
	var after uint64
	for _, s := range spans[end:] {
		after += s.Succeeded
	}
	if after == 0 && plan.Mode.Clocked() {
		return nil
	}
	w := time.Duration(tl.WidthNs)
	return &Stall{At: time.Duration(at) * w, Span: time.Duration(end-at) * w,
		Failures: best, Requests: best + bestOK, Of: failed, AtEnd: after == 0}
}
