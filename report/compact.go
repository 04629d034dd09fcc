package report

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/brk-bench/brk"
	"github.com/brk-bench/brk/internal/judge"
)

// The default text: one line per phase and a summary sentence. The full
// blocks (WritePhase, WriteSummary) are the --verbose text.

// WritePhaseLine writes one phase as one line — level, state, success %,
// successful requests/s, p50/p99 and only the failures that happened —
// with its reason (and a failed body's first bytes) on a second line when
// there is one.
//
// conns and the protocol p say what a requests-test level is made of
// (LevelMadeOf); conns 0 writes the most outstanding per connection
// instead ("40 concurrent requests (5/conn)").
func WritePhaseLine(w io.Writer, test brk.Mode, s *brk.PhaseStats, conns int, p brk.Protocol) {
	state := "accepted"
	switch {
	case s.Interrupted:
		state = "interrupted"
	case s.Inconclusive:
		state = "INCONCLUSIVE"
	case s.NotJudged:
		state = "not judged"
	case !s.Accepted:
		state = "REJECTED"
	}
	level := fmt.Sprintf("%d %s", s.Level, test.Unit())
	if test.PerConnPlan() {
		if made := p.LevelMadeOf(s.Level, conns); made != "" && DepthAgrees(s.Level, conns, s.Depth) {
			level += " (" + made + ")"
		} else {
			level += fmt.Sprintf(" (%d/conn)", s.Depth)
		}
	}
	if s.Role != "" && s.Role != "ramp" {
		level += "  " + s.Role
	}
	fmt.Fprintf(w, "phase %d  %s  %s", s.Index, level, state)
	if s.Counts.Attempted > 0 {
		fmt.Fprintf(w, "  success %s  %s ok/s  p50 %s  p99 %s", Pct(s.SuccessPct), num(s.RequestsPerSec),
			MsOf(s.LatencyMs, s.LatencyMs.P50), MsOf(s.LatencyMs, s.LatencyMs.P99))
	}
	if f := nonZeroFailures(s); f != "" {
		fmt.Fprintf(w, "  %s", f)
	}
	fmt.Fprintln(w)
	if s.Reason != "" && !s.Accepted {
		fmt.Fprintf(w, "  reason: %s\n", s.Reason)
	}
	if e := EvidenceLine(s); e != "" {
		fmt.Fprintf(w, "  evidence: %s\n", e)
	}
	if s.Counts.Body > 0 && len(s.BodySamples) > 0 {
		fmt.Fprintf(w, "  first differing body: %q\n", s.BodySamples[0])
	}
}

// nonZeroFailures names the failure categories that happened, the
// category first (`timeout: 3`), with the status codes other than 2xx
// when there were status failures (`status: 404×101`).
func nonZeroFailures(s *brk.PhaseStats) string {
	var parts []string
	for _, name := range brk.FailureCategories() {
		n := s.Counts.Failure(name)
		if n == 0 {
			continue
		}
		if name == "status" {
			if codes := nonSuccessCodes(s.StatusCodes); codes != "" {
				parts = append(parts, "status: "+codes)
				continue
			}
		}
		parts = append(parts, fmt.Sprintf("%s: %d", name, n))
	}
	return strings.Join(parts, ", ")
}

func nonSuccessCodes(m map[string]uint64) string {
	var codes []string
	for k := range m {
		if len(k) == 3 && k[0] == '2' {
			continue
		}
		codes = append(codes, k)
	}
	sort.Strings(codes)
	var b strings.Builder
	for i, k := range codes {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "%s×%d", k, m[k])
	}
	return b.String()
}

// WriteHeld writes the summary sentence: what the service held and where
// it broke, a request mix's targets at the break (BrokeFirst), and a note
// when accepted phases were client-bound.
func WriteHeld(w io.Writer, r *brk.Result) {
	if r.Baseline != nil {
		WriteBaseline(w, r.Baseline)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, Held(r))
	writePeak(w, r)
	WriteBreakEvidence(w, r)
	writeBrokeFirst(w, r)
	writeClientBoundNote(w, r)
}

// Held is the summary sentence: `Held 32 concurrent requests (≈799 req/s,
// p99 41 ms); broke at 40 (success 99.76 % < 99.99 %)`; a search adds its
// resolution and cost, a repeated probe its runs.
func Held(r *brk.Result) string {
	unit := r.Test.Unit()
	held, broke := PairPhases(r)
	fp := r.FinalPair
	var b strings.Builder
	if r.Shard != nil && r.Shard.Unjudged {
		return fmt.Sprintf("Judged no level: shard %d/%d ran without a coordinator; brk merge of every shard's report judges", r.Shard.Index, r.Shard.Count)
	}
	if fixedLoad(r) {
		return fixedLoadSentence(r, r.Phases[0])
	}
	if r.LastAccepted == nil {
		b.WriteString("No level held")
	} else {
		fmt.Fprintf(&b, "Held %d %s", *r.LastAccepted, unit)
		if p := held; p != nil {
			fmt.Fprintf(&b, " (≈%s req/s, p99 %s", num(p.RequestsPerSec), Ms(p.LatencyMs.P99))
			if fp != nil && fp.HeldOf > 1 {
				fmt.Fprintf(&b, "; in %d of %d runs", fp.HeldRuns, fp.HeldOf)
			}
			b.WriteString(")")
		}
	}
	brokeAt := func() {
		if r.FirstRejected != nil {
			fmt.Fprintf(&b, "; broke at %d", *r.FirstRejected)
			if p := broke; p != nil {
				fmt.Fprintf(&b, " (%s", whyRejected(r, p))
				if fp != nil && fp.BrokeOf > 1 {
					fmt.Fprintf(&b, "; in %d of %d runs", fp.BrokeRun, fp.BrokeOf)
				}
				b.WriteString(")")
			}
		}
	}
	switch r.Verdict {
	case brk.VerdictBroken:
		brokeAt()
		if r.Plan.Search != nil {
			res := effectiveResolution(r)
			if gap := bracketGap(r); gap > res {
				fmt.Fprintf(&b, "; stopped at a bracket of %d (resolution %d not reached: see the reason)", gap, res)
			} else {
				fmt.Fprintf(&b, "; resolution %d", res)
			}
			fmt.Fprintf(&b, "; %s in %s", plural(len(r.Phases), "phase"), judge.ShortDuration(phasesTime(r)))
		}
	case brk.VerdictDone:
		if r.Plan.Start > 0 && r.Plan.Start == r.Plan.Max && len(r.Phases) == 1 {
			b.WriteString(": one level, accepted") // a fixed load (-d, or --start N --max N)
		} else {
			b.WriteString(": the --max level, accepted")
		}
	case brk.VerdictInconclusive:
		if r.LastAccepted == nil {
			b.WriteString(": the run ended without a verdict")
		} else {
			b.WriteString("; then the run ended without a verdict")
		}
	case brk.VerdictInterrupted:
		// The bracket so far stands beside the interrupt.
		brokeAt()
		switch {
		case r.FirstRejected != nil:
			b.WriteString("; then interrupted (the bracket so far)")
		case r.LastAccepted == nil:
			b.WriteString(": interrupted")
		default:
			b.WriteString("; then interrupted")
		}
	}
	return b.String()
}

// fixedLoad reports whether r ran one level, no ramp (-d, or --start N
// --max N): its summary is what that load did, not a bracket.
func fixedLoad(r *brk.Result) bool {
	return r.Plan.Start > 0 && r.Plan.Start == r.Plan.Max && len(r.Phases) == 1
}

// fixedLoadSentence is a fixed load's summary: `One level, 32 concurrent
// requests for 1.1 s: 1,000 requests, 997 succeeded (99.7 %), ≈906 req/s,
// p99 41.0 ms; 120 kB received (109 kB/s); rejected (success 99.7 % <
// 99.99 %)`.
func fixedLoadSentence(r *brk.Result, p *brk.PhaseStats) string {
	var b strings.Builder
	fmt.Fprintf(&b, "One level, %d %s for %s s: %s requests, %s succeeded (%s), ≈%s req/s, p99 %s",
		p.Level, r.Test.Unit(), strconv.FormatFloat(math.Round(p.DurationS*100)/100, 'f', -1, 64), num(float64(p.Counts.Attempted)), num(float64(p.Counts.Succeeded)),
		Pct(p.SuccessPct), num(p.RequestsPerSec), Ms(p.LatencyMs.P99))
	if p.BytesReceived > 0 && p.DurationS > 0 {
		fmt.Fprintf(&b, "; %s received (%s/s)", byteCount(float64(p.BytesReceived)), byteCount(float64(p.BytesReceived)/p.DurationS))
	}
	switch {
	case p.Interrupted:
		b.WriteString("; interrupted")
	case r.Verdict == brk.VerdictBroken:
		fmt.Fprintf(&b, "; rejected (%s)", whyRejected(r, p))
	case r.Verdict == brk.VerdictInconclusive:
		b.WriteString("; no verdict")
	default:
		b.WriteString("; accepted")
	}
	return b.String()
}

// byteCount is a byte count in SI units: 512 B, 120 kB, 1.20 MB.
func byteCount(v float64) string {
	for _, u := range []string{"B", "kB", "MB", "GB"} {
		if v < 1000 || u == "GB" {
			if u == "B" {
				return fmt.Sprintf("%.0f B", v)
			}
			return fmt.Sprintf("%s %s", strconv.FormatFloat(v, 'g', 3, 64), u)
		}
		v /= 1000
	}
	return ""
}

// PairPhases are the phases of the final pair (the verdict's last accepted
// and lowest rejected level; nil: none): a search visits levels out of
// order, so these, not the first rejected phase in run order, are the
// break. A report without final_pair (an older one) falls back on the
// last phase at each level.
func PairPhases(r *brk.Result) (held, broke *brk.PhaseStats) {
	at := func(i *int) *brk.PhaseStats {
		if i == nil || *i < 0 || *i >= len(r.Phases) {
			return nil
		}
		return r.Phases[*i]
	}
	if fp := r.FinalPair; fp != nil {
		held, broke = at(fp.HeldPhase), at(fp.BrokePhase)
	}
	if held == nil && r.LastAccepted != nil {
		held = lastPhaseAt(r, *r.LastAccepted, true)
	}
	if broke == nil && r.FirstRejected != nil {
		broke = lastPhaseAt(r, *r.FirstRejected, false)
	}
	return held, broke
}

// effectiveResolution is the bracket a search bisected to: its Resolution,
// or ResolutionPct of the held level (at least 1).
func effectiveResolution(r *brk.Result) int {
	var s brk.Search
	if r.Plan.Search != nil {
		s = *r.Plan.Search
	}
	if s.Resolution > 0 {
		return s.Resolution
	}
	held := 0
	if r.LastAccepted != nil {
		held = *r.LastAccepted
	}
	return max(1, int(float64(held)*s.ResolutionPct/100))
}

// bracketGap is the final pair's distance (the lowest rejected level
// when nothing held).
func bracketGap(r *brk.Result) int {
	if r.FirstRejected == nil {
		return 0
	}
	held := 0
	if r.LastAccepted != nil {
		held = *r.LastAccepted
	}
	return *r.FirstRejected - held
}

// phasesTime is the phases' time, admission and drain, to the second.
func phasesTime(r *brk.Result) time.Duration {
	var s float64
	for _, p := range r.Phases {
		s += p.DurationS
	}
	return time.Duration(s * float64(time.Second)).Round(time.Second)
}

// whyRejected is a rejected phase's reason in short when the success
// rule rejected it: the success share against --accept; else its reason,
// whole. A phase whose success share is below --accept may have been
// rejected for a cause judged before it (protocol faults, the connections
// test's setups): the reason names that cause, never the share.
func whyRejected(r *brk.Result, p *brk.PhaseStats) string {
	acc, err := strconv.ParseFloat(r.Accept, 64)
	if err == nil && p.Counts.Attempted > 0 && p.SuccessPct < acc && successRule(p.Reason) {
		return fmt.Sprintf("success %s < %s %%", Pct(p.SuccessPct), r.Accept)
	}
	return p.Reason
}

// successRule reports whether reason is the success rule's ("success
// 99.7% (…) is below --accept …", the connections test's prefixed
// "requests: "), the words of judge.Judge, or none.
func successRule(reason string) bool {
	return reason == "" || strings.HasPrefix(strings.TrimPrefix(reason, "requests: "), "success ")
}

// lastPhaseAt is the last phase at level, accepted or not.
func lastPhaseAt(r *brk.Result, level int, accepted bool) *brk.PhaseStats {
	for i := len(r.Phases) - 1; i >= 0; i-- {
		if p := r.Phases[i]; p.Level == level && p.Accepted == accepted {
			return p
		}
	}
	return nil
}

// Pct formats a percentage as a number reads: "100 %", "99.9876 %",
// "41.38 %" (4 decimals near 100 %, where the SLA lives; 2 below 99 %).
func Pct(v float64) string {
	prec := 4
	if v < 99 {
		prec = 2
	}
	s := strconv.FormatFloat(v, 'f', prec, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s + " %"
}

// Ms formats milliseconds with about three significant digits: "0.412 ms",
// "41.2 ms", "1234 ms".
func Ms(v float64) string {
	prec := 0
	switch {
	case v < 1:
		prec = 3
	case v < 10:
		prec = 2
	case v < 100:
		prec = 1
	}
	return strconv.FormatFloat(v, 'f', prec, 64) + " ms"
}

// NoSample is the text of a figure that has no sample (a latency of a
// phase without responses), instead of a zero that reads as a
// measurement.
const NoSample = "—"

// MsOf is Ms of v, a figure of l, or NoSample when l has no sample.
func MsOf(l brk.Latency, v float64) string {
	if l.Count == 0 && v == 0 {
		return NoSample
	}
	return Ms(v)
}

// LevelMadeOf says what a requests-test level of conns connections is
// made of over protocol p: "64 connections × 3 pipelined requests", "64
// connections × 1 request", "8 connections × 4 + 56 × 3", "5 connections
// × 1, 3 idle"; streams over HTTP/2. "" when conns is unknown (0). The
// words are the protocol's: brk.Protocol.LevelMadeOf.
func LevelMadeOf(level, conns int, p brk.Protocol) string { return p.LevelMadeOf(level, conns) }

// DepthAgrees reports whether a phase's most outstanding per connection
// is what level over conns connections puts on one (false for a shard's
// phase, whose level is spread over every shard's connections).
func DepthAgrees(level, conns, depth int) bool {
	return conns > 0 && (level+conns-1)/conns == depth
}

// num formats a rate without decimals, with thousands separated: "12,345".
func num(v float64) string {
	s := strconv.FormatFloat(v, 'f', 0, 64)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 && s[i-1] != '-' {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
