package metrics

import (
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Live holds the counters a progress reporter may read while a phase runs.
type Live struct {
	Succeeded   atomic.Uint64
	Failed      [NumCategories]atomic.Uint64
	Established atomic.Uint64
	SetupFailed atomic.Uint64
	// Dialed counts setups started (TCP connects), Heard connections
	// that read at least one byte from the server.
	Dialed atomic.Uint64
	Heard  atomic.Uint64
	// Status is the status code of every complete response so far (0:
	// none yet; StatusMixed: two codes differed, or one was outside
	// 100..599). It is never reset, as the counters are not: the run's
	// first phase reads its own.
	Status atomic.Uint32
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
	// BytesRead counts the bytes read from the server's connections
	// (after TLS: what the protocol parsed).
	BytesRead uint64

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
	// ConnectTimeoutFollowers counts the abandoned requests queued behind
	// a connect that timed out (the first counts as connect_timeout); they
	// are counted as Abandoned too.
	ConnectTimeoutFollowers uint64
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
	// IdleCloses counts connections the server ended while idle with a
	// response that announced the close (an idle timeout's 408 Request
	// Timeout, or one that crossed the request just written on the idle
	// connection): each was replaced, no request failed for it.
	IdleCloses uint64
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

	// Targets are a request mix's outcomes per target (EnableTargets;
	// nil without a mix), in mix order.
	Targets []TargetRec

	tl   recTimeline
	sc   reservoir
	live *Live
	// slowNs are the latency limits whose slower responses each span
	// counts (SetLatencyLimits; 0: none).
	slowNs [2]int64
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
	spans, targets, slow, sc := r.tl.spans, r.Targets, r.slowNs, r.sc
	resetTargets(targets)
	*r = Recorder{Latency: lat, SetupLatency: setup, SendLag: lag, Service: svc, ClientLag: cl, live: live, Targets: targets, slowNs: slow}
	r.tl.spans = spans                                   // reused by the next StartTimeline
	r.sc = reservoir{points: sc.points[:0], rng: sc.rng} // its buffer reused; nothing sampled until StartTimeline
}

// Sampled offers a complete response (recorded by Response) to the
// phase's latency scatter: it arrived at nowNs on the engine's clock.
func (r *Recorder) Sampled(nowNs, latencyNs int64) { r.sc.add(nowNs, latencyNs) }

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

// Answer is one complete response, as Answered books it.
type Answer struct {
	NowNs     int64 // when it arrived, on the engine's clock
	LatencyNs int64 // from its request's latency start
	ServedNs  int64 // from its request's complete writing: the service time
	Code      int   // its status code
	Target    int   // its request's target (booked apart only with EnableTargets)
	OK        bool  // it succeeded; else Failed says why not
	Failed    Category
}

// Answered books one complete response: its latency (the histogram, the
// scatter, the current span), its service time, its status code and its
// outcome, in the totals and, with targets, in its target's. It is the
// request path's one call into the recorder per response.
func (r *Recorder) Answered(a *Answer) {
	r.Response(a.LatencyNs)
	r.Sampled(a.NowNs, a.LatencyNs)
	r.Status(a.Code)
	r.Served(a.ServedNs)
	if a.OK {
		r.Success()
	} else {
		r.Fail(a.Failed, 1)
	}
	if a.Target >= len(r.Targets) {
		return
	}
	r.TargetResponse(a.Target, a.LatencyNs, a.Code)
	if a.OK {
		r.TargetSuccess(a.Target)
	} else {
		r.TargetFail(a.Target, a.Failed, 1)
	}
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
	if c := r.tl.cur; c != nil {
		c.lat[b]++
		if r.slowNs[0] > 0 && latencyNs > r.slowNs[0] {
			c.slow[0]++
		}
		if r.slowNs[1] > 0 && latencyNs > r.slowNs[1] {
			c.slow[1]++
		}
	}
}

// SetLatencyLimits makes every span count the complete responses slower
// than p99 and p999, the SLA's --max-p99 and --max-p999 (0: no limit).
// It lasts across phases.
func (r *Recorder) SetLatencyLimits(p99, p999 time.Duration) {
	r.slowNs = [2]int64{int64(p99), int64(p999)}
}

// StatusMixed is Live.Status once two complete responses had different
// codes (or one a code outside 100..599).
const StatusMixed = 1

// Status records a complete response's status code: in the phase's
// counts, in the current span's status class and in the live status.
func (r *Recorder) Status(code int) {
	r.Statuses.Add(code)
	if u := r.live.Status.Load(); u != uint32(code) && u != StatusMixed {
		switch {
		case u == 0 && code >= 100 && code < len(r.Statuses):
			r.live.Status.Store(uint32(code))
		default:
			r.live.Status.Store(StatusMixed)
		}
	}
	if r.tl.cur != nil {
		r.tl.cur.status[StatusClass(code)]++
	}
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
func (r *Recorder) SetupStarted() {
	r.Setups.Attempted++
	r.live.Dialed.Add(1)
}

// FirstByte records a connection's first byte read from the server.
func (r *Recorder) FirstByte() {
	r.Heard++
	r.live.Heard.Add(1)
}

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
	if c := r.tl.cur; c != nil && c.setups[0] > 0 {
		c.setups[0]-- // the timeline's count, where it can be taken back
	}
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
	if c := r.tl.cur; c != nil {
		if ok {
			c.setups[0]++
		} else {
			c.setups[1]++
		}
	}
}
