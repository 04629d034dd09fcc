package report

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/brk-bench/brk"
)

// HTMLConditions are the run conditions shown in the report.
type HTMLConditions struct {
	Command  string // the command line, as typed
	Host     string // hostname
	CPUs     int    // runtime.NumCPU()
	OS, Arch string
	Started  time.Time
}

// WriteHTML writes one self-contained HTML file (no network fetches: no
// external CSS/JS/fonts/images; no scripts) for r: the verdict, three
// inline SVG charts drawn here (success % with the --accept line,
// successful requests/s, and latency percentiles with the timeout and the
// latency limits, all three marking the break) against the level, the
// latency percentile curve of the final pair's phases (LatencyPhases),
// the run's outcomes and status classes over time when its phases carry
// timelines, a request mix's per-target table of the final pair, the
// phase table and the run conditions. Every text from the Result is escaped by
// html/template.
func WriteHTML(w io.Writer, r *brk.Result, c HTMLConditions) error {
	if r == nil {
		return errors.New("brk: WriteHTML: nil Result")
	}
	d := htmlData{R: r, C: c, Final: FinalLine(r), Held: Held(r), Unit: r.Test.Unit(), Peak: PeakLine(r), Knee: KneeLine(r)}
	// One reason: a break's that is its rejected phase's is in the
	// summary sentence already.
	d.Reason = r.Reason
	if _, broke := PairPhases(r); r.Verdict == brk.VerdictBroken && broke != nil && broke.Reason == r.Reason {
		d.Reason = ""
	}
	// An interrupted run's reason is its verdict, said by the headline
	// and the held line already.
	if r.Verdict == brk.VerdictInterrupted && r.Reason == string(brk.VerdictInterrupted) {
		d.Reason = ""
	}
	// An inconclusive run's headline is its reason.
	if d.Reason != "" && strings.Contains(d.Final, strings.ReplaceAll(d.Reason, "\n", " ")) {
		d.Reason = ""
	}
	d.VerdictClass = "v-" + string(r.Verdict)
	switch r.Verdict {
	case brk.VerdictDone, brk.VerdictBroken, brk.VerdictInterrupted, brk.VerdictInconclusive:
	default:
		d.VerdictClass = "v-inconclusive"
	}
	d.LastAccepted, d.FirstRejected = "none", "none"
	if r.LastAccepted != nil {
		d.LastAccepted = strconv.Itoa(*r.LastAccepted)
	}
	if r.FirstRejected != nil {
		d.FirstRejected = strconv.Itoa(*r.FirstRejected)
	}
	if r.Baseline != nil {
		b := r.Baseline
		mach := "unavailable"
		if b.MachineCPUPct != nil {
			mach = fmt.Sprintf("%.1f %%", *b.MachineCPUPct)
		}
		d.Baseline = fmt.Sprintf("%.2f s idle: machine CPU %s; client user %.3f s, system %.3f s",
			b.DurationS, mach, b.ClientCPU.UserS, b.ClientCPU.SystemS)
	}
	for _, p := range r.Phases {
		if p != nil {
			d.Rows = append(d.Rows, phaseRow(r.Test, p))
		}
		if p != nil && p.Rate != nil {
			x := p.Rate
			d.RateRows = append(d.RateRows, htmlRateRow{
				Index: p.Index, Level: p.Level,
				Scheduled: x.Scheduled, Written: x.Written, ExpiredUnsent: x.ExpiredUnsent,
				Offered: fmtF(x.OfferedPerSec, 1), Achieved: fmtF(x.AchievedPerSec, 1), Shortfall: fmtF(x.ShortfallPct, 3),
				LagP50: fmtF(x.SendLagMs.P50, 3), LagP99: fmtF(x.SendLagMs.P99, 3), LagMax: fmtF(x.SendLagMs.Max, 3),
				SvcP50: fmtF(x.ServiceMs.P50, 3), SvcP99: fmtF(x.ServiceMs.P99, 3), ClientP99: fmtF(x.ClientLagMs.P99, 3),
			})
		}
	}
	if len(d.Rows) > 0 {
		sla, slaOK := math.NaN(), false
		if v, err := strconv.ParseFloat(strings.TrimSpace(r.Accept), 64); err == nil && v >= 0 && v <= 100 {
			sla, slaOK = v, true
		}
		phases := make([]*brk.PhaseStats, 0, len(r.Phases))
		for _, p := range r.Phases {
			if p != nil {
				phases = append(phases, p)
			}
		}
		mark := breakMark(r, phases)
		d.Charts = []template.HTML{
			successChart(phases, d.Unit, sla, slaOK, r.Accept, mark),
			rpsChart(phases, d.Unit, mark),
			latencyChart(phases, d.Unit, latencyLimits(r), mark),
			percentileChart(r),
		}
		if mc := marginChart(r, phases, d.Unit); mc != "" {
			d.Charts = append(d.Charts, mc)
		}
		if tl := timelineChart(phases); tl != "" {
			d.Charts = append(d.Charts, tl)
		}
		if sc := scatterChart(r, phases); sc != "" {
			d.Charts = append(d.Charts, sc)
		}
	}
	d.Mix = mixTable(r) // nil without a request mix (html_mix.go)
	d.Conds = conditions(r, c, d.Baseline)
	var buf bytes.Buffer
	if err := htmlTmpl.Execute(&buf, d); err != nil {
		return fmt.Errorf("brk: WriteHTML: %w", err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

type htmlData struct {
	R             *brk.Result
	C             HTMLConditions
	Final         string
	Held          string // the summary sentence
	Peak, Knee    string // the peak and knee lines ("" without them)
	Reason        string // the reason, when the summary sentence does not hold it
	Unit          string // what a level counts
	VerdictClass  string
	LastAccepted  string
	FirstRejected string
	Baseline      string
	Charts        []template.HTML
	Conds         []htmlCond // the run conditions
	Rows          []htmlRow
	RateRows      []htmlRateRow // the rate test's schedule table
	Mix           *htmlMix      // the request mix's table of the final pair; nil without a mix
}

// htmlRateRow is one rate test phase's schedule accounting.
type htmlRateRow struct {
	Index, Level                      int
	Scheduled, Written, ExpiredUnsent uint64
	Offered, Achieved, Shortfall      string
	LagP50, LagP99, LagMax            string
	SvcP50, SvcP99, ClientP99         string
}

func fmtF(v float64, prec int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "n/a"
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}

// flagRE is a command-line flag in a sentence: --threads, --max-p99.
var flagRE = regexp.MustCompile(`--[a-z0-9][a-z0-9-]*`)

// nowrapFlags is s escaped, each flag in it kept on one line (a browser
// breaks lines after a hyphen: "-" at one line's end, "-threads" at the
// next's).
func nowrapFlags(s string) template.HTML {
	var b strings.Builder
	last := 0
	for _, m := range flagRE.FindAllStringIndex(s, -1) {
		b.WriteString(template.HTMLEscapeString(s[last:m[0]]))
		b.WriteString(`<span class="nw">` + template.HTMLEscapeString(s[m[0]:m[1]]) + `</span>`)
		last = m[1]
	}
	b.WriteString(template.HTMLEscapeString(s[last:]))
	return template.HTML(b.String())
}
