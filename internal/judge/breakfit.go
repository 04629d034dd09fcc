package judge

import (
	"encoding/binary"
	"hash/fnv"

	"github.com/brk-bench/brk/internal/metrics"
)

// The break's interval from every run the search judged (interval.go): the
// binding term of the broken end's run decides which outcomes are bad in
// every run, each run's timeline gives its windows, and the seed is drawn
// from the runs themselves, so that brk merge, which replays the same
// merged measurements, finds the same interval.

// Confidence is the share the interval is drawn at.
const Confidence = 0.95

// MaxSpan is the widest interval (high ÷ low) a break may be reported
// with; a wider one leaves the run inconclusive.
const MaxSpan = 2

// fit is the break's interval and its binding term, when a level broke.
func (s *levelState) fit(b Bracket) (*BreakFit, Term, bool) {
	if b.Broke < 0 || b.BrokePhase < 0 {
		return nil, 0, false
	}
	term := s.judged[b.BrokePhase].Evidence.Binding
	var runs []RunEvidence
	h := fnv.New64a()
	for _, j := range s.judged {
		if j.Run == nil || j.Run.Stats == nil || j.Inconclusive || j.NotJudged || j.Stop && j.Verdict != Broken {
			continue
		}
		r := runEvidence(j, term, s.p)
		runs = append(runs, r)
		var buf [8]byte
		binary.LittleEndian.PutUint64(buf[:], uint64(r.Level))
		h.Write(buf[:])
		for _, w := range r.Windows {
			binary.LittleEndian.PutUint64(buf[:], w.Total<<20^w.Bad)
			h.Write(buf[:])
		}
	}
	f := BreakInterval(runs, max(b.Held, 0), b.Broke, h.Sum64())
	return &f, term, true
}

// runEvidence is one run's windows for term.
func runEvidence(j *Judged, term Term, p Plan) RunEvidence {
	r := RunEvidence{Level: j.Target, Allowed: allowedFor(term, p)}
	var whole Window // the run's totals for term, as the judge counted them
	for _, m := range j.Evidence.Margins {
		if m.Term == term {
			whole = Window{Total: m.Total, Bad: m.Bad}
		}
	}
	if tl := j.Run.Stats.Timeline; tl != nil {
		var sum Window
		for _, sp := range tl.Trimmed() {
			if w := windowOf(sp, term); w.Total > 0 {
				r.Windows = append(r.Windows, w)
				sum.Total += w.Total
				sum.Bad += w.Bad
			}
		}
		// What no span counted (a setup still in flight at the phase's
		// end is one the judge counts as not established) is one window
		// more, so that the windows sum to the judge's totals.
		if term == TermSetups && whole.Total > sum.Total {
			r.Windows = append(r.Windows, Window{Total: whole.Total - sum.Total, Bad: whole.Bad - min(sum.Bad, whole.Bad)})
		}
		if len(r.Windows) > 0 {
			return r
		}
	}
	if whole.Total > 0 { // no timeline: the run as one window
		r.Windows = append(r.Windows, whole)
	}
	return r
}

// windowOf is one span's outcomes for term.
func windowOf(sp metrics.Span, term Term) Window {
	switch term {
	case TermSetups:
		return Window{Total: sp.Setups, Bad: min(sp.SetupsFailed, sp.Setups)}
	case TermP99, TermP999:
		var responses uint64
		for _, n := range sp.Statuses {
			responses += n
		}
		bad := sp.SlowP99
		if term == TermP999 {
			bad = sp.SlowP999
		}
		return Window{Total: responses, Bad: min(bad, responses)}
	}
	return Window{Total: sp.Succeeded + sp.Failed, Bad: sp.Failed}
}

// allowedFor is the share of bad outcomes term allows.
func allowedFor(term Term, p Plan) float64 {
	switch term {
	case TermP99:
		return 0.01
	case TermP999:
		return 0.001
	}
	return p.Accept.allowedShare()
}
