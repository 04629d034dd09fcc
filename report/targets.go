package report

import (
	"fmt"
	"io"
	"net/url"
	"sort"
	"strings"

	"github.com/brk-bench/brk"
)

// A request mix (Target.Mix) in the text report: under each phase's full
// block (-v), the phase's targets by failure share, highest first; in the
// summary of a broken run, the targets of the final pair's rejected phase
// the same way, so which endpoint broke first reads at once. Without a
// mix (no PhaseStats.Targets) nothing is written.

// SummaryTargets is how many targets the summary of a broken run names;
// the rest are counted ("… 3 more").
const SummaryTargets = 5

// TargetFailed is a target's failed requests: attempted less succeeded.
func TargetFailed(t *brk.TargetStats) uint64 {
	if t.Counts.Succeeded >= t.Counts.Attempted {
		return 0
	}
	return t.Counts.Attempted - t.Counts.Succeeded
}

// TargetFailureShare is a target's failed ÷ attempted (0 when it attempted
// nothing).
func TargetFailureShare(t *brk.TargetStats) float64 {
	if t.Counts.Attempted == 0 {
		return 0
	}
	return float64(TargetFailed(t)) / float64(t.Counts.Attempted)
}

// ByFailureShare returns the targets sorted by failure share, highest
// first; ties by index (mix order). ts is not changed.
func ByFailureShare(ts []brk.TargetStats) []brk.TargetStats {
	out := append([]brk.TargetStats(nil), ts...)
	sort.SliceStable(out, func(i, j int) bool {
		fi, fj := TargetFailureShare(&out[i]), TargetFailureShare(&out[j])
		if fi != fj {
			return fi > fj
		}
		return out[i].Index < out[j].Index
	})
	return out
}

// TargetName is a target as a report names it: its method and its URL's
// path and query (the origin is the mix's, common to all), "GET /api/slow".
func TargetName(t *brk.TargetStats) string {
	path := t.URL
	if u, err := url.Parse(t.URL); err == nil && u.Host != "" {
		path = u.RequestURI()
	}
	if t.Method == "" {
		return path
	}
	return t.Method + " " + path
}

// targetFailures names the failure categories that happened, "timeout
// 120, status 3" ("" when none did).
func targetFailures(c brk.Counts) string {
	var parts []string
	for _, name := range brk.FailureCategories() {
		if n := c.Failure(name); n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", name, n))
		}
	}
	return strings.Join(parts, ", ")
}

// WritePhaseTargets writes a phase's targets under its full block: one
// line each, by failure share, highest first, with its attempted, success
// %, failure share, p50/p99, the failure categories that happened and the
// status codes other than 2xx. Nothing without a mix.
func WritePhaseTargets(w io.Writer, s *brk.PhaseStats) {
	if len(s.Targets) == 0 {
		return
	}
	ts := ByFailureShare(s.Targets)
	width := 0
	for i := range ts {
		width = max(width, len(TargetName(&ts[i])))
	}
	fmt.Fprintf(w, "  targets     %s, by failure share, highest first:\n", plural(len(ts), "target"))
	for i := range ts {
		t := &ts[i]
		fmt.Fprintf(w, "    %-*s  %d attempted, success %s, failed %s, p50 %s, p99 %s", width, TargetName(t),
			t.Counts.Attempted, targetPct(t, t.SuccessPct), targetPct(t, 100*TargetFailureShare(t)),
			MsOf(t.LatencyMs, t.LatencyMs.P50), MsOf(t.LatencyMs, t.LatencyMs.P99))
		if f := targetFailures(t.Counts); f != "" {
			fmt.Fprintf(w, "; %s", f)
		}
		if codes := nonSuccessCodes(t.StatusCodes); codes != "" {
			fmt.Fprintf(w, "; non-2xx %s", codes)
		}
		fmt.Fprintln(w)
	}
}

// targetPct is Pct of v, or NoSample when the target attempted nothing.
func targetPct(t *brk.TargetStats, v float64) string {
	if t.Counts.Attempted == 0 {
		return NoSample
	}
	return Pct(v)
}

// BrokeFirst is the summary's line on a broken run's request mix: the
// targets of the final pair's rejected phase by failure share, highest
// first, at most SummaryTargets of them — "broke at 64: GET /api/slow 41 %
// failed (timeout 120), p99 98.1 ms; GET /api/fast 0.2 % failed (status
// 2; non-2xx 503×2), p99 3.10 ms; … 2 more". "" when the run did not break or the
// phase has no targets.
func BrokeFirst(r *brk.Result) string {
	if r.Verdict != brk.VerdictBroken {
		return ""
	}
	_, broke := PairPhases(r)
	if broke == nil || len(broke.Targets) == 0 {
		return ""
	}
	ts := ByFailureShare(broke.Targets)
	var b strings.Builder
	fmt.Fprintf(&b, "broke at %d:", broke.Level)
	for i := range ts {
		if i == SummaryTargets {
			fmt.Fprintf(&b, "; … %d more", len(ts)-SummaryTargets)
			break
		}
		t := &ts[i]
		if i > 0 {
			b.WriteString(";")
		}
		fmt.Fprintf(&b, " %s %s failed", TargetName(t), targetPct(t, 100*TargetFailureShare(t)))
		var why []string
		if f := targetFailures(t.Counts); f != "" {
			why = append(why, f)
		}
		if codes := nonSuccessCodes(t.StatusCodes); codes != "" {
			why = append(why, "non-2xx "+codes)
		}
		if len(why) > 0 {
			fmt.Fprintf(&b, " (%s)", strings.Join(why, "; "))
		}
		fmt.Fprintf(&b, ", p99 %s", MsOf(t.LatencyMs, t.LatencyMs.P99))
	}
	return b.String()
}

// writeBrokeFirst writes BrokeFirst on its own line when there is one.
func writeBrokeFirst(w io.Writer, r *brk.Result) {
	if s := BrokeFirst(r); s != "" {
		fmt.Fprintln(w, s)
	}
	if s := HeadOfLineNote(r); s != "" {
		fmt.Fprintln(w, s)
	}
}

// HeadOfLineNote is the summary's note on a request mix pipelined over
// HTTP/1.1 ("" otherwise): a connection answers its requests in order,
// so each target waits behind the slowest written before it, and the
// targets' latencies are not their own.
func HeadOfLineNote(r *brk.Result) string {
	if p, ok := brk.ProtocolNamed(r.Protocol); r.Test != brk.ModeRequests || !ok || !p.AnswersInOrder() {
		return ""
	}
	for _, p := range r.Phases {
		if p.Depth > 1 && len(p.Targets) > 1 {
			return "note: pipelined over HTTP/1.1, a connection answers in order: each target waited behind the slowest written before it (head-of-line blocking), so the targets' latencies are not their own; brk conn or brk rate (one request a connection at a time) tells them apart"
		}
	}
	return ""
}
