package report

import (
	"fmt"
	"html/template"

	"github.com/brk-bench/brk"
)

// marginChart draws each judged phase's margin on the break's binding SLA
// term against its level (+1: nothing bad; 0: at the allowance; −1:
// everything bad), with the break's interval shaded; "" when no phase has
// evidence.
func marginChart(r *brk.Result, ps []*brk.PhaseStats, unit string) template.HTML {
	term := bindingTerm(r, ps)
	if term == "" {
		return ""
	}
	c := chart{
		id: "chart-margin", title: "Margin on " + term + " against level",
		// Room above +1 for the interval's label.
		xLabel: "level (" + unit + ")", yLabel: "margin", ymin: -1.1, ymax: 1.45,
	}
	c.setLevels(ps)
	// No phase numbers on the points: the other charts number them, and
	// here the runs of one level share a point's place.
	s := chartSeries{name: "margin", color: colAccepted, linkColor: colLink, rejColor: colRejected}
	for _, p := range ps {
		if p.Evidence == nil {
			continue
		}
		for _, m := range p.Evidence.Margins {
			if m.Term.String() != term {
				continue
			}
			tip := fmt.Sprintf("phase %d, level %d: margin %s (%d of %d bad)%s", p.Index, p.Level, fmtF(m.Margin, 2), m.Bad, m.Total, tipState(p))
			if line := EvidenceLine(p); line != "" {
				tip += "; " + line
			}
			s.pts = append(s.pts, chartPoint{x: float64(p.Level), y: m.Margin, kind: kindOf(p), run: p.Index, tip: tip})
		}
	}
	c.series = []chartSeries{s}
	c.points = len(s.pts)
	c.hlines = []hline{{y: 0, color: colSLA, label: "the SLA's allowance", class: "sla", dash: "6 4"}}
	c.legend = []legendItem{{label: "accepted", color: colAccepted}, {label: "rejected", color: colRejected},
		{label: "allowance", color: colSLA, dashed: true}}
	if fp := r.FinalPair; fp != nil && fp.Interval != nil {
		c.mark = &vmark{x: float64(fp.Interval.High), from: float64(fp.Interval.Low),
			label: fmt.Sprintf("break between %d and %d (%.0f %%)", fp.Interval.Low, fp.Interval.High, 100*fp.Confidence)}
	}
	if c.points == 0 {
		c.empty = "no margins"
	}
	return c.svg()
}

// bindingTerm is the term the margins are drawn on: the break's, or the
// first judged phase's binding term ("" when no phase has evidence).
func bindingTerm(r *brk.Result, ps []*brk.PhaseStats) string {
	if fp := r.FinalPair; fp != nil && fp.BrokePhase != nil && *fp.BrokePhase < len(r.Phases) {
		if e := r.Phases[*fp.BrokePhase].Evidence; e != nil {
			return e.Binding.String()
		}
	}
	for _, p := range ps {
		if p.Evidence != nil {
			return p.Evidence.Binding.String()
		}
	}
	return ""
}
