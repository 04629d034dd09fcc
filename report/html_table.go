package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/brk-bench/brk"
)

// The phase table: one compact row per phase (level, state, success,
// successful requests/s, requests, the failures that happened, latency
// percentiles), under it a row with the phase's notes (reason, faults,
// server figures, statuses, the first differing body) and every figure of
// the phase in a <details> that opens without scripts. Everything wraps to
// the page's width: no horizontal scrolling at 1280 px.

// htmlRow is one phase of the table.
type htmlRow struct {
	Index, Level           int
	Per                    string // "5/conn" (requests test), "" elsewhere
	State, StateClass      string
	Probe, ClientBound     bool
	Role                   string // the phase's role when it is not a linear ramp's step
	Attempted, Succeeded   uint64
	SuccessPct, RPS        string
	Failed                 []htmlKV // the failure categories that happened
	P50, P90, P99          string
	P999, Max              string
	Reason, Fault, SetupEr string
	Server                 string // --server-pid figures
	Statuses               string // responses per status code
	BodySample             string // the first body that failed its check
	Groups                 []htmlGroup
}

// htmlKV is one labelled figure.
type htmlKV struct{ K, V string }

// htmlGroup is a titled group of a phase's figures.
type htmlGroup struct {
	Title string
	Items []htmlKV
}

func phaseRow(test brk.Mode, p *brk.PhaseStats) htmlRow {
	l := p.LatencyMs
	row := htmlRow{
		Index: p.Index, Level: p.Level,
		State: "accepted", StateClass: "acc", Probe: p.Probe, ClientBound: p.ClientBound,
		Attempted: p.Counts.Attempted, Succeeded: p.Counts.Succeeded,
		SuccessPct: strings.TrimSuffix(Pct(p.SuccessPct), " %"), RPS: num(p.RequestsPerSec),
		P50: msCell(l.P50), P90: msCell(l.P90), P99: msCell(l.P99), P999: msCell(l.P999), Max: msCell(l.Max),
		Reason: p.Reason, Fault: p.ProtocolFault, SetupEr: p.SetupError,
	}
	if test.PerConnPlan() { // the per-connection column
		row.Per = fmt.Sprintf("%d/conn", p.Depth)
	}
	if p.Role != "ramp" {
		row.Role = p.Role
	}
	switch {
	case p.Interrupted:
		row.State, row.StateClass = "interrupted", "int"
	case p.Inconclusive:
		row.State, row.StateClass = "inconclusive", "bad"
	case !p.Accepted:
		row.State, row.StateClass = "rejected", "bad"
	}
	if len(p.Server) > 0 {
		row.Server = ServerCPU(p.Server)
	}
	if len(p.StatusCodes) > 0 {
		row.Statuses = StatusList(p.StatusCodes)
	}
	if len(p.BodySamples) > 0 {
		row.BodySample = strconv.Quote(p.BodySamples[0])
	}
	var fails []htmlKV
	for _, name := range brk.FailureCategories() {
		n := p.Counts.Failure(name)
		fails = append(fails, htmlKV{name, strconv.FormatUint(n, 10)})
		if n > 0 {
			row.Failed = append(row.Failed, htmlKV{name, strconv.FormatUint(n, 10)})
		}
	}
	row.Groups = phaseGroups(p, fails)
	return row
}

// phaseGroups is every figure of the phase, grouped as the text report's
// full block groups them.
func phaseGroups(p *brk.PhaseStats, fails []htmlKV) []htmlGroup {
	u := func(v uint64) string { return strconv.FormatUint(v, 10) }
	opt := func(v *float64) string {
		if v == nil {
			return "n/a"
		}
		return fmtF(*v, 1)
	}
	yn := func(b bool) string {
		if b {
			return "yes"
		}
		return "no"
	}
	l, sl := p.LatencyMs, p.SetupLatencyMs
	gs := []htmlGroup{
		{"requests", []htmlKV{
			{"attempted", u(p.Counts.Attempted)}, {"succeeded", u(p.Counts.Succeeded)},
			{"success %", fmtF(p.SuccessPct, 4)}, {"successful req/s", fmtF(p.RequestsPerSec, 1)},
			{"duration s", fmtF(p.DurationS, 2)}, {"admission s", fmtF(p.ActiveS, 2)},
		}},
		{"failures", fails},
		{"latency (ms)", []htmlKV{
			{"responses", u(l.Count)}, {"mean", fmtF(l.Mean, 3)}, {"p50", fmtF(l.P50, 3)}, {"p90", fmtF(l.P90, 3)},
			{"p99", fmtF(l.P99, 3)}, {"p99.9", fmtF(l.P999, 3)}, {"max", fmtF(l.Max, 3)},
		}},
		{"load", []htmlKV{
			{"mean outstanding", fmtF(p.MeanOutstanding, 1)}, {"coverage %", fmtF(p.TargetCoveragePct, 1)},
			{"connections at target once", u(p.TargetReachedOnce)}, {"time at target %", fmtF(p.TimeAtTargetPct, 1)},
		}},
		{"client", []htmlKV{
			{"CPU µs/response", fmtF(p.ClientCPU.UsPerResponse, 2)},
			{"CPU user s", fmtF(p.ClientCPU.UserS, 3)}, {"CPU system s", fmtF(p.ClientCPU.SystemS, 3)},
			{"machine CPU %", opt(p.MachineCPUPct)}, {"worker threads busy %", opt(p.WorkerBusyPct)},
			{"client_bound", yn(p.ClientBound)},
		}},
		{"connection setups", []htmlKV{
			{"attempted", u(p.Setups.Attempted)}, {"established", u(p.Setups.Established)},
			{"failed", u(p.Setups.Failed)}, {"timed out", u(p.Setups.TimedOut)},
			{"abandoned", u(p.Setups.Abandoned)}, {"resumed", u(p.Setups.Resumed)},
			{"established/s", fmtF(p.SetupsPerSec, 1)},
			{"setup mean ms", fmtF(sl.Mean, 3)}, {"setup p99 ms", fmtF(sl.P99, 3)}, {"setup max ms", fmtF(sl.Max, 3)},
		}},
		{"generator", []htmlKV{
			{"blocked writes", u(p.BlockedWrites)}, {"max send delay ms", fmtF(p.MaxSendDelayMs, 3)},
			{"max deadline lateness ms", fmtF(p.MaxLatenessMs, 3)},
		}},
	}
	if t := p.TLS; t != nil {
		gs = append(gs, htmlGroup{"TLS", []htmlKV{
			{"version", t.Version}, {"cipher", t.Cipher}, {"group", t.Group}, {"resumed", u(t.Resumed)},
		}})
	}
	if p.ResetsSent > 0 || p.GoAwaysReceived > 0 || p.StreamsReplayed > 0 || p.PeerMaxStreams != nil || p.IdleCloses > 0 {
		limit := "none set"
		if p.PeerMaxStreams != nil {
			limit = strconv.FormatInt(*p.PeerMaxStreams, 10)
		}
		gs = append(gs, htmlGroup{"HTTP/2 and replays", []htmlKV{
			{"resets sent", u(p.ResetsSent)}, {"GOAWAYs received", u(p.GoAwaysReceived)},
			{"streams replayed", u(p.StreamsReplayed)}, {"server stream limit", limit},
			{"idle closes", u(p.IdleCloses)},
		}})
	}
	if r := p.Rate; r != nil {
		gs = append(gs, htmlGroup{"schedule (rate test)", []htmlKV{
			{"scheduled", u(r.Scheduled)}, {"written", u(r.Written)}, {"expired unsent", u(r.ExpiredUnsent)},
			{"offered req/s", fmtF(r.OfferedPerSec, 1)}, {"achieved req/s", fmtF(r.AchievedPerSec, 1)},
			{"shortfall %", fmtF(r.ShortfallPct, 3)},
		}})
	}
	return gs
}

// msCell is a latency in a column headed "ms": about three significant
// digits, as in the text report (the details keep every digit).
func msCell(v float64) string {
	if !finite(v) {
		return fmtF(v, 3)
	}
	return strings.TrimSuffix(Ms(v), " ms")
}
