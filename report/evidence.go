package report

import (
	"fmt"
	"io"
	"strings"

	brk "github.com/brk-bench/brk"
)

// EvidenceLine says why a phase's verdict was not taken on its own: a
// stall, too close to call, a rejection on a busy box; or that a hold on a
// busy box stands ("" when none of them). A phase that ended the run
// without a verdict of its own (inconclusive, interrupted, not judged)
// gets what was seen and nothing about a run again: none follows.
func EvidenceLine(s *brk.PhaseStats) string {
	e := s.Evidence
	if e == nil || !e.Noisy(s.Accepted) && !e.Busy {
		return ""
	}
	var parts []string
	if st := e.Stall; st != nil {
		parts = append(parts, fmt.Sprintf("a stall: %d of its %d failures within %s from %s%s (the rest held)",
			st.Failures, st.Of, seconds(st.Span.Seconds()), seconds(st.At.Seconds()), toTheEnd(st.AtEnd)))
	}
	if e.Close {
		for _, m := range e.Margins {
			if m.Term == e.Binding {
				parts = append(parts, fmt.Sprintf("too close to call: %d of %d outside %s", m.Bad, m.Total, m.Term))
			}
		}
	}
	if e.Busy && s.OtherCPU != nil {
		parts = append(parts, "a busy box: "+otherLoad(s.OtherCPU))
	}
	switch {
	case len(parts) == 0:
		return ""
	case s.Inconclusive || s.Interrupted || s.NotJudged:
		return strings.Join(parts, "; ")
	case !e.Noisy(s.Accepted):
		return parts[0] + " — a hold under that load stands"
	}
	return strings.Join(parts, "; ") + " — its level runs again"
}

// stealShown is the least steal (cores) the report names apart: half a
// percent of a core; less is a box without steal.
const stealShown = 0.005

// otherLoad words a phase's other load: what other processes used and,
// where the hypervisor gave this box's CPU to other machines, that steal
// apart (no process of this box used it).
func otherLoad(o *brk.OtherCPU) string {
	windows := fmt.Sprintf("(more than a quarter of one in %d of %d windows)", o.Busy, o.Windows)
	if o.StealCores < stealShown {
		return fmt.Sprintf("other processes used %.2g cores %s", o.MeanCores, windows)
	}
	return fmt.Sprintf("other processes used %.2g cores and the hypervisor took %.2g for other machines (steal) %s",
		max(o.MeanCores-o.StealCores, 0), o.StealCores, windows)
}

func seconds(s float64) string { return fmt.Sprintf("%.2g s", s) }

// WriteBreakEvidence writes what the run's break rests on: its interval,
// the binding term and the boundary's shape, the stalls and conflicts its
// runs showed and the cool-downs before them.
func WriteBreakEvidence(w io.Writer, r *brk.Result) {
	writeCoolDowns(w, r.CoolDowns)
	fp := r.FinalPair
	if fp == nil {
		return
	}
	unit := r.Test.Unit()
	if iv := fp.Interval; iv != nil {
		fmt.Fprintf(w, "The break lies between %d and %d %s (%.0f %%)", iv.Low, iv.High, unit, 100*fp.Confidence)
		if fp.Binding != "" {
			fmt.Fprintf(w, "; binding: %s", fp.Binding)
		}
		if fp.Boundary != "" {
			fmt.Fprintf(w, "; %s", fp.Boundary)
		}
		fmt.Fprintln(w)
	}
	for _, st := range fp.Stalls {
		fmt.Fprintf(w, "stall: phase %d at %d %s, %d of %d failures within %s from %s%s\n",
			st.Phase, st.Level, unit, st.Failures, st.Of, seconds(st.Span.Seconds()), seconds(st.At.Seconds()), toTheEnd(st.AtEnd))
	}
	for _, c := range fp.Conflicts {
		fmt.Fprintf(w, "conflict: %d %s rejected below %d, which held\n", c.Low, unit, c.High)
	}
	if busy, peak, steal := busyPhases(r); busy > 0 {
		by := fmt.Sprintf("other processes used up to %.2g cores", peak)
		if steal >= stealShown {
			by = fmt.Sprintf("other processes and the hypervisor's steal used up to %.2g cores, steal up to %.2g", peak, steal)
		}
		fmt.Fprintf(w, "busy: %d of %d phases ran on a busy box (%s): the break is the server's under that load\n",
			busy, len(r.Phases), by)
	}
}

// writeCoolDowns sums the waits before re-runs and bisection probes:
// their requests and connections are outside every phase.
func writeCoolDowns(w io.Writer, cds []brk.CoolDown) {
	if len(cds) == 0 {
		return
	}
	var requests, setups uint64
	var waited float64
	for _, c := range cds {
		requests, setups, waited = requests+c.Requests, setups+c.Setups, waited+c.Waited.Seconds()
	}
	fmt.Fprintf(w, "cool-down: %s before re-runs and bisection probes, %.2g s in all; %s and %s outside the phases\n",
		plural(len(cds), "wait"), waited, plural(int(requests), "request"), plural(int(setups), "connection"))
}

// busyPhases counts the phases judged on a busy box and the most CPU
// other processes (and the hypervisor's steal) used in one of them, and
// the most steal in one of them.
func busyPhases(r *brk.Result) (busy int, peak, steal float64) {
	for _, p := range r.Phases {
		if p.Evidence != nil && p.Evidence.Busy {
			busy++
			if p.OtherCPU != nil {
				peak = max(peak, p.OtherCPU.MeanCores)
				steal = max(steal, p.OtherCPU.StealCores)
			}
		}
	}
	return busy, peak, steal
}

// toTheEnd says that a stall lasted to its phase's end.
func toTheEnd(atEnd bool) string {
	if atEnd {
		return " to the phase's end"
	}
	return ""
}
