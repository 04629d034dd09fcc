package main

import (
	"fmt"
	"math"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/brk-bench/brk"
)

// compareCmd says whether the break moved between two runs of one plan:
// beyond both intervals, or not, or too noisy to tell (docs/cli.md,
// "Comparing two runs").
type compareCmd struct {
	Old string `arg:"" name:"old" help:"The earlier run's JSON report (--json)." type:"path"`
	New string `arg:"" name:"new" help:"The later run's JSON report (--json)." type:"path"`
}

func (c *compareCmd) Run(e *env) error {
	old, _, err := loadReport(c.Old) // merge.go
	if err != nil {
		return refuse("%s: %v", c.Old, err)
	}
	cur, _, err := loadReport(c.New)
	if err != nil {
		return refuse("%s: %v", c.New, err)
	}
	_, line, code := compareBreaks(old, cur)
	if code == exitUsage {
		return refuse("%s", line)
	}
	fmt.Fprintln(e.stdout, line)
	e.code = code
	return nil
}

// compareTolerance is the largest move, as a share of OLD's high end,
// that overlapping intervals may allow and still say "no change"; a move
// of one level always may.
const compareTolerance = 0.10

// The verdicts of compareBreaks.
const (
	compareNoChange  = "no change"
	compareImproved  = "improved"
	compareRegressed = "regressed"
	compareUnclear   = "cannot tell"
	compareRefused   = "cannot compare"
)

// compareBreaks compares the breaks of two reports of one plan: improved
// (exit 0) when NEW's interval lies entirely above OLD's, regressed (1)
// when entirely below; when they overlap, no change (0) if the largest
// move they allow is at most compareTolerance of OLD's high end or one
// level, else cannot tell (3). Reports of different tests, SLAs or
// targets, or one without an interval, are not compared (2).
func compareBreaks(old, cur *brk.Result) (verdict, line string, code int) {
	if diffs := planDiffs(old, cur); len(diffs) > 0 {
		return compareRefused, "cannot compare: " + strings.Join(diffs, "; ") +
			" — compare two runs of one test, SLA and target", exitUsage
	}
	o, why := spanOf(old, "OLD")
	if why != "" {
		return compareRefused, "cannot compare: " + why, exitUsage
	}
	n, why := spanOf(cur, "NEW")
	if why != "" {
		return compareRefused, "cannot compare: " + why, exitUsage
	}
	return judgeSpans(o, n, old.Test.Noun())
}

// span is where a report's break lies: above low and at or below high,
// at confidence conf; open when the run held to its --max without
// breaking (no high end).
type span struct {
	low, high int
	conf      float64
	open      bool
}

// text is s in words, the levels' noun after its numbers ("" for none).
func (s span) text(noun string) string {
	if noun != "" {
		noun = " " + noun
	}
	if s.open {
		return fmt.Sprintf("above %d%s (held to --max)", s.low, noun)
	}
	return fmt.Sprintf("between %d and %d%s", s.low, s.high, noun)
}

// spanOf is r's break as a span, or why it has none (r is named name):
// its final pair's interval, or above the level it held when it ended
// done.
func spanOf(r *brk.Result, name string) (span, string) {
	switch {
	case r.Shard != nil && r.Shard.Unjudged:
		return span{}, name + " is one shard's report, which judges nothing — compare the report of brk merge --json"
	case r.Verdict == brk.VerdictDone && r.LastAccepted != nil:
		return span{low: *r.LastAccepted, open: true}, ""
	case r.Verdict == brk.VerdictInconclusive:
		return span{}, fmt.Sprintf("%s ended inconclusive (%s), so it has no interval — rerun it", name, oneLine(r.Reason))
	case r.Verdict == brk.VerdictInterrupted:
		return span{}, name + " was interrupted, so it has no interval — rerun it"
	case r.Verdict != brk.VerdictBroken:
		return span{}, fmt.Sprintf("%s ended %q, which has no interval — rerun it", name, r.Verdict)
	case r.FinalPair == nil || r.FinalPair.Interval == nil:
		return span{}, fmt.Sprintf("%s has no interval (written by a brk before intervals, %s) — rerun it with this brk", name, r.Version)
	}
	iv := r.FinalPair.Interval
	if iv.High <= iv.Low || iv.Low < 0 {
		return span{}, fmt.Sprintf("%s's interval (%d, %d) is empty — rerun it", name, iv.Low, iv.High)
	}
	return span{low: iv.Low, high: iv.High, conf: r.FinalPair.Confidence}, ""
}

// confidenceText is " (95 %)" when every closed span gives that
// confidence, or "" when they give none or differ.
func confidenceText(spans ...span) string {
	c := 0.0
	for _, s := range spans {
		switch {
		case s.open:
		case s.conf <= 0 || c != 0 && s.conf != c:
			return ""
		default:
			c = s.conf
		}
	}
	if c == 0 {
		return ""
	}
	return fmt.Sprintf(" (%s %%)", fmtFloat(100*c))
}

// judgeSpans is compareBreaks' verdict on two comparable spans.
func judgeSpans(o, n span, noun string) (verdict, line string, code int) {
	// The confidence follows the first interval the line gives.
	nt, ot := n.text(noun), o.text("")
	if c := confidenceText(o, n); !n.open {
		nt += c
	} else {
		ot += c
	}
	said := fmt.Sprintf("breaks %s, was %s", nt, ot)
	switch {
	case !o.open && n.low >= o.high:
		return compareImproved, "improved: " + said, exitDone
	case !n.open && n.high <= o.low:
		return compareRegressed, "regressed: " + said, exitBroken
	case o.open || n.open:
		return compareUnclear, "cannot tell: " + said + "; a run that held to --max has no upper end — raise --max", exitInconclusive
	}
	// They overlap: the old break may be as high as o.high and the new as
	// low as n.low+1, or the other way round.
	move := max(o.high-(n.low+1), n.high-(o.low+1))
	pct := fmtFloat(math.Round(100 * float64(move) / float64(o.high)))
	limit := fmtFloat(100 * compareTolerance)
	if move <= 1 || float64(move) <= compareTolerance*float64(o.high) {
		return compareNoChange, fmt.Sprintf("no change: %s; the intervals overlap and allow a move of at most %d (%s %%)", said, move, pct), exitDone
	}
	return compareUnclear, fmt.Sprintf("cannot tell: %s; the intervals overlap but allow a move of up to %d (%s %%), more than %s %% — rerun both with longer phases or on a quieter machine",
		said, move, pct, limit), exitInconclusive
}

// fmtFloat writes v in its shortest form (10, 99.99).
func fmtFloat(v float64) string { return strings.TrimSuffix(fmt.Sprintf("%g", v), ".0") }

// planDiffs lists what makes two reports' breaks incomparable: their test
// and protocol, the SLA (--accept, --timeout, --max-p99, --max-p999),
// what a level holds (--conn; the connections test's --requests and
// --keep-alive; the rate test's --arrivals and --phase) and the target:
// the URL's scheme, path and query (not its host and port: an old and a
// new build may listen side by side) or the request mix.
func planDiffs(old, cur *brk.Result) []string {
	var diffs []string
	differ := func(what string, a, b any) {
		if a != b {
			diffs = append(diffs, fmt.Sprintf("%s %v in OLD, %v in NEW", what, a, b))
		}
	}
	for _, r := range []*brk.Result{old, cur} {
		if !r.Test.Valid() {
			diffs = append(diffs, fmt.Sprintf("the test %q, which this brk does not know", r.Test))
		}
	}
	differ("the test", old.Test, cur.Test)
	differ("the protocol", old.Protocol, cur.Protocol)
	op, np := old.Plan, cur.Plan
	differ("--accept", old.Accept, cur.Accept)
	differ("--timeout", durationText(op.Timeout), durationText(np.Timeout))
	differ("--max-p99", durationText(op.MaxP99), durationText(np.MaxP99))
	differ("--max-p999", durationText(op.MaxP999), durationText(np.MaxP999))
	if !old.Test.LevelIsConns() {
		differ("--conn", old.Conns, cur.Conns)
	} else {
		differ("--requests", old.Requests, cur.Requests)
		differ("--keep-alive", old.KeepAlive, cur.KeepAlive)
	}
	if old.Test.Clocked() {
		differ("--arrivals", old.Arrivals, cur.Arrivals)
		differ("--phase", durationText(op.Phase), durationText(np.Phase))
	}
	if requestOf(old.URL) != requestOf(cur.URL) {
		diffs = append(diffs, fmt.Sprintf("the target %s in OLD, %s in NEW", old.URL, cur.URL))
	}
	if om, nm := mixOf(old), mixOf(cur); !slices.Equal(om, nm) {
		diffs = append(diffs, fmt.Sprintf("the request mix [%s] in OLD, [%s] in NEW", strings.Join(om, ", "), strings.Join(nm, ", ")))
	}
	return diffs
}

// durationText is d as a flag spells it, "none" for 0.
func durationText(d time.Duration) string {
	if d == 0 {
		return "none"
	}
	return d.String()
}

// requestOf is what a URL asks, whatever answers it: its scheme, path and
// query.
func requestOf(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	return p.Scheme + ":" + p.RequestURI()
}

// pathOf is a URL's path and query ("/a?b").
func pathOf(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return u
	}
	return p.RequestURI()
}

// mixOf is r's request mix as "METHOD path ×weight" per target, from its
// first phase that reports targets (nil without a mix); the mix's scheme
// is its URL's.
func mixOf(r *brk.Result) []string {
	for _, p := range r.Phases {
		if p == nil || len(p.Targets) == 0 {
			continue
		}
		var mix []string
		for _, t := range p.Targets {
			mix = append(mix, fmt.Sprintf("%s %s ×%d", t.Method, pathOf(t.URL), t.Weight))
		}
		return mix
	}
	return nil
}
