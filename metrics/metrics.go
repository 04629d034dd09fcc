// Package metrics keeps brk's per-worker measurements and merges them.
//
// Each worker owns one Recorder per run and resets it at every phase start.
// Nothing in a Recorder is shared while the phase runs except the Live
// counters, which a reporter may read atomically once a second. At phase
// end the controller merges every worker's Recorder into a Phase on its own
// goroutine, after the workers have handed their recorders over.
package metrics

import (
	"encoding/json"
	"math"
	"strconv"
	"sync/atomic"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Category is a failure category of an attempted request.
type Category uint8

// The failure categories of an attempted request, each counted separately
// (the "failures" of docs/reports.md).
const (
	Timeout Category = iota
	Transport
	Abandoned
	Connect
	ConnectTimeout
	Status
	Body
	Protocol
	NumCategories
)

var categoryNames = [NumCategories]string{
	"timeout", "transport", "abandoned", "connect", "connect_timeout", "status", "body", "protocol",
}

// String returns the category's report name.
func (c Category) String() string {
	if c < NumCategories {
		return categoryNames[c]
	}
	return "unknown"
}

// Categories lists every category in report order.
func Categories() []Category {
	out := make([]Category, NumCategories)
	for i := range out {
		out[i] = Category(i)
	}
	return out
}

// Histogram range: 1 µs .. 60 s at 3 significant digits.
const (
	histLowest  = 1
	histHighest = 60_000_000
	histSigFigs = 3
)

// NewHistogram returns a latency histogram in microseconds.
func NewHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(histLowest, histHighest, histSigFigs)
}

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

// Live holds the counters a progress reporter may read while a phase runs.
type Live struct {
	Succeeded   atomic.Uint64
	Failed      [NumCategories]atomic.Uint64
	Established atomic.Uint64
	SetupFailed atomic.Uint64
	// Reached counts connections that reached their phase's target (once
	// per connection and phase).
	Reached atomic.Uint64
	// OutstandingNs mirrors the worker's outstanding-requests integral
	// (request·ns, never reset), published once per loop iteration.
	OutstandingNs atomic.Uint64
	// Scheduled counts the rate test's arrivals taken up; Written counts
	// requests completely written for the first time.
	Scheduled atomic.Uint64
	Written   atomic.Uint64
	// Latency counts complete responses by coarse latency bucket, so that
	// a reader can tell the p99 so far (LiveP99Us).
	Latency [CoarseBuckets]atomic.Uint64
}

// Recorder is one worker's measurements for the current phase.
type Recorder struct {
	Succeeded uint64
	Failed    [NumCategories]uint64

	Latency      *hdrhistogram.Histogram // µs, complete responses
	LatencySumNs uint64
	LatencyCount uint64
	SetupLatency *hdrhistogram.Histogram // µs, connect through handshake

	Setups Setups

	// OutstandingNs is the time integral of written-but-unanswered
	// requests over the admission window, in request·nanoseconds.
	OutstandingNs uint64
	// ActiveNs is this worker's admission window.
	ActiveNs uint64
	// AtTargetNs is the summed connection time at full target depth.
	AtTargetNs uint64
	// ReachedOnce counts connections that reached their target at least once.
	ReachedOnce uint64
	// BlockedWrites counts writes that stopped on a full socket.
	BlockedWrites uint64
	// MaxSendDelayNs is the longest time from admission to fully written.
	MaxSendDelayNs int64
	// MaxLatenessNs is the longest delay between a deadline and its
	// observation by the worker.
	MaxLatenessNs int64

	// ProtocolReason is the first protocol fault seen in the phase.
	ProtocolReason string
	// SetupError is the first setup failure's message in the phase.
	SetupError string
	// ClientError is set when the client ran out of a local resource.
	ClientError string

	// TLS is the first negotiation seen in the phase.
	TLS TLSInfo

	// ProtocolUnattributed counts protocol faults on connections that had
	// no request to charge them to.
	ProtocolUnattributed uint64
	// TimeoutFollowers counts the abandoned requests that a timeout
	// abandoned (the followers of an expired HTTP/1.1 request, whose
	// connection is retired with it); they are counted as Abandoned too.
	TimeoutFollowers uint64
	// Heard counts connections that read at least one byte from the
	// server.
	Heard uint64

	// Statuses counts complete responses by status code (100..599; other
	// codes in slot 0).
	Statuses StatusCounts
	// BodySamples are the first few bodies that failed their check (their
	// first bytes).
	BodySamples []string
	// HTTP/2: streams reset after their deadline, GOAWAYs received,
	// written requests replayed on a new connection (any protocol), and
	// the lowest stream limit a peer set (when PeerMaxKnown).
	ResetsSent      uint64
	GoAwaysReceived uint64
	Replayed        uint64
	PeerMaxStreams  int64
	PeerMaxKnown    bool
	// StreamLimit: the connection whose peer stream limit stayed below
	// its target the largest share of its time in the phase (HTTP/2).
	StreamLimit StreamLimit
	// Written counts requests completely written (a replay counts once).
	Written uint64
	// Scheduled counts the rate test's arrivals that came due in the
	// admission window; ExpiredUnsent those whose deadline passed before
	// they were completely written (also counted as timeout).
	Scheduled     uint64
	ExpiredUnsent uint64
	// LateNs sums how late the worker took up each scheduled arrival
	// (its clock against the schedule: CPU, timer lateness).
	LateNs uint64
	// The rate test's histograms (µs; nil in the other tests): send lag
	// (scheduled → completely written), service time (written → response
	// complete) and client lag (scheduled → taken up by its worker, the
	// part of the send lag no slot wait explains).
	SendLag, Service, ClientLag *hdrhistogram.Histogram

	tl   recTimeline
	live *Live
}

// NewRecorder allocates a recorder; histograms are sized once here. Its
// outcomes are also added to live, which outlives phases.
func NewRecorder(live *Live) *Recorder {
	return &Recorder{Latency: NewHistogram(), SetupLatency: NewHistogram(), live: live}
}

// EnableRate gives the recorder the rate test's histograms.
func (r *Recorder) EnableRate() {
	if r.SendLag == nil {
		r.SendLag, r.Service, r.ClientLag = NewHistogram(), NewHistogram(), NewHistogram()
	}
}

// Reset clears the recorder for a new phase.
func (r *Recorder) Reset() {
	lat, setup, live := r.Latency, r.SetupLatency, r.live
	lag, svc, cl := r.SendLag, r.Service, r.ClientLag
	lat.Reset()
	setup.Reset()
	for _, h := range []*hdrhistogram.Histogram{lag, svc, cl} {
		if h != nil {
			h.Reset()
		}
	}
	spans := r.tl.spans
	*r = Recorder{Latency: lat, SetupLatency: setup, SendLag: lag, Service: svc, ClientLag: cl, live: live}
	r.tl.spans = spans // reused by the next StartTimeline
}

// Wrote records a request completely written for the first time, lagNs
// after its admission (its scheduled instant in the rate test).
func (r *Recorder) Wrote(lagNs int64) {
	r.Written++
	r.live.Written.Add(1)
	if r.SendLag != nil {
		recordUs(r.SendLag, lagNs)
	}
}

// Served records the service time of a written request's response.
func (r *Recorder) Served(ns int64) {
	if r.Service != nil {
		recordUs(r.Service, ns)
	}
}

// Arrived records n scheduled arrivals taken up by the worker.
func (r *Recorder) Arrived(n uint64) {
	r.Scheduled += n
	r.live.Scheduled.Add(n)
}

// Late records how late one arrival was taken up.
func (r *Recorder) Late(ns int64) {
	if ns < 0 {
		ns = 0
	}
	r.LateNs += uint64(ns)
	if r.ClientLag != nil {
		recordUs(r.ClientLag, ns)
	}
}

// ResetKeepingSetups is Reset that keeps the setup counts and times: for
// setups made before a run's first phase, counted in it.
func (r *Recorder) ResetKeepingSetups() {
	setups, errMsg, setupLat := r.Setups, r.SetupError, r.SetupLatency
	r.SetupLatency = NewHistogram() // Reset clears this one; the kept one returns below
	r.Reset()
	r.Setups, r.SetupError, r.SetupLatency = setups, errMsg, setupLat
}

// Success records a successful request.
func (r *Recorder) Success() {
	r.Succeeded++
	r.live.Succeeded.Add(1)
	if r.tl.cur != nil {
		r.tl.cur.ok++
	}
}

// Response records the latency of a complete response (successful or not).
func (r *Recorder) Response(latencyNs int64) {
	if latencyNs < 0 {
		latencyNs = 0
	}
	r.LatencySumNs += uint64(latencyNs)
	r.LatencyCount++
	recordUs(r.Latency, latencyNs)
	b := CoarseIndex(latencyNs / 1000)
	r.live.Latency[b].Add(1)
	if r.tl.cur != nil {
		r.tl.cur.lat[b]++
	}
}

// Status records a complete response's status code: in the phase's
// counts and in the current span's status class.
func (r *Recorder) Status(code int) {
	r.Statuses.Add(code)
	if r.tl.cur != nil {
		r.tl.cur.status[StatusClass(code)]++
	}
}

// recordUs records a duration in µs, clamped to the histogram's range.
func recordUs(h *hdrhistogram.Histogram, ns int64) {
	us := ns / 1000
	if us < histLowest {
		us = histLowest
	}
	if us > histHighest {
		us = histHighest
	}
	h.RecordValue(us)
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

// Map returns the non-zero counts keyed by status code ("other" for codes
// outside 100..599).
func (c *StatusCounts) Map() map[string]uint64 {
	m := map[string]uint64{}
	for i, v := range c {
		if v == 0 {
			continue
		}
		if i == 0 {
			m["other"] = v
		} else {
			m[strconv.Itoa(i)] = v
		}
	}
	return m
}

// MarshalJSON writes the non-zero counts as an object.
func (c *StatusCounts) MarshalJSON() ([]byte, error) { return json.Marshal(c.Map()) }

// UnmarshalJSON reads what MarshalJSON wrote.
func (c *StatusCounts) UnmarshalJSON(b []byte) error {
	var m map[string]uint64
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*c = StatusCounts{}
	for k, v := range m {
		code, err := strconv.Atoi(k)
		if err != nil || code < 100 || code >= len(c) {
			code = 0
		}
		c[code] += v
	}
	return nil
}

// MaxBodySamples is how many failed bodies a phase keeps.
const MaxBodySamples = 3

// BodySample keeps the first bytes of a failed body, for the first few of
// a phase (no allocation after those).
func (r *Recorder) BodySample(b []byte) {
	if len(r.BodySamples) < MaxBodySamples {
		r.BodySamples = append(r.BodySamples, string(b))
	}
}

// Fail records n failed requests of category c.
func (r *Recorder) Fail(c Category, n uint64) {
	if n == 0 {
		return
	}
	r.Failed[c] += n
	r.live.Failed[c].Add(n)
	if r.tl.cur != nil {
		r.tl.cur.failed += n
	}
}

// SetupStarted records a setup attempt as it starts (TCP connect): a
// setup belongs to the phase it started in, whenever it ends.
func (r *Recorder) SetupStarted() { r.Setups.Attempted++ }

// SetupAbandoned records a setup the client gave up on (an interrupt).
func (r *Recorder) SetupAbandoned() { r.Setups.Abandoned++ }

// SetupRejected takes back a setup recorded as established, for SetupDone
// to record it again as failed: the server refused the connection right
// after the client's side of the handshake ended (a TLS 1.3 alert on the
// first read). Its setup time was not recorded (SetupDone with a negative
// latency).
func (r *Recorder) SetupRejected() {
	r.Setups.Established--
	r.live.Established.Add(^uint64(0))
}

// SetupTime records an established setup's duration, when SetupDone did
// not.
func (r *Recorder) SetupTime(latencyNs int64) { recordUs(r.SetupLatency, latencyNs) }

// SetupDone records how a started setup ended. An established setup's
// duration is recorded too, unless latencyNs is negative (SetupTime
// records it once the connection has proved itself).
func (r *Recorder) SetupDone(ok bool, timedOut bool, latencyNs int64) {
	switch {
	case ok:
		r.Setups.Established++
		r.live.Established.Add(1)
		if latencyNs >= 0 {
			recordUs(r.SetupLatency, latencyNs)
		}
	case timedOut:
		r.Setups.TimedOut++
		r.live.SetupFailed.Add(1)
	default:
		r.Setups.Failed++
		r.live.SetupFailed.Add(1)
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
	Counts               Counts                  `json:"counts"`
	Latency              *hdrhistogram.Histogram `json:"-"`
	LatencySumNs         uint64                  `json:"latency_sum_ns"`
	LatencyCount         uint64                  `json:"latency_count"`
	SetupLatency         *hdrhistogram.Histogram `json:"-"`
	Setups               Setups                  `json:"setups"`
	OutstandingNs        uint64                  `json:"outstanding_ns"`
	ActiveNs             uint64                  `json:"active_ns"` // summed over workers
	Workers              int                     `json:"workers"`
	AtTargetNs           uint64                  `json:"at_target_ns"`
	ReachedOnce          uint64                  `json:"reached_once"`
	BlockedWrites        uint64                  `json:"blocked_writes"`
	MaxSendDelay         int64                   `json:"max_send_delay_ns"`
	MaxLateness          int64                   `json:"max_lateness_ns"`
	ProtocolReason       string                  `json:"protocol_reason,omitempty"`
	SetupError           string                  `json:"setup_error,omitempty"`
	ClientError          string                  `json:"client_error,omitempty"`
	ProtocolUnattributed uint64                  `json:"protocol_unattributed"`
	TimeoutFollowers     uint64                  `json:"timeout_followers,omitempty"`
	Heard                uint64                  `json:"heard,omitempty"`
	Statuses             StatusCounts            `json:"statuses"`
	BodySamples          []string                `json:"body_samples,omitempty"`
	TLS                  TLSInfo                 `json:"tls"`
	ResetsSent           uint64                  `json:"resets_sent,omitempty"`
	GoAwaysReceived      uint64                  `json:"goaways_received,omitempty"`
	Replayed             uint64                  `json:"replayed,omitempty"`
	PeerMaxStreams       int64                   `json:"peer_max_streams,omitempty"`
	PeerMaxKnown         bool                    `json:"peer_max_known,omitempty"`
	StreamLimit          StreamLimit             `json:"stream_limit,omitzero"`
	Written              uint64                  `json:"written"`
	Scheduled            uint64                  `json:"scheduled"`
	ExpiredUnsent        uint64                  `json:"expired_unsent"`
	LateNs               uint64                  `json:"late_ns"`
	// The rate test's histograms; nil in the other tests.
	SendLag   *hdrhistogram.Histogram `json:"-"`
	Service   *hdrhistogram.Histogram `json:"-"`
	ClientLag *hdrhistogram.Histogram `json:"-"`
	// Timeline is the phase's outcomes span by span (nil when no worker
	// kept one).
	Timeline *Timeline `json:"timeline,omitempty"`
}

// StreamLimit is what a phase knows of connections whose peer stream
// limit (HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS) was below their target:
// the worst connection's time under it and its time in the phase, and
// the lowest such limit on any connection (when Known).
type StreamLimit struct {
	BelowNs int64 `json:"below_ns"`
	LivedNs int64 `json:"lived_ns"`
	Lowest  int64 `json:"lowest"`
	Known   bool  `json:"known"`
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

func (l *StreamLimit) add(q *StreamLimit) {
	l.Conn(q.BelowNs, q.LivedNs, q.Lowest)
	if q.Known && (!l.Known || q.Lowest < l.Lowest) {
		l.Lowest, l.Known = q.Lowest, true
	}
}

// peerMax keeps the lowest known peer stream limit.
func (p *Phase) peerMax(v int64, known bool) {
	if known && (!p.PeerMaxKnown || v < p.PeerMaxStreams) {
		p.PeerMaxStreams, p.PeerMaxKnown = v, true
	}
}

// TLSInfo is what a TLS handshake negotiated (zero for plain TCP).
type TLSInfo struct {
	Version     uint16 `json:"version"`
	CipherSuite uint16 `json:"cipher_suite"`
	Group       uint16 `json:"group"`
	Resumed     bool   `json:"resumed"`
}

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
	p.Heard += q.Heard
	p.Statuses.Merge(&q.Statuses)
	p.addSamples(q.BodySamples)
	p.ResetsSent += q.ResetsSent
	p.GoAwaysReceived += q.GoAwaysReceived
	p.Replayed += q.Replayed
	p.peerMax(q.PeerMaxStreams, q.PeerMaxKnown)
	p.StreamLimit.add(&q.StreamLimit)
	p.addRate(q.Written, q.Scheduled, q.ExpiredUnsent, q.LateNs, q.SendLag, q.Service, q.ClientLag)
	p.firsts(q.TLS, q.ProtocolReason, q.SetupError, q.ClientError)
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

// phaseJSON is Phase's wire form: the histograms encoded.
type phaseJSON struct {
	*phaseFields
	LatencyHdr      string `json:"latency_hdr"`
	SetupLatencyHdr string `json:"setup_latency_hdr"`
	SendLagHdr      string `json:"send_lag_hdr,omitempty"`
	ServiceHdr      string `json:"service_hdr,omitempty"`
	ClientLagHdr    string `json:"client_lag_hdr,omitempty"`
}

type phaseFields Phase

// MarshalJSON encodes p with its histograms.
func (p *Phase) MarshalJSON() ([]byte, error) {
	lat, err := EncodeHistogram(p.Latency)
	if err != nil {
		return nil, err
	}
	setup, err := EncodeHistogram(p.SetupLatency)
	if err != nil {
		return nil, err
	}
	v := phaseJSON{phaseFields: (*phaseFields)(p), LatencyHdr: lat, SetupLatencyHdr: setup}
	if p.SendLag != nil {
		for _, e := range []struct {
			h   *hdrhistogram.Histogram
			out *string
		}{{p.SendLag, &v.SendLagHdr}, {p.Service, &v.ServiceHdr}, {p.ClientLag, &v.ClientLagHdr}} {
			if *e.out, err = EncodeHistogram(e.h); err != nil {
				return nil, err
			}
		}
	}
	return json.Marshal(v)
}

// UnmarshalJSON decodes a phase encoded by MarshalJSON.
func (p *Phase) UnmarshalJSON(b []byte) error {
	var v phaseJSON
	v.phaseFields = (*phaseFields)(p)
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	var err error
	if p.Latency, err = DecodeHistogram(v.LatencyHdr); err != nil {
		return err
	}
	if p.SetupLatency, err = DecodeHistogram(v.SetupLatencyHdr); err != nil {
		return err
	}
	p.SendLag, p.Service, p.ClientLag = nil, nil, nil
	if v.SendLagHdr == "" {
		return nil
	}
	if p.SendLag, err = DecodeHistogram(v.SendLagHdr); err != nil {
		return err
	}
	if p.Service, err = DecodeHistogram(v.ServiceHdr); err != nil {
		return err
	}
	p.ClientLag, err = DecodeHistogram(v.ClientLagHdr)
	return err
}

// EncodeHistogram returns h in HdrHistogram's base64 V2 compressed
// encoding.
func EncodeHistogram(h *hdrhistogram.Histogram) (string, error) {
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	return string(b), err
}

// DecodeHistogram decodes EncodeHistogram's text; "" is an empty
// histogram.
func DecodeHistogram(s string) (*hdrhistogram.Histogram, error) {
	if s == "" {
		return NewHistogram(), nil
	}
	h, err := hdrhistogram.Decode([]byte(s))
	if err != nil {
		return nil, err
	}
	// Merge into the standard range so that decoded phases merge alike.
	out := NewHistogram()
	out.Merge(h)
	return out, nil
}

// Merge adds one worker's recorder.
func (p *Phase) Merge(r *Recorder) {
	p.Counts.Succeeded += r.Succeeded
	for i, v := range r.Failed {
		p.Counts.Failed[i] += v
	}
	p.Counts.Attempted = p.Counts.Succeeded + p.Counts.FailedTotal()
	p.Latency.Merge(r.Latency)
	p.LatencySumNs += r.LatencySumNs
	p.LatencyCount += r.LatencyCount
	p.SetupLatency.Merge(r.SetupLatency)
	p.Setups.add(&r.Setups)
	p.OutstandingNs += r.OutstandingNs
	p.ActiveNs += r.ActiveNs
	p.Workers++
	p.AtTargetNs += r.AtTargetNs
	p.ReachedOnce += r.ReachedOnce
	p.BlockedWrites += r.BlockedWrites
	if r.MaxSendDelayNs > p.MaxSendDelay {
		p.MaxSendDelay = r.MaxSendDelayNs
	}
	if r.MaxLatenessNs > p.MaxLateness {
		p.MaxLateness = r.MaxLatenessNs
	}
	p.ProtocolUnattributed += r.ProtocolUnattributed
	p.TimeoutFollowers += r.TimeoutFollowers
	p.Heard += r.Heard
	p.Statuses.Merge(&r.Statuses)
	p.addSamples(r.BodySamples)
	p.ResetsSent += r.ResetsSent
	p.GoAwaysReceived += r.GoAwaysReceived
	p.Replayed += r.Replayed
	p.peerMax(r.PeerMaxStreams, r.PeerMaxKnown)
	p.StreamLimit.add(&r.StreamLimit)
	p.addRate(r.Written, r.Scheduled, r.ExpiredUnsent, r.LateNs, r.SendLag, r.Service, r.ClientLag)
	p.firsts(r.TLS, r.ProtocolReason, r.SetupError, r.ClientError)
	if r.tl.cur != nil {
		if p.Timeline == nil {
			p.Timeline = &Timeline{}
		}
		p.Timeline.merge(&r.tl)
	}
}

// DistributionTicks is how many percentiles a Distribution has per half
// distance to 100 %: 0, 5, …, 50, then 52.5, …, 75, then 76.25, … (as
// HdrHistogram's percentile output counts its ticks).
const DistributionTicks = 10

// DistributionTop is the highest percentile of a Distribution.
const DistributionTop = 99.999

// DistPoint is one point of a latency distribution: the value (µs) at a
// percentile and the count of values at or below it (through the bucket
// that holds it).
type DistPoint struct {
	Percentile float64
	ValueUs    int64
	Count      int64
}

// DistributionPercentiles are a Distribution's percentiles, ascending:
// DistributionTicks per half distance from 0 to DistributionTop, which
// ends it (169 of them).
func DistributionPercentiles() []float64 {
	var out []float64
	for half := 0; ; half++ {
		lo := 100 * (1 - math.Pow(2, -float64(half)))
		hi := 100 * (1 - math.Pow(2, -float64(half+1)))
		step := (hi - lo) / DistributionTicks
		if half == 0 {
			out = append(out, 0)
		}
		for i := 1; i <= DistributionTicks; i++ {
			p := lo + step*float64(i)
			if p >= DistributionTop {
				return append(out, DistributionTop)
			}
			out = append(out, p)
		}
	}
}

// Distribution is h's percentile distribution (nil when h is empty): the
// value at each of DistributionPercentiles, as h.ValueAtPercentile reads
// it, and the count of values through its bucket.
func Distribution(h *hdrhistogram.Histogram) []DistPoint {
	if h == nil || h.TotalCount() == 0 {
		return nil
	}
	bars := h.Distribution()
	ps := DistributionPercentiles()
	out := make([]DistPoint, len(ps))
	var seen int64
	b := 0
	for i, p := range ps {
		v := h.ValueAtPercentile(p)
		for b < len(bars) && bars[b].From <= v {
			seen += bars[b].Count
			b++
		}
		out[i] = DistPoint{Percentile: p, ValueUs: v, Count: seen}
	}
	return out
}
