package judge

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/brk-bench/brk/internal/metrics"
)

// Verdict is how a run ended. Its text (MarshalText) is the report's
// "verdict": done, broken, inconclusive or interrupted.
type Verdict string

// The verdicts: the run ends done (the --max level accepted), broken (a
// level rejected), inconclusive (the run could not judge the server:
// setup impossible, the client the limit, …) or interrupted; each has an
// exit code (ExitCode).
const (
	Done         Verdict = "done"
	Broken       Verdict = "broken"
	Inconclusive Verdict = "inconclusive"
	Interrupted  Verdict = "interrupted"
)

// exitCodes is the CLI's exit status of each verdict; any other is 3.
var exitCodes = map[Verdict]int{Done: 0, Broken: 1, Inconclusive: 3, Interrupted: 130}

// String is the verdict's name ("done").
func (v Verdict) String() string { return string(v) }

// ExitCode maps a verdict to the CLI's exit status: 0 done, 1 broken, 130
// interrupted, 3 otherwise.
func (v Verdict) ExitCode() int {
	if c, ok := exitCodes[v]; ok {
		return c
	}
	return 3
}

// MarshalText is the verdict's name.
func (v Verdict) MarshalText() ([]byte, error) { return []byte(v), nil }

// UnmarshalText reads a verdict's name as it is.
func (v *Verdict) UnmarshalText(b []byte) error {
	*v = Verdict(b)
	return nil
}

// Judgement is the verdict on one phase.
type Judgement struct {
	// Stop ends the run at this phase with Verdict; otherwise the phase
	// was accepted and the ramp goes on.
	Stop     bool
	Verdict  Verdict
	Accepted bool
	Judged   bool // false for an interrupted phase
	// Inconclusive marks a phase that ended the run inconclusive: it is
	// neither accepted nor a server verdict.
	Inconclusive bool
	// NotJudged marks a phase run without a verdict: an Unjudged plan's
	// (a shard without a coordinator), or one a merge reports past its end.
	NotJudged bool
	// ClientBound marks an inconclusive phase the client limited: its
	// workers were saturated, or it fell behind its arrival schedule. A
	// search bisects below such a level (levels.go).
	ClientBound bool
	Reason      string // why it was rejected or inconclusive
}

// unreachedDepth is the requests test's rule that every connection in use
// held its depth at least once ("" : every one did).
func unreachedDepth(s *metrics.Phase, plan Plan, level int) string {
	owners := uint64(plan.Mode.owners(level, plan.Conns))
	if s.ReachedOnce >= owners {
		return ""
	}
	limit := ""
	if s.PeerMaxKnown && s.PeerMaxStreams < int64(plan.depth(level)) {
		limit = fmt.Sprintf(" (the server's SETTINGS_MAX_CONCURRENT_STREAMS is %d)", s.PeerMaxStreams)
	}
	return fmt.Sprintf("target unfulfilled: %d of %d connections never held %s%s",
		owners-s.ReachedOnce, owners, heldText(level, plan.Conns), limit)
}

// unreachedConns is the connections test's rule that every concurrent
// connection carried a request.
func unreachedConns(s *metrics.Phase, plan Plan, level int) string {
	owners := uint64(plan.Mode.owners(level, plan.Conns))
	if s.ReachedOnce >= owners {
		return ""
	}
	return fmt.Sprintf("target unfulfilled: %d of %d concurrent connections never carried a request",
		owners-s.ReachedOnce, owners)
}

// Judge decides phase index at level from its measurement alone: a pure
// function of the counts and the plan, so that the measurements of
// several load boxes, merged, are judged by the same code.
func Judge(m *Measurement, plan Plan, index, level int) Judgement {
	s := m.Stats
	c := &s.Counts
	target := level
	n := plan.Names.Filled()
	// The connections test judges the share of established setups too.
	setupsShort := plan.Mode.spec().judgeSetups && !plan.Accept.Met(s.Setups.Established, s.Setups.Attempted)
	switch {
	case m.Interrupted:
		return Judgement{Stop: true, Verdict: Interrupted} // not judged: no reason of its own
	case m.ClientError != "":
		return inconclusive(m.ClientError)
	case index == 0 && m.SpeaksTLS && c.Succeeded == 0:
		// Phase 0 heard nothing over plain TCP and the port answered a
		// TLS ClientHello: the user's mistake, not a server that broke.
		return inconclusive(fmt.Sprintf("the server speaks TLS on this port: use https:// (dialing %s)", plan.Addr))
	case (m.SetupFailed || index == 0 && s.Setups.Attempted > 0) && s.Setups.Established == 0:
		// Only when no setup of the phase succeeded: an outage after
		// setups had succeeded is judged by what it did to the requests.
		msg := s.SetupError
		if msg == "" {
			msg = "no connection could be established"
		}
		return inconclusive(fmt.Sprintf("setup impossible: %s (dialing %s)", msg, plan.Addr))
	case index == 0 && mistakeOf(m, n) != "":
		return inconclusive(mistakeOf(m, n)) // mistake.go
	case c.Failed[metrics.Protocol] > 0 || s.ProtocolUnattributed > 0:
		return broken(fmt.Sprintf("invalid protocol data from the server: %d protocol faults (first: %s)",
			c.Failed[metrics.Protocol]+s.ProtocolUnattributed, s.ProtocolReason))
	case plan.Mode.Clocked() && m.Shortfall() > MaxShortfall:
		// The client did not keep its schedule: what the server did
		// under a lower offered rate is no verdict on this level.
		advice := "give it more CPU or " + n.Threads
		if starved(m, plan.Timeout) {
			advice = starvedText(m)
		}
		return clientBound(fmt.Sprintf("target unfulfilled: the client fell behind its arrival schedule at %d requests/s (arrivals taken up %.3g ms late on average over a %.3g s window: the offered rate fell %.3g %% short)%s; %s",
			target, float64(s.LateNs)/float64(max(s.Scheduled, 1))/1e6, m.Active.Seconds(), 100*m.Shortfall(), behindText(m.Behind), advice))
	case setupsShort:
		// The server's whatever the workers' load, timed out or not:
		// the connects are the declared load, and a saturated client
		// offers fewer of them, not more. A setup times out when the
		// server's accept queue drops its SYN (nginx's listen backlog of
		// 511 in a flagless connections search: 223 to 1,103 setups in a
		// phase waited the whole second while the workers' timers were
		// at most 12 ms late, 99.9 % busy). Unlike the rate test's
		// connects, which follow the retirements a saturated client's
		// timeouts cause (clientSaturated).
		return broken(fmt.Sprintf("setups: %.4g%% established (%d of %d; %d failed, %d timed out) is below %s %s%% at %d %s",
			pct(s.Setups.Established, s.Setups.Attempted), s.Setups.Established, s.Setups.Attempted,
			s.Setups.Failed, s.Setups.TimedOut, n.Accept, plan.Accept, target, plan.Mode.Unit()))
	case !plan.Accept.Met(c.Succeeded, c.Attempted) && clientSaturated(m, plan):
		return clientBound(saturatedReason(m, n))
	case !plan.Accept.Met(c.Succeeded, c.Attempted):
		prefix := ""
		if plan.Mode.spec().judgeSetups {
			prefix = "requests: "
		}
		return broken(fmt.Sprintf("%ssuccess %.4g%% (%d of %d) is below %s %s%% at %d %s",
			prefix, pct(c.Succeeded, c.Attempted), c.Succeeded, c.Attempted, n.Accept, plan.Accept, target, plan.Mode.Unit()))
	}
	if reason := latencyRule(s, plan, n); reason != "" {
		if saturatedWorkers(m) || starved(m, latencyBudget(plan)) {
			return clientBound(saturatedReason(m, n) + " (" + reason + ")")
		}
		return broken(reason)
	}
	if reason := plan.Mode.spec().unreached(s, plan, level); reason != "" {
		return inconclusive(reason)
	}
	if reason := streamLimitRule(s, plan, level); reason != "" {
		return inconclusive(reason)
	}
	return Judgement{Verdict: Done, Accepted: true, Judged: true}
}

// heldText is what a requests-test connection was to hold at level: "3
// requests outstanding", or its share when level is not a multiple of
// conns.
func heldText(level, conns int) string {
	if level%conns == 0 {
		return fmt.Sprintf("%d requests outstanding", level/conns)
	}
	return "their share of the level (" + PerConnText(level, conns) + ")"
}

// latencyRule names the latency limit a phase broke, if any: its p99 or
// p99.9 above its limit (MaxP99, MaxP999), named by n.
func latencyRule(s *metrics.Phase, plan Plan, n Names) string {
	for _, r := range []struct {
		q     float64
		limit time.Duration
		name  string
		flag  string
	}{{99, plan.MaxP99, "p99", n.MaxP99}, {99.9, plan.MaxP999, "p99.9", n.MaxP999}} {
		if r.limit <= 0 || s.Latency.TotalCount() == 0 {
			continue
		}
		if v := time.Duration(s.Latency.ValueAtQuantile(r.q)) * time.Microsecond; v > r.limit {
			return fmt.Sprintf("%s %s above %s %s", r.name, fmtMs(v), r.flag, r.limit)
		}
	}
	return ""
}

// fmtMs formats a latency in milliseconds with up to 3 significant
// decimals ("183 ms", "1.25 ms").
func fmtMs(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/1e6, 'g', 4, 64) + " ms"
}

// ClientBoundShare is the share of wall time the worker threads must have
// been running or waiting for a CPU for a phase to be client_bound: at 90 %
// the client had no slack left to notice arrivals on time, so the phase's
// requests/s describes the client rather than the server.
const ClientBoundShare = 0.90

// clientSaturated reports whether a phase's failures are all timeouts
// (and the followers those timeouts abandoned) while its workers were
// saturated, or kept waiting for a CPU by the rest of their process
// (clientStarved): then the client, not the server, may have missed the
// deadlines. A connect that timed out (connect_timeout) counts as a
// timeout too, with the requests queued behind it: in the requests and
// rate tests connections are opened once, and a connect in a phase
// follows the retirement of a connection whose request timed out. Two
// rate runs against one nginx at 204,800/s, workers 90 % and 94 % busy:
// requests waited up to 1 s in the client's own queue, 88,751 connects
// replaced the 64 connections' retirements in one phase, and 64 of them
// timed out; that phase was judged the server's break, the other run's
// (timeouts only) the client's. The connections test's setups are judged
// before this rule, and whatever the workers' load (Judge). A connection
// the server ended (transport, and the followers it abandons), a connect
// it refused (connect), a status, body or protocol failure is the
// server's doing whatever the client's load: a server that hangs up on
// every connection keeps the workers busy reconnecting, and that is no
// sign of a slow client. Abandoned requests count as timing only as far
// as the phase attributes them to a timeout: a response's
// (TimeoutFollowers) or a connect's (ConnectTimeoutFollowers); a
// measurement that does not attribute them (an older shard's) counts
// them as the server's.
func clientSaturated(m *Measurement, plan Plan) bool {
	if !clientStarved(m, plan) {
		return false
	}
	f := &m.Stats.Counts.Failed
	followers := m.Stats.TimeoutFollowers + m.Stats.ConnectTimeoutFollowers
	timing := f[metrics.Timeout] + f[metrics.ConnectTimeout] + min(followers, f[metrics.Abandoned])
	return timing > 0 && timing == m.Stats.Counts.FailedTotal()
}

// saturatedWorkers reports whether the phase's workers were busy at
// least ClientBoundShare of its wall time.
func saturatedWorkers(m *Measurement) bool {
	return m.WorkerBusyOK && m.WorkerBusy >= ClientBoundShare
}

// StarvedShare and StarvedFloor: the client was starved when its
// process's goroutines waited for a P at p99 at least StarvedShare of the
// budget that failed the phase (the timeout; for a latency limit, the
// lowest limit given), and at least StarvedFloor. A worker kept waiting
// reads responses late: with 4 goroutines per P spinning beside brk in
// its process, against a fixture on a core of its own, the p99 wait was
// 84–101 ms and a phase with a 100 ms timeout failed 31 and 64 requests
// by timeout (0 alone, at 0.1–0.3 ms), its workers 14–18 % busy. A wait
// well below the budget cannot make a request miss it unless the server
// took most of it: the e2e tests' in-process servers, slowed by the tests
// beside them, and three shards of brk and their coordinator on two cores
// waited 7–29 ms at p99 with 100–200 ms budgets, and their breaks were the
// servers'. With a loop per core on the box the wait stayed at 0–2.6 ms.
const (
	StarvedShare = 0.5
	StarvedFloor = 5 * time.Millisecond
)

// clientStarved reports whether the phase's client had no slack: its
// workers saturated, or starved within the timeout.
func clientStarved(m *Measurement, plan Plan) bool {
	return saturatedWorkers(m) || starved(m, plan.Timeout)
}

// starved reports whether the phase's process kept its goroutines, the
// workers among them, waiting for a P long enough to miss budget
// (StarvedShare, StarvedFloor).
func starved(m *Measurement, budget time.Duration) bool {
	return m.ProcessWaitOK && m.ProcessWait >= max(StarvedFloor, time.Duration(StarvedShare*float64(budget)))
}

// latencyBudget is the lowest latency limit the plan gives (MaxP99,
// MaxP999), else its timeout.
func latencyBudget(plan Plan) time.Duration {
	b := plan.Timeout
	for _, l := range []time.Duration{plan.MaxP99, plan.MaxP999} {
		if l > 0 && (b <= 0 || l < b) {
			b = l
		}
	}
	return b
}

// saturatedReason is why a client with no slack was the limit: its
// workers saturated, else its process starved it.
func saturatedReason(m *Measurement, n Names) string {
	if !saturatedWorkers(m) {
		return "the client was starved: " + starvedText(m)
	}
	return fmt.Sprintf("the client was saturated: workers %.0f %% busy — give more %s or a bigger load box", 100*m.WorkerBusy, n.Threads)
}

// starvedText says what kept the workers waiting and what to do.
func starvedText(m *Measurement) string {
	return fmt.Sprintf("this process's goroutines waited up to %s (p99) for a CPU — other work in brk's process competes with its workers: run brk in a process of its own", fmtMs(m.ProcessWait))
}

// MaxShortfall is the share of the schedule the rate test's client may
// fall short of before a phase is unfulfilled.
const MaxShortfall = 0.01

// Shortfall is the share by which the rate test's offered rate fell short
// of its schedule because the client took arrivals up late: arrivals each
// taken up L late shift the offered load by L, so the admission window W
// offers L/W less of it. Zero outside the rate test.
func (m *Measurement) Shortfall() float64 {
	s := m.Stats
	if s == nil || s.Scheduled == 0 || m.Active <= 0 {
		return 0
	}
	return float64(s.LateNs) / float64(s.Scheduled) / float64(m.Active)
}

// behindText names the shards whose own client fell behind.
func behindText(b []Behind) string {
	if len(b) == 0 {
		return ""
	}
	var w strings.Builder
	w.WriteString(": behind on ")
	for i, s := range b {
		if i > 0 {
			w.WriteString(", ")
		}
		fmt.Fprintf(&w, "shard %d (%.3g %% short)", s.Shard, 100*s.Shortfall)
	}
	return w.String()
}

func inconclusive(reason string) Judgement {
	return Judgement{Stop: true, Verdict: Inconclusive, Judged: true, Inconclusive: true, Reason: reason}
}

// clientBound is an inconclusive judgement the client's limit caused.
func clientBound(reason string) Judgement {
	j := inconclusive(reason)
	j.ClientBound = true
	return j
}

func broken(reason string) Judgement {
	return Judgement{Stop: true, Verdict: Broken, Judged: true, Reason: reason}
}

func pct(part, whole uint64) float64 {
	if whole == 0 {
		return 0
	}
	return 100 * float64(part) / float64(whole)
}
