package report

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/brk-bench/brk"
	"github.com/brk-bench/brk/internal/judge"
)

// WriteHeader writes the run's conditions before the first phase, the
// SLA it judges last. test is the test mode.
func WriteHeader(w io.Writer, test brk.Mode, t brk.Target, p brk.Plan, threads int) {
	writeHeader(w, test, t, p, threads, false)
}

// writeHeader is WriteHeader; defaultSLA says that the SLA is the
// command line's default (no SLA flag given).
func writeHeader(w io.Writer, test brk.Mode, t brk.Target, p brk.Plan, threads int, defaultSLA bool) {
	p.DefaultsFor(test)
	defer writeSLA(w, p, defaultSLA)
	maxs := "none"
	if p.Max > 0 {
		maxs = fmt.Sprint(p.Max)
	}
	if note := t.Proto().HeaderNote(); note != "" {
		fmt.Fprintf(w, "brk %s test  %s  %s\n", test, t.Name(), note)
	} else {
		fmt.Fprintf(w, "brk %s test  %s\n", test, t.Name())
	}
	if p.Search != nil {
		writeSearchHeader(w, test, p, threads, t.Proto())
		return
	}
	if p.Start == p.Max && p.Start > 0 {
		writeOneLevelHeader(w, test, t, p, threads)
		return
	}
	fmt.Fprint(w, wordsOf(test).rampLine(p, maxs, threads))
}

// writeOneLevelHeader says what a run of one level (a first level equal
// to --max, or --duration) holds: "one level, no ramp: 192 concurrent
// requests (64 connections × 3 pipelined requests); phase 30s, …".
func writeOneLevelHeader(w io.Writer, test brk.Mode, t brk.Target, p brk.Plan, threads int) {
	level := wordsOf(test).oneLevel(t, p)
	fmt.Fprintf(w, "  one level, no ramp: %s; phase %s; %s\n", level, p.Phase, workers(p, threads))
}

// writeSearchHeader says what a search will do before its first phase:
// "searching for the break from 64 concurrent requests, ×2 per phase, to
// a resolution of 1 %; at most 5m".
func writeSearchHeader(w io.Writer, test brk.Mode, p brk.Plan, threads int, protocol brk.Protocol) {
	unit := test.PlanUnit(p.Conns)
	s := p.Search
	res := fmt.Sprintf("%s %% of the last accepted level (at least 1)", strconv.FormatFloat(s.ResolutionPct, 'f', -1, 64))
	if s.Resolution > 0 {
		res = fmt.Sprint(s.Resolution)
	}
	first := fmt.Sprintf("%d %s", p.Start*unit, test.Noun())
	if test.PerConnPlan() {
		first += " (" + protocol.LevelMadeOf(p.Start*unit, p.Conns) + ")"
	}
	fmt.Fprintf(w, "  searching for the break from %s, ×%s per phase, to a resolution of %s", first,
		strconv.FormatFloat(s.Growth, 'f', -1, 64), res)
	if p.Max > 0 {
		fmt.Fprintf(w, ", up to %d", p.Max*unit)
	}
	if p.Budget > 0 {
		fmt.Fprintf(w, "; at most %s", judge.ShortDuration(p.Budget))
	}
	fmt.Fprintln(w)
	over := wordsOf(test).searchOver(p)
	fmt.Fprintf(w, "  %sphase %s", over, p.Phase)
	if p.Repeat > 1 {
		fmt.Fprintf(w, ", a level confirmed in up to %d runs", p.Repeat)
	}
	fmt.Fprintf(w, "; %s\n", workers(p, threads))
}

// writeSLA is the header's last line, the SLA a phase is judged by: "SLA:
// 99.99 % succeed within 1s, p99 at most 100ms", and, for the command
// line's default, that it is one and how to give another.
func writeSLA(w io.Writer, p brk.Plan, defaultSLA bool) {
	fmt.Fprintf(w, "  SLA: %s %% succeed within %s", acceptText(p.Accept), p.Timeout)
	if p.MaxP99 > 0 {
		fmt.Fprintf(w, ", p99 at most %s", p.MaxP99)
	}
	if p.MaxP999 > 0 {
		fmt.Fprintf(w, ", p99.9 at most %s", p.MaxP999)
	}
	if defaultSLA {
		fmt.Fprint(w, " (brk's default SLA; --accept, --timeout, --max-p99 or --max-p999 gives your own)")
	}
	fmt.Fprintln(w)
}

// perConnection is what a connections-test connection carries: "1
// request per connection", or kept alive until each phase's admission ends.
func perConnection(p brk.Plan) string {
	if p.KeepAlive {
		return "each connection kept alive, carrying requests one at a time until its phase's admission ends"
	}
	return plural(max(p.Requests, 1), "request") + " per connection"
}

// acceptText is a Plan's Accept (defaults filled in) as a percentage's
// text: AcceptAny is 0.
func acceptText(v float64) string {
	if v == brk.AcceptAny {
		return "0"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// plural is "1 thing" or "N things".
// workers is the header's worker threads: "2 worker threads", and "on
// io_uring" when they move bytes through one (Plan.UsesUring).
func workers(p brk.Plan, threads int) string {
	if p.UsesUring() {
		return plural(threads, "worker thread") + " on io_uring"
	}
	return plural(threads, "worker thread")
}

func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

// WriteBaseline writes the idle observation made before the load.
func WriteBaseline(w io.Writer, b *brk.Baseline) {
	mach := "unavailable"
	if b.MachineCPUPct != nil {
		mach = fmt.Sprintf("%.1f %%", *b.MachineCPUPct)
	}
	fmt.Fprintf(w, "\nbaseline  %.2f s idle, no traffic: machine CPU %s; client user %.3f s, system %.3f s (shown beside the phases, not subtracted)\n",
		b.DurationS, mach, b.ClientCPU.UserS, b.ClientCPU.SystemS)
}

// WritePhase writes one phase's block: every number with its unit. test is
// the test mode: it says what a level counts.
func WritePhase(w io.Writer, test brk.Mode, s *brk.PhaseStats) {
	state := "accepted"
	switch {
	case s.Interrupted:
		state = "interrupted (not judged)"
	case s.Inconclusive:
		state = "INCONCLUSIVE"
	case s.NotJudged:
		state = "not judged"
	case !s.Accepted:
		state = "REJECTED"
	}
	if s.Role != "" && s.Role != "ramp" {
		state += " (" + s.Role + ")"
	}
	fmt.Fprintf(w, "\nphase %d  %s  %s\n", s.Index, wordsOf(test).phaseLevel(s), state)
	if s.Reason != "" {
		fmt.Fprintf(w, "  reason      %s\n", s.Reason)
	}
	if s.Inconclusive && s.Setups.Established == 0 && s.Counts.Succeeded == 0 {
		// Nothing was set up: a block of zeros would say nothing more.
		fmt.Fprintf(w, "  setups      %d attempted, none established (%d failed, %d timed out)\n",
			s.Setups.Attempted, s.Setups.Failed, s.Setups.TimedOut)
		writeProbe(w, s)
		return
	}
	if len(s.Server) > 0 {
		fmt.Fprintf(w, "  server      %s\n", ServerCPU(s.Server))
	}
	c := s.Counts
	fmt.Fprintf(w, "  requests    %d attempted, %d succeeded (%.4f %%), %.1f successful req/s over %.2f s (admission %.2f s + drain)\n",
		c.Attempted, c.Succeeded, s.SuccessPct, s.RequestsPerSec, s.DurationS, s.ActiveS)
	fmt.Fprintf(w, "  failures    %s\n", failureList(c))
	if s.BytesReceived > 0 && s.DurationS > 0 {
		fmt.Fprintf(w, "  received    %s (%s/s)\n", byteCount(float64(s.BytesReceived)), byteCount(float64(s.BytesReceived)/s.DurationS))
	}
	if len(s.StatusCodes) > 0 {
		fmt.Fprintf(w, "  statuses    %s\n", StatusList(s.StatusCodes))
	}
	if len(s.BodySamples) > 0 {
		fmt.Fprintf(w, "  body        first differing body: %q\n", s.BodySamples[0])
	}
	l := s.LatencyMs
	if r := s.Rate; r != nil {
		writeRate(w, s, r)
	} else {
		fmt.Fprintf(w, "  latency     %d responses: %s\n", l.Count, figures(l))
		fmt.Fprintf(w, "  load        mean outstanding %.1f (target coverage %.1f %%), target reached once on %d connections, time at target %.1f %%\n",
			s.MeanOutstanding, s.TargetCoveragePct, s.TargetReachedOnce, s.TimeAtTargetPct)
	}
	if wordsOf(test).setupLines {
		su, sl := s.Setups, s.SetupLatencyMs
		pct := 0.0
		if su.Attempted > 0 {
			pct = 100 * float64(su.Established) / float64(su.Attempted)
		}
		fmt.Fprintf(w, "  setups      %d attempted, %d established (%.4f %%), %d failed, %d timed out%s, %d resumed; %.1f established/s\n",
			su.Attempted, su.Established, pct, su.Failed, su.TimedOut, abandonedSetups(su), su.Resumed, float64(su.Established)/max(s.DurationS, 1e-9))
		fmt.Fprintf(w, "  setup time  %d setups: %s (connect through handshake)\n", sl.Count, figures(sl))
		fmt.Fprintf(w, "  generator   blocked writes %d; max send delay %.3f ms; max deadline lateness %.3f ms\n",
			s.BlockedWrites, s.MaxSendDelayMs, s.MaxLatenessMs)
	} else {
		fmt.Fprintf(w, "  generator   setups %d attempted, %d established, %d failed, %d timed out%s (mean %.3f ms); blocked writes %d; max send delay %.3f ms; max deadline lateness %.3f ms\n",
			s.Setups.Attempted, s.Setups.Established, s.Setups.Failed, s.Setups.TimedOut, abandonedSetups(s.Setups), s.SetupLatencyMs.Mean,
			s.BlockedWrites, s.MaxSendDelayMs, s.MaxLatenessMs)
	}
	mach := "unavailable"
	if s.MachineCPUPct != nil {
		mach = fmt.Sprintf("%.1f %%", *s.MachineCPUPct)
	}
	busy := "unavailable"
	if s.WorkerBusyPct != nil {
		busy = fmt.Sprintf("%.1f %%", *s.WorkerBusyPct)
	}
	fmt.Fprintf(w, "  cpu         client user %.3f s, system %.3f s, %.2f µs per response; machine %s; worker threads busy %s\n",
		s.ClientCPU.UserS, s.ClientCPU.SystemS, s.ClientCPU.UsPerResponse, mach, busy)
	if t := s.TLS; t != nil {
		fmt.Fprintf(w, "  tls         version %s, cipher %s, group %s; %d setups resumed\n", t.Version, t.Cipher, t.Group, t.Resumed)
	}
	if s.ClientBound {
		fmt.Fprintf(w, "  client_bound: %s; requests/s describes the client, not the server\n", clientBoundWhy(s))
	}
	if s.ResetsSent > 0 || s.GoAwaysReceived > 0 || s.PeerMaxStreams != nil {
		limit := "none set"
		if s.PeerMaxStreams != nil {
			limit = fmt.Sprint(*s.PeerMaxStreams)
		}
		fmt.Fprintf(w, "  http/2      resets sent %d, GOAWAYs received %d, streams replayed %d; server stream limit %s\n",
			s.ResetsSent, s.GoAwaysReceived, s.StreamsReplayed, limit)
	}
	if s.IdleCloses > 0 {
		fmt.Fprintf(w, "  idle close  %d connections ended by the server while idle (its 408 farewell): replaced, no request failed\n", s.IdleCloses)
	}
	if s.ProtocolFault != "" {
		fmt.Fprintf(w, "  protocol    first fault: %s\n", s.ProtocolFault)
	}
	if s.SetupError != "" {
		fmt.Fprintf(w, "  setup       first error: %s\n", s.SetupError)
	}
	writeProbe(w, s)
	WritePhaseTargets(w, s) // a request mix's targets (targets.go)
}

// writeProbe counts the connections the TLS probe opened after the phase,
// beside its setups, so that a server's count of connections reconciles.
func writeProbe(w io.Writer, s *brk.PhaseStats) {
	if s.TLSProbes > 0 {
		fmt.Fprintf(w, "  tls probe   %s after the phase, beside its setups: a TLS ClientHello to ask whether the port speaks TLS\n",
			plural(int(s.TLSProbes), "connection"))
	}
}

// writeRate writes a rate test phase's schedule, latency from the
// scheduled instant, send lag, service time and load lines.
func writeRate(w io.Writer, s *brk.PhaseStats, r *brk.RateStats) {
	fmt.Fprintf(w, "  schedule    %d scheduled, %d written, %d expired unsent; offered %.1f req/s over the admission window, achieved %.1f successful req/s\n",
		r.Scheduled, r.Written, r.ExpiredUnsent, r.OfferedPerSec, r.AchievedPerSec)
	writeDist(w, "latency", s.LatencyMs, "responses", "from the scheduled instant")
	writeDist(w, "send lag", r.SendLagMs, "writes", "scheduled → written")
	writeDist(w, "service", r.ServiceMs, "responses", "written → response")
	writeDist(w, "client lag", r.ClientLagMs, "arrivals", "scheduled → taken up by its worker")
	fmt.Fprintf(w, "  load        mean outstanding %.1f (written, unanswered); schedule shortfall %.3f %% (above 1 %% the phase is unfulfilled)\n",
		s.MeanOutstanding, r.ShortfallPct)
}

func writeDist(w io.Writer, name string, l brk.Latency, what, note string) {
	fmt.Fprintf(w, "  %-11s %d %s: %s (%s)\n", name, l.Count, what, figures(l), note)
}

// figures are a distribution's mean and percentiles, each — when it has
// no sample (a phase without responses).
func figures(l brk.Latency) string {
	if l.Count == 0 {
		return "mean —, p50 —, p90 —, p99 —, p99.9 —, max —"
	}
	return fmt.Sprintf("mean %.3f ms, p50 %.3f ms, p90 %.3f ms, p99 %.3f ms, p99.9 %.3f ms, max %.3f ms", l.Mean, l.P50, l.P90, l.P99, l.P999, l.Max)
}

// FinalLine is the last stdout line of a run: Done (N unit), Broken (N
// unit), Inconclusive: reason or Interrupted (README.md's exit codes table).
func FinalLine(r *brk.Result) string {
	unit := r.Test.Noun()
	switch r.Verdict {
	case brk.VerdictDone:
		if r.Shard != nil && r.Shard.Unjudged {
			return "Ran its plan: not judged, the verdict is brk merge's"
		}
		n := 0
		if r.LastAccepted != nil {
			n = *r.LastAccepted
		}
		return fmt.Sprintf("Done (%d %s)", n, unit)
	case brk.VerdictBroken:
		n := 0
		if r.FirstRejected != nil {
			n = *r.FirstRejected
		}
		return fmt.Sprintf("Broken (%d %s)", n, unit)
	case brk.VerdictInterrupted:
		return "Interrupted"
	}
	return "Inconclusive: " + strings.ReplaceAll(r.Reason, "\n", " ")
}

// WriteSummary writes the bracket and the reason before the final line,
// and a request mix's targets at the break (BrokeFirst).
func WriteSummary(w io.Writer, r *brk.Result) {
	if r.Baseline != nil {
		WriteBaseline(w, r.Baseline)
	}
	fmt.Fprintln(w)
	unit := r.Test.Unit()
	if r.LastAccepted != nil {
		fmt.Fprintf(w, "last accepted: %d %s\n", *r.LastAccepted, unit)
	} else {
		fmt.Fprintf(w, "last accepted: none\n")
	}
	if r.FirstRejected != nil {
		fmt.Fprintf(w, "first rejected: %d %s\n", *r.FirstRejected, unit)
	}
	if r.Reason != "" && r.Verdict != brk.VerdictInconclusive {
		fmt.Fprintf(w, "reason: %s\n", r.Reason)
	}
	writePeak(w, r)
	WriteBreakEvidence(w, r)
	writeBrokeFirst(w, r)
	writeClientBoundNote(w, r)
}

// clientBoundWhy is what left a client_bound phase's client no slack:
// its workers busy, its process's other goroutines holding the CPUs
// (judge.StarvedFloor at least), or its schedule's lateness.
func clientBoundWhy(s *brk.PhaseStats) string {
	switch {
	case s.WorkerBusyPct != nil && *s.WorkerBusyPct >= 100*judge.ClientBoundShare:
		return "the worker threads were busy nearly all the time"
	case s.ProcessWaitP99Ms != nil && *s.ProcessWaitP99Ms >= float64(judge.StarvedFloor)/1e6:
		return fmt.Sprintf("brk's process kept its goroutines, the workers among them, waiting %.3g ms (p99) for a CPU", *s.ProcessWaitP99Ms)
	case s.Rate != nil && s.Rate.ShortfallPct > 100*judge.MaxShortfall:
		return "the client fell behind its arrival schedule"
	}
	return "the client had no slack"
}

// writeClientBoundNote notes, for a Done run, the phases that were
// client_bound.
func writeClientBoundNote(w io.Writer, r *brk.Result) {
	if n := clientBoundPhases(r); n > 0 && r.Verdict == brk.VerdictDone {
		were := fmt.Sprintf("%d phases were", n)
		if n == 1 {
			were = "1 phase was"
		}
		fmt.Fprintf(w, "note: %s client_bound: their req/s describes the client, not the server\n", were)
	}
}

func clientBoundPhases(r *brk.Result) int {
	n := 0
	for _, p := range r.Phases {
		if p.ClientBound {
			n++
		}
	}
	return n
}

// failureList is "timeout N, transport N, …": every failure category of c
// in report order.
func failureList(c brk.Counts) string {
	var b strings.Builder
	for i, name := range brk.FailureCategories() {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %d", name, c.Failure(name))
	}
	return b.String()
}

// abandonedSetups names the setups an interrupt gave up, when there were
// any.
func abandonedSetups(s brk.Setups) string {
	if s.Abandoned == 0 {
		return ""
	}
	return fmt.Sprintf(", %d abandoned", s.Abandoned)
}

// WriteAB writes an A/B run's side-by-side summary: both ramps, both
// breaks, and each side's final line.
func WriteAB(w io.Writer, r *brk.ABResult) {
	side := func(f func(*brk.Result) string) [2]string {
		return [2]string{f(r.A), f(r.B)}
	}
	level := func(p *int, unit string) string {
		if p == nil {
			return "none"
		}
		return fmt.Sprintf("%d %s", *p, unit)
	}
	rows := []struct {
		name string
		v    [2]string
	}{
		{"url", side(func(x *brk.Result) string { return x.URL })},
		{"verdict", side(func(x *brk.Result) string { return string(x.Verdict) })},
		{"phases", side(func(x *brk.Result) string { return fmt.Sprint(len(x.Phases)) })},
		{"last accepted", side(func(x *brk.Result) string { return level(x.LastAccepted, x.Test.Unit()) })},
		{"first rejected", side(func(x *brk.Result) string { return level(x.FirstRejected, x.Test.Unit()) })},
		{"best req/s", side(func(x *brk.Result) string {
			best := 0.0
			for _, p := range x.Phases {
				if p.Accepted {
					best = max(best, p.RequestsPerSec)
				}
			}
			return fmt.Sprintf("%.0f", best)
		})},
		{"reason", side(func(x *brk.Result) string { return x.Reason })},
	}
	width := len("A")
	for _, row := range rows {
		width = max(width, len(row.v[0]))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "%-15s %-*s  %s\n", "", width, "A", "B")
	for _, row := range rows {
		fmt.Fprintf(w, "%-15s %-*s  %s\n", row.name, width, row.v[0], row.v[1])
	}
	fmt.Fprintf(w, "A: %s\nB: %s\n", FinalLine(r.A), FinalLine(r.B))
}

// ServerCPU describes each --server-pid process's use over a phase.
func ServerCPU(procs []brk.ServerCPU) string {
	var b strings.Builder
	for i, p := range procs {
		if i > 0 {
			b.WriteString("; ")
		}
		if p.Gone {
			fmt.Fprintf(&b, "pid %d gone (could not be read at the phase's start or end)", p.PID)
			continue
		}
		fmt.Fprintf(&b, "pid %d user %.2f s, system %.2f s, %.1f µs per successful response, RSS %.1f MB",
			p.PID, p.UserS, p.SystemS, p.UsPerResponse, float64(p.RSSBytes)/1e6)
	}
	return b.String()
}

// StatusList is "200×49745, 404×101": the responses per status code, in
// code order.
func StatusList(m map[string]uint64) string {
	codes := make([]string, 0, len(m))
	for k := range m {
		codes = append(codes, k)
	}
	sort.Strings(codes) // three-digit codes sort as numbers; "other" last
	var b strings.Builder
	for i, k := range codes {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s×%d", k, m[k])
	}
	return b.String()
}
