package brk

import (
	"crypto/tls"
	"encoding/json"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/brk-bench/brk/internal/judge"
	"github.com/brk-bench/brk/internal/metrics"
)

// This file converts the engine's judged phases into the results' PhaseStats.

// rawMeasurement is m's JSON form for PhaseStats.Raw (nil: none).
func rawMeasurement(m *judge.Measurement) json.RawMessage {
	if m == nil {
		return nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil
	}
	return b
}

// measurementOf reads PhaseStats.Raw back (nil: none, or no stats).
func measurementOf(raw json.RawMessage) *judge.Measurement {
	if len(raw) == 0 {
		return nil
	}
	var m judge.Measurement
	if json.Unmarshal(raw, &m) != nil || m.Stats == nil {
		return nil
	}
	return &m
}

func phaseStats(j *judge.Judged) *PhaseStats {
	r := j.Run
	m := r.Stats
	c := &m.Counts
	s := &PhaseStats{
		Index: j.Index, Role: j.Role.String(), Level: j.Target, Depth: j.Depth, Probe: j.Probe,
		Accepted: j.Accepted, Interrupted: r.Interrupted, Inconclusive: j.Inconclusive, NotJudged: j.NotJudged, Reason: j.Reason,
		DurationS: r.Elapsed.Seconds(), ActiveS: r.Active.Seconds(),
		Counts:              countsOf(c),
		StatusCodes:         m.Statuses.Map(),
		BodySamples:         m.BodySamples,
		LatencyMs:           latency(m.Latency.TotalCount(), m.LatencySumNs, m),
		SetupLatencyMs:      setupLatency(m),
		LatencyHdr:          encodeHist(m),
		LatencyDistribution: latencyDistribution(m.Latency),
		TargetReachedOnce:   m.ReachedOnce,
		BlockedWrites:       m.BlockedWrites,
		MaxSendDelayMs:      float64(m.MaxSendDelay) / 1e6,
		MaxLatenessMs:       float64(m.MaxLateness) / 1e6,
		Setups:              m.Setups,
		TLSProbes:           m.TLSProbes,
		TLS:                 tlsStats(j),
		Targets:             targetStats(m, nil),
		ProtocolFault:       m.ProtocolReason,
		SetupError:          m.SetupError,

		ResetsSent: m.ResetsSent, GoAwaysReceived: m.GoAwaysReceived, StreamsReplayed: m.Replayed,
		IdleCloses: m.IdleCloses, BytesReceived: m.BytesRead,
	}
	if m.PeerMaxKnown {
		v := m.PeerMaxStreams
		s.PeerMaxStreams = &v
	}
	if c.Attempted > 0 {
		s.SuccessPct = 100 * float64(c.Succeeded) / float64(c.Attempted)
	}
	if r.Elapsed > 0 {
		s.RequestsPerSec = float64(c.Succeeded) / r.Elapsed.Seconds()
		s.SetupsPerSec = float64(m.Setups.Established) / r.Elapsed.Seconds()
	}
	if m.ActiveNs > 0 && m.Workers > 0 && m.SendLag == nil {
		active := float64(m.ActiveNs) / float64(m.Workers)
		s.MeanOutstanding = float64(m.OutstandingNs) / active
		if j.Target > 0 {
			s.TargetCoveragePct = 100 * s.MeanOutstanding / float64(j.Target)
		}
		if owners := j.Owners; owners > 0 {
			s.TimeAtTargetPct = 100 * float64(m.AtTargetNs) / (active * float64(owners))
		}
	}
	s.ClientCPU = ClientCPU{UserS: r.CPU.User.Seconds(), SystemS: r.CPU.System.Seconds()}
	if resp := m.LatencyCount; resp > 0 {
		s.ClientCPU.UsPerResponse = float64((r.CPU.User + r.CPU.System).Microseconds()) / float64(resp)
	}
	if r.MachineOK {
		v := r.Machine
		s.MachineCPUPct = &v
	}
	if r.Other.OK {
		v := r.Other
		s.OtherCPU = &v
	}
	if j.Judged && !j.NotJudged {
		e := j.Evidence
		s.Evidence = &e
	}
	if r.WorkerBusyOK {
		v := 100 * r.WorkerBusy
		s.WorkerBusyPct = &v
	}
	if r.ProcessWaitOK {
		v := float64(r.ProcessWait) / 1e6
		s.ProcessWaitP99Ms = &v
	}
	s.ClientBound = j.ClientStarved || r.WorkerBusyOK && r.WorkerBusy >= judge.ClientBoundShare
	if m.SendLag != nil {
		// The rate test has no depth to cover: mean outstanding only.
		if m.ActiveNs > 0 && m.Workers > 0 {
			s.MeanOutstanding = float64(m.OutstandingNs) / (float64(m.ActiveNs) / float64(m.Workers))
		}
		s.Rate = rateStats(r, s.RequestsPerSec)
		s.ClientBound = s.ClientBound || r.Shortfall() > judge.MaxShortfall
	}
	s.Timeline = timeline(r)
	s.Scatter = scatter(r, s.Timeline)
	return s
}

// scatter is the phase's sampled responses placed in the run (seconds
// since its start, as the timeline's), or nil without a timeline.
func scatter(r *judge.Measurement, tl *Timeline) []ScatterPoint {
	pts := r.Stats.Scatter.Points
	if tl == nil || len(pts) == 0 {
		return nil
	}
	out := make([]ScatterPoint, len(pts))
	for i, p := range pts {
		out[i] = ScatterPoint{AtS: tl.StartS + float64(p.AtUs)/1e6, Ms: float64(p.LatUs) / 1e3}
	}
	return out
}

// countsOf is the engine's counts as the results' Counts.
func countsOf(c *metrics.Counts) Counts {
	return Counts{
		Attempted: c.Attempted, Succeeded: c.Succeeded,
		Timeout:        c.Failed[metrics.Timeout],
		Transport:      c.Failed[metrics.Transport],
		Abandoned:      c.Failed[metrics.Abandoned],
		Connect:        c.Failed[metrics.Connect],
		ConnectTimeout: c.Failed[metrics.ConnectTimeout],
		Status:         c.Failed[metrics.Status],
		Body:           c.Failed[metrics.Body],
		Protocol:       c.Failed[metrics.Protocol],
	}
}

// Own is what this load box itself measured of the phase: in a sharded
// run, whose PhaseStats are the merged run's, the box's own counts,
// status codes and latency (from Raw); otherwise, or when the phase
// carries no raw measurement, ps itself. Only Index, Level, Counts,
// SuccessPct, StatusCodes, LatencyMs and LatencyHdr are filled from Raw.
func (ps *PhaseStats) Own() *PhaseStats {
	m := measurementOf(ps.Raw)
	if m == nil {
		return ps
	}
	st := m.Stats
	own := &PhaseStats{
		Index: ps.Index, Level: ps.Level,
		Counts:      countsOf(&st.Counts),
		StatusCodes: st.Statuses.Map(),
		LatencyMs:   latency(st.Latency.TotalCount(), st.LatencySumNs, st),
		LatencyHdr:  encodeHist(st),
	}
	if own.Counts.Attempted > 0 {
		own.SuccessPct = 100 * float64(own.Counts.Succeeded) / float64(own.Counts.Attempted)
	}
	return own
}

// timeline is a phase's outcomes over time: its spans through the end of
// its drain (an empty span inside the phase is a stall, and kept).
func timeline(r *judge.Measurement) *Timeline {
	t := r.Stats.Timeline
	if t == nil || t.WidthNs <= 0 {
		return nil
	}
	n := int((int64(r.Elapsed) + t.WidthNs - 1) / t.WidthNs)
	n = min(max(n, len(t.Trimmed())), len(t.Spans))
	out := &Timeline{
		StartS: float64(t.StartNs) / 1e9, WidthS: float64(t.WidthNs) / 1e9,
		Points: make([]TimelinePoint, n),
	}
	for i, sp := range t.Spans[:n] {
		c := &sp.Statuses
		out.Points[i] = TimelinePoint{Succeeded: sp.Succeeded, Failed: sp.Failed, P99Ms: float64(sp.P99Us) / 1e3,
			Statuses: StatusClasses{S1xx: c[1], S2xx: c[2], S3xx: c[3], S4xx: c[4], S5xx: c[5], Other: c[0]},
			SlowP99:  sp.SlowP99, SlowP999: sp.SlowP999, Setups: sp.Setups, SetupsFailed: sp.SetupsFailed}
	}
	return out
}

// rateStats is a rate test phase's schedule accounting.
func rateStats(r *judge.Measurement, achieved float64) *RateStats {
	m := r.Stats
	rs := &RateStats{
		Scheduled: m.Scheduled, Written: m.Written, ExpiredUnsent: m.ExpiredUnsent,
		AchievedPerSec: achieved,
		SendLagMs:      histLatency(m.SendLag),
		ServiceMs:      histLatency(m.Service),
		ClientLagMs:    histLatency(m.ClientLag),
		ShortfallPct:   100 * r.Shortfall(),
	}
	if r.Active > 0 {
		rs.OfferedPerSec = float64(m.Scheduled) / r.Active.Seconds()
	}
	return rs
}

func latency(count int64, sumNs uint64, m *metrics.Phase) Latency {
	if count == 0 {
		return Latency{}
	}
	h := m.Latency
	return Latency{
		Count: uint64(count),
		Mean:  float64(sumNs) / float64(m.LatencyCount) / 1e6,
		P50:   float64(h.ValueAtQuantile(50)) / 1e3,
		P90:   float64(h.ValueAtQuantile(90)) / 1e3,
		P99:   float64(h.ValueAtQuantile(99)) / 1e3,
		P999:  float64(h.ValueAtQuantile(99.9)) / 1e3,
		Max:   float64(h.Max()) / 1e3,
	}
}

// latencyDistribution is h's percentile distribution in ms (empty, not
// nil, when h has no values: the JSON always has the array).
func latencyDistribution(h *hdrhistogram.Histogram) []LatencyPoint {
	d := metrics.Distribution(h)
	out := make([]LatencyPoint, len(d))
	for i, p := range d {
		out[i] = LatencyPoint{Percentile: p.Percentile, Ms: float64(p.ValueUs) / 1e3, Count: uint64(p.Count)}
	}
	return out
}

func tlsStats(j *judge.Judged) *TLSStats {
	m := j.Run.Stats
	if m.TLS.Version == 0 && m.Setups.Resumed == 0 {
		return nil
	}
	return &TLSStats{
		Version: versionName(m.TLS.Version),
		Cipher:  tls.CipherSuiteName(m.TLS.CipherSuite),
		Group:   groupName(tls.CurveID(m.TLS.Group)),
		Resumed: m.Setups.Resumed,
	}
}

func encodeHist(m *metrics.Phase) string {
	b, err := m.Latency.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return ""
	}
	return string(b)
}

func setupLatency(m *metrics.Phase) Latency { return histLatency(m.SetupLatency) }

// histLatency summarises a µs histogram in milliseconds (its mean from
// the histogram).
func histLatency(h *hdrhistogram.Histogram) Latency {
	if h == nil || h.TotalCount() == 0 {
		return Latency{}
	}
	return Latency{
		Count: uint64(h.TotalCount()),
		Mean:  h.Mean() / 1e3,
		P50:   float64(h.ValueAtQuantile(50)) / 1e3,
		P90:   float64(h.ValueAtQuantile(90)) / 1e3,
		P99:   float64(h.ValueAtQuantile(99)) / 1e3,
		P999:  float64(h.ValueAtQuantile(99.9)) / 1e3,
		Max:   float64(h.Max()) / 1e3,
	}
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }
