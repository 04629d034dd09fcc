package brk

import (
	"github.com/brk-bench/brk/internal/judge"
	"github.com/brk-bench/brk/internal/metrics"
)

// Evidence is a judged phase's evidence (docs/search.md): margins
// [{term, bad, total, allowed, margin}], binding, stall {at_ns, span_ns,
// failures, requests, of, at_end}, too_close, busy.
type Evidence = judge.Evidence

// OtherCPU is the box's other load over a phase: mean and peak cores used
// by other processes (and the hypervisor's steal, apart in StealCores), in
// how many of its 100 ms windows they used more than a quarter of a core.
type OtherCPU = metrics.OtherCPU

// CoolDown is one wait before a re-run or a bisection probe until the
// server answered a request within twice the lowest p50 of an accepted
// phase (docs/search.md).
type CoolDown = judge.CoolDown

// finalPair is the report's form of an outcome's final pair: its phases,
// runs, conflicts and the stalls of its runs.
func finalPair(out *judge.Outcome) *FinalPair {
	b := out.Bracket
	fp := &FinalPair{HeldPhase: optional(b.HeldPhase), BrokePhase: optional(b.BrokePhase),
		HeldRuns: b.HeldRuns, HeldOf: b.HeldOf, BrokeRun: b.BrokeRun, BrokeOf: b.BrokeOf,
		Conflicts: b.Conflicts}
	for _, j := range out.Phases {
		if st := j.Evidence.Stall; st != nil {
			fp.Stalls = append(fp.Stalls, PhaseStall{Phase: j.Index, Level: j.Target, Stall: *st})
		}
	}
	if f := b.Fit; f != nil {
		fp.Interval = &Interval{Low: f.Low, High: f.High}
		fp.Confidence, fp.Boundary = judge.Confidence, f.Boundary
		fp.Binding = bindingText(b.Binding, out.Phases[b.BrokePhase])
	}
	return fp
}

// bindingText names the term that decided the break: the success ratio
// with its most common failure ("success ratio (timeout)"), the
// abandoned followers of a timeout or of a connect that timed out
// counted as its own.
func bindingText(t judge.Term, broke *judge.Judged) string {
	if t != judge.TermSuccess || broke.Run == nil || broke.Run.Stats == nil {
		return t.String()
	}
	s := broke.Run.Stats
	f := s.Counts.Failed
	for _, c := range []struct {
		cat       metrics.Category
		followers uint64
	}{{metrics.Timeout, s.TimeoutFollowers}, {metrics.ConnectTimeout, s.ConnectTimeoutFollowers}} {
		n := min(c.followers, f[metrics.Abandoned])
		f[c.cat] += n
		f[metrics.Abandoned] -= n
	}
	top := 0
	for c := range f {
		if f[c] > f[top] {
			top = c
		}
	}
	if f[top] == 0 {
		return t.String()
	}
	return t.String() + " (" + metrics.Category(top).String() + ")"
}

// PhaseStall is a stall with the phase and level it came in.
type PhaseStall struct {
	Phase int `json:"phase"`
	Level int `json:"level"`
	judge.Stall
}

// Conflict is a level rejected (Low) below one that held (High), each
// after its re-runs.
type Conflict = judge.Conflict
