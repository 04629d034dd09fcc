package metrics

import (
	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/brk-bench/brk/internal/exchange"
)

// Setups counts connection setups (connect through end of handshake).
// Attempted counts setups started in the phase; each ends established,
// failed, timed out or abandoned within the phase's drain.
type Setups struct {
	Attempted   uint64 `json:"attempted"`
	Established uint64 `json:"established"`
	Failed      uint64 `json:"failed"`
	TimedOut    uint64 `json:"timed_out"`
	Abandoned   uint64 `json:"abandoned"` // in progress when an interrupt ended the phase
	Resumed     uint64 `json:"resumed"`
}

func (s *Setups) add(o *Setups) {
	s.Attempted += o.Attempted
	s.Established += o.Established
	s.Failed += o.Failed
	s.TimedOut += o.TimedOut
	s.Abandoned += o.Abandoned
	s.Resumed += o.Resumed
}

// StatusCounts counts responses per status code: index = code for
// 100..599, 0 for anything else.
type StatusCounts [600]uint64

// Add records one response with status code.
func (c *StatusCounts) Add(code int) {
	if code < 100 || code >= len(c) {
		code = 0
	}
	c[code]++
}

// Merge adds o.
func (c *StatusCounts) Merge(o *StatusCounts) {
	for i, v := range o {
		c[i] += v
	}
}

// Counts are the outcome counts of a phase.
type Counts struct {
	Attempted uint64                `json:"attempted"`
	Succeeded uint64                `json:"succeeded"`
	Failed    [NumCategories]uint64 `json:"failed"` // by Category
}

// FailedTotal sums every failure category.
func (c *Counts) FailedTotal() uint64 {
	var n uint64
	for _, v := range c.Failed {
		n += v
	}
	return n
}

// Phase is the merge of every worker's recorder for one phase. Phases of
// the same level merge (Add), from several load boxes too, and a Phase
// round-trips through JSON with its histograms in HdrHistogram's base64
// V2 compressed encoding.
type Phase struct {
	Counts                  Counts                  `json:"counts"`
	Latency                 *hdrhistogram.Histogram `json:"-"`
	LatencySumNs            uint64                  `json:"latency_sum_ns"`
	LatencyCount            uint64                  `json:"latency_count"`
	SetupLatency            *hdrhistogram.Histogram `json:"-"`
	Setups                  Setups                  `json:"setups"`
	OutstandingNs           uint64                  `json:"outstanding_ns"`
	ActiveNs                uint64                  `json:"active_ns"` // summed over workers
	Workers                 int                     `json:"workers"`
	AtTargetNs              uint64                  `json:"at_target_ns"`
	ReachedOnce             uint64                  `json:"reached_once"`
	BlockedWrites           uint64                  `json:"blocked_writes"`
	MaxSendDelay            int64                   `json:"max_send_delay_ns"`
	MaxLateness             int64                   `json:"max_lateness_ns"`
	ProtocolReason          string                  `json:"protocol_reason,omitempty"`
	SetupError              string                  `json:"setup_error,omitempty"`
	ClientError             string                  `json:"client_error,omitempty"`
	ProtocolUnattributed    uint64                  `json:"protocol_unattributed"`
	TimeoutFollowers        uint64                  `json:"timeout_followers,omitempty"`
	ConnectTimeoutFollowers uint64                  `json:"connect_timeout_followers,omitempty"`
	Heard                   uint64                  `json:"heard,omitempty"`
	TLSProbes               uint64                  `json:"tls_probes,omitempty"` // connections the TLS probe opened (sched.Engine.RunPhase), outside the setups
	Statuses                StatusCounts            `json:"statuses"`
	BodySamples             []string                `json:"body_samples,omitempty"`
	TLS                     TLSInfo                 `json:"tls"`
	ResetsSent              uint64                  `json:"resets_sent,omitempty"`
	GoAwaysReceived         uint64                  `json:"goaways_received,omitempty"`
	Replayed                uint64                  `json:"replayed,omitempty"`
	IdleCloses              uint64                  `json:"idle_closes,omitempty"`
	PeerMaxStreams          int64                   `json:"peer_max_streams,omitempty"`
	PeerMaxKnown            bool                    `json:"peer_max_known,omitempty"`
	StreamLimit             StreamLimit             `json:"stream_limit,omitzero"`
	Written                 uint64                  `json:"written"`
	BytesRead               uint64                  `json:"bytes_read,omitempty"`
	Scheduled               uint64                  `json:"scheduled"`
	ExpiredUnsent           uint64                  `json:"expired_unsent"`
	LateNs                  uint64                  `json:"late_ns"`
	// The rate test's histograms; nil in the other tests.
	SendLag   *hdrhistogram.Histogram `json:"-"`
	Service   *hdrhistogram.Histogram `json:"-"`
	ClientLag *hdrhistogram.Histogram `json:"-"`
	// Timeline is the phase's outcomes span by span (nil when no worker
	// kept one).
	Timeline *Timeline `json:"timeline,omitempty"`
	// Scatter is a sample of the phase's complete responses (at most
	// MaxScatter) with their arrival and latency, for the HTML report's
	// latency-over-time plot. It stays in the process that measured it:
	// a shard's report does not carry it.
	Scatter Scatter `json:"-"`
	// Targets are a request mix's outcomes per target, in mix order
	// (targets.go; absent without a mix).
	Targets []TargetPhase `json:"targets,omitempty"`
}

// StreamLimit is what a phase knows of connections whose peer stream
// limit (HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS) was below their target:
// the worst connection's time under it and its time in the phase, and
// the lowest such limit on any connection (when Known). Floor (when
// FloorKnown) is the lowest, over the connections, of the limit each had
// in force for all but a small share of its time in the phase, below its
// target or not: what the server admits, read before a level reaches it.
type StreamLimit struct {
	BelowNs    int64 `json:"below_ns"`
	LivedNs    int64 `json:"lived_ns"`
	Lowest     int64 `json:"lowest"`
	Known      bool  `json:"known"`
	Floor      int64 `json:"floor,omitempty"`
	FloorKnown bool  `json:"floor_known,omitempty"`
}

// Conn adds one connection: belowNs of its livedNs in the phase under a
// limit below its target, the lowest of them lowest.
func (l *StreamLimit) Conn(belowNs, livedNs, lowest int64) {
	if livedNs <= 0 {
		return
	}
	if l.LivedNs == 0 || float64(belowNs)*float64(l.LivedNs) > float64(l.BelowNs)*float64(livedNs) {
		l.BelowNs, l.LivedNs = belowNs, livedNs
	}
	if belowNs > 0 && (!l.Known || lowest < l.Lowest) {
		l.Lowest, l.Known = lowest, true
	}
}

// Share is the worst connection's share of its time under a limit below
// its target.
func (l *StreamLimit) Share() float64 {
	if l.LivedNs <= 0 {
		return 0
	}
	return float64(l.BelowNs) / float64(l.LivedNs)
}

// ConnFloor adds one connection's limit in force (see Floor).
func (l *StreamLimit) ConnFloor(floor int64) {
	if !l.FloorKnown || floor < l.Floor {
		l.Floor, l.FloorKnown = floor, true
	}
}

func (l *StreamLimit) add(q *StreamLimit) {
	l.Conn(q.BelowNs, q.LivedNs, q.Lowest)
	if q.Known && (!l.Known || q.Lowest < l.Lowest) {
		l.Lowest, l.Known = q.Lowest, true
	}
	if q.FloorKnown {
		l.ConnFloor(q.Floor)
	}
}

// peerMax keeps the lowest known peer stream limit.
func (p *Phase) peerMax(v int64, known bool) {
	if known && (!p.PeerMaxKnown || v < p.PeerMaxStreams) {
		p.PeerMaxStreams, p.PeerMaxKnown = v, true
	}
}

// TLSInfo is what a TLS handshake negotiated (zero for plain TCP).
type TLSInfo = exchange.TLSInfo

// NewPhase returns an empty merge target.
func NewPhase() *Phase {
	return &Phase{Latency: NewHistogram(), SetupLatency: NewHistogram()}
}

// Add merges q, a phase of the same level measured elsewhere (another
// load box), into p.
func (p *Phase) Add(q *Phase) {
	for i, v := range q.Counts.Failed {
		p.Counts.Failed[i] += v
	}
	p.Counts.Succeeded += q.Counts.Succeeded
	p.Counts.Attempted = p.Counts.Succeeded + p.Counts.FailedTotal()
	p.Latency.Merge(q.Latency)
	p.LatencySumNs += q.LatencySumNs
	p.LatencyCount += q.LatencyCount
	p.SetupLatency.Merge(q.SetupLatency)
	p.Setups.add(&q.Setups)
	p.OutstandingNs += q.OutstandingNs
	p.ActiveNs += q.ActiveNs
	p.Workers += q.Workers
	p.AtTargetNs += q.AtTargetNs
	p.ReachedOnce += q.ReachedOnce
	p.BlockedWrites += q.BlockedWrites
	p.MaxSendDelay = max(p.MaxSendDelay, q.MaxSendDelay)
	p.MaxLateness = max(p.MaxLateness, q.MaxLateness)
	p.ProtocolUnattributed += q.ProtocolUnattributed
	p.TimeoutFollowers += q.TimeoutFollowers
	p.ConnectTimeoutFollowers += q.ConnectTimeoutFollowers
	p.Heard += q.Heard
	p.TLSProbes += q.TLSProbes
	p.Statuses.Merge(&q.Statuses)
	p.addSamples(q.BodySamples)
	p.ResetsSent += q.ResetsSent
	p.GoAwaysReceived += q.GoAwaysReceived
	p.Replayed += q.Replayed
	p.IdleCloses += q.IdleCloses
	p.BytesRead += q.BytesRead
	p.peerMax(q.PeerMaxStreams, q.PeerMaxKnown)
	p.StreamLimit.add(&q.StreamLimit)
	p.addRate(q.Written, q.Scheduled, q.ExpiredUnsent, q.LateNs, q.SendLag, q.Service, q.ClientLag)
	p.firsts(q.TLS, q.ProtocolReason, q.SetupError, q.ClientError)
	p.addTargets(q.Targets)
	p.Scatter.add(q.Scatter.Points, q.Scatter.Seen) // a shard's report carries none: the box's own stays
	if q.Timeline != nil {
		if p.Timeline == nil {
			p.Timeline = &Timeline{}
		}
		p.Timeline.add(q.Timeline)
	}
}

// addSamples keeps the first MaxBodySamples failed bodies.
func (p *Phase) addSamples(s []string) {
	for _, b := range s {
		if len(p.BodySamples) < MaxBodySamples {
			p.BodySamples = append(p.BodySamples, b)
		}
	}
}

// addRate adds the rate test's counters and histograms.
func (p *Phase) addRate(written, scheduled, expired, late uint64, lag, svc, cl *hdrhistogram.Histogram) {
	p.Written += written
	p.Scheduled += scheduled
	p.ExpiredUnsent += expired
	p.LateNs += late
	if lag == nil {
		return
	}
	if p.SendLag == nil {
		p.SendLag, p.Service, p.ClientLag = NewHistogram(), NewHistogram(), NewHistogram()
	}
	p.SendLag.Merge(lag)
	p.Service.Merge(svc)
	p.ClientLag.Merge(cl)
}

// firsts keeps the first TLS negotiation and messages seen.
func (p *Phase) firsts(tls TLSInfo, protocol, setup, client string) {
	if p.TLS.Version == 0 {
		p.TLS = tls
	}
	if p.ProtocolReason == "" {
		p.ProtocolReason = protocol
	}
	if p.SetupError == "" {
		p.SetupError = setup
	}
	if p.ClientError == "" {
		p.ClientError = client
	}
}

// Merge adds one worker's recorder: as Add adds a phase, so that each
// field's merge rule is written once, in Add.
func (p *Phase) Merge(r *Recorder) {
	q := r.phase()
	p.Add(&q)
	p.mergeTargetRecs(r.Targets)
	p.Scatter.add(r.sc.points, r.sc.seen)
	if r.tl.cur != nil {
		if p.Timeline == nil {
			p.Timeline = &Timeline{}
		}
		p.Timeline.merge(&r.tl)
	}
}

// phase is r as one worker's Phase, for Add; it shares r's histograms and
// body samples, and leaves the timeline to Merge.
func (r *Recorder) phase() Phase {
	return Phase{
		Counts:                  Counts{Succeeded: r.Succeeded, Failed: r.Failed},
		Latency:                 r.Latency,
		LatencySumNs:            r.LatencySumNs,
		LatencyCount:            r.LatencyCount,
		SetupLatency:            r.SetupLatency,
		Setups:                  r.Setups,
		OutstandingNs:           r.OutstandingNs,
		ActiveNs:                r.ActiveNs,
		Workers:                 1,
		AtTargetNs:              r.AtTargetNs,
		ReachedOnce:             r.ReachedOnce,
		BlockedWrites:           r.BlockedWrites,
		MaxSendDelay:            r.MaxSendDelayNs,
		MaxLateness:             r.MaxLatenessNs,
		ProtocolReason:          r.ProtocolReason,
		SetupError:              r.SetupError,
		ClientError:             r.ClientError,
		ProtocolUnattributed:    r.ProtocolUnattributed,
		TimeoutFollowers:        r.TimeoutFollowers,
		ConnectTimeoutFollowers: r.ConnectTimeoutFollowers,
		Heard:                   r.Heard,
		Statuses:                r.Statuses,
		BodySamples:             r.BodySamples,
		TLS:                     r.TLS,
		ResetsSent:              r.ResetsSent,
		GoAwaysReceived:         r.GoAwaysReceived,
		Replayed:                r.Replayed,
		IdleCloses:              r.IdleCloses,
		PeerMaxStreams:          r.PeerMaxStreams,
		PeerMaxKnown:            r.PeerMaxKnown,
		StreamLimit:             r.StreamLimit,
		Written:                 r.Written,
		BytesRead:               r.BytesRead,
		Scheduled:               r.Scheduled,
		ExpiredUnsent:           r.ExpiredUnsent,
		LateNs:                  r.LateNs,
		SendLag:                 r.SendLag,
		Service:                 r.Service,
		ClientLag:               r.ClientLag,
	}
}
