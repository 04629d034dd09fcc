package metrics

import "math/bits"

// A phase's outcomes over time: each worker counts successes, failures,
// responses slower than the SLA's latency limits, the setups that ended
// (and those that failed) and a coarse latency histogram per span of the
// phase (100 ms, or wider in a long phase so that a phase never has more
// than TimelineSpans spans); the merge adds the workers' spans and reads
// each span's p99. The search reads its evidence
// (stalls, the interval's windows) from these spans.

// TimelineSpans bounds the spans of a phase, whatever its length.
const TimelineSpans = 128

// TimelineUnit is the narrowest span: a phase's windows are 100 ms, or a
// whole multiple of it in a long phase.
const TimelineUnit = int64(100e6)

// timelineWidth is the span width for a phase whose outcomes may come
// within windowNs plus timeoutNs (the drain) of its start: 100 ms, or the
// least whole multiple of it that fits the phase and one more unit in
// TimelineSpans−1 spans (the last span takes what comes later).
func timelineWidth(windowNs, timeoutNs int64) int64 {
	const unit = TimelineUnit
	span := windowNs + timeoutNs + unit
	w := (span + (TimelineSpans-1)*unit - 1) / ((TimelineSpans - 1) * unit)
	return max(w, 1) * unit
}

// CoarseBuckets is the size of a Coarse histogram: 1 µs buckets below
// 8 µs, then 8 buckets per power of two up to 2^31 µs (about 36 minutes;
// longer latencies land in the last bucket).
const CoarseBuckets = 8 + 28*8

// Coarse is a small latency histogram in µs whose bucket edges are at most
// 12.5 % apart: enough to read a p99 per second in 1 KB.
type Coarse [CoarseBuckets]uint32

// CoarseIndex is the bucket of a latency of us microseconds.
func CoarseIndex(us int64) int {
	if us < 8 {
		return int(max(us, 0))
	}
	shift := bits.Len64(uint64(us)) - 4 // us>>shift is in [8, 16)
	return min(8+shift*8+int(us>>shift)-8, CoarseBuckets-1)
}

// CoarseUpper is the highest latency (µs) that falls in bucket i.
func CoarseUpper(i int) int64 {
	if i < 8 {
		return int64(i)
	}
	shift := (i - 8) / 8
	m := int64((i-8)%8 + 8)
	return (m+1)<<shift - 1
}

// coarseQuantile returns the upper edge of the bucket holding quantile q
// of the counts read by at (0 when there are none).
func coarseQuantile(q float64, at func(i int) uint64) int64 {
	var total uint64
	for i := range CoarseBuckets {
		total += at(i)
	}
	if total == 0 {
		return 0
	}
	rank := uint64(q*float64(total) + 0.999999999) // ceil, without float noise on exact products
	rank = min(max(rank, 1), total)
	var seen uint64
	for i := range CoarseBuckets {
		if seen += at(i); seen >= rank {
			return CoarseUpper(i)
		}
	}
	return CoarseUpper(CoarseBuckets - 1)
}

// StatusClasses is the number of status classes a span counts: index 0
// for a code outside 100..599, 1..5 for 1xx..5xx.
const StatusClasses = 6

// StatusClass is the class index of a status code: 1..5 for 1xx..5xx, 0
// for anything else.
func StatusClass(code int) int {
	if code < 100 || code > 599 {
		return 0
	}
	return code / 100
}

// recSpan is one worker's span.
type recSpan struct {
	ok, failed uint64
	slow       [2]uint64 // complete responses slower than the p99 and p99.9 limits
	setups     [2]uint64 // setups that ended established, and failed or timed out
	lat        Coarse
	status     [StatusClasses]uint32 // complete responses by StatusClass
}

// recTimeline is one worker's timeline of the current phase. cur is the
// span that outcomes count in (nil between phases).
type recTimeline struct {
	startNs, widthNs int64
	spans            []recSpan
	cur              *recSpan
}

// StartTimeline starts the phase's timeline at startNs (the engine's
// clock, shared by every worker) for an admission window of windowNs and
// a request timeout of timeoutNs. Its spans are allocated once and reused.
func (r *Recorder) StartTimeline(startNs, windowNs, timeoutNs int64) {
	t := &r.tl
	t.startNs, t.widthNs = startNs, timelineWidth(windowNs, timeoutNs)
	if t.spans == nil {
		t.spans = make([]recSpan, TimelineSpans)
	}
	clear(t.spans)
	t.cur = &t.spans[0]
	r.sc.start(startNs)
}

// Tick points the timeline at the span of instant nowNs: the worker calls
// it once per loop iteration, and every outcome recorded until the next
// call counts in that span.
func (r *Recorder) Tick(nowNs int64) {
	t := &r.tl
	if t.cur == nil {
		return
	}
	i := (nowNs - t.startNs) / t.widthNs
	t.cur = &t.spans[min(max(i, 0), int64(len(t.spans)-1))]
}

// Timeline is a phase's merged spans: counts per span and, while the
// workers' histograms are at hand (in the process that measured it), the
// coarse latency histogram of each span. Spans after the last one with an
// outcome are dropped.
type Timeline struct {
	StartNs int64  `json:"start_ns"` // the phase's start on the engine's clock
	WidthNs int64  `json:"width_ns"`
	Spans   []Span `json:"spans"`
	lat     []coarse64
}

// Span is one span of a Timeline.
type Span struct {
	Succeeded uint64 `json:"succeeded"`
	Failed    uint64 `json:"failed"`
	// P99Us is the upper edge of the coarse bucket holding the span's
	// 99th percentile latency (0: no complete response).
	P99Us int64 `json:"p99_us"`
	// Statuses counts the span's complete responses by StatusClass,
	// whatever their outcome.
	Statuses [StatusClasses]uint64 `json:"statuses,omitzero"`
	// SlowP99 and SlowP999 count the span's complete responses slower than
	// the SLA's --max-p99 and --max-p999 (Recorder.SetLatencyLimits; 0
	// without the limit).
	SlowP99  uint64 `json:"slow_p99,omitempty"`
	SlowP999 uint64 `json:"slow_p999,omitempty"`
	// Setups and SetupsFailed count the setups that ended in the span:
	// all of them (established, failed or timed out), and those that
	// failed or timed out.
	Setups       uint64 `json:"setups,omitempty"`
	SetupsFailed uint64 `json:"setups_failed,omitempty"`
}

type coarse64 [CoarseBuckets]uint64

// merge adds one worker's timeline.
func (t *Timeline) merge(r *recTimeline) {
	if r.cur == nil {
		return
	}
	if len(t.lat) == 0 {
		t.StartNs, t.WidthNs = r.startNs, r.widthNs
		t.Spans = make([]Span, len(r.spans))
		t.lat = make([]coarse64, len(r.spans))
	}
	for i := range r.spans {
		s := &r.spans[i]
		t.Spans[i].Succeeded += s.ok
		t.Spans[i].Failed += s.failed
		t.Spans[i].SlowP99 += s.slow[0]
		t.Spans[i].SlowP999 += s.slow[1]
		t.Spans[i].Setups += s.setups[0] + s.setups[1]
		t.Spans[i].SetupsFailed += s.setups[1]
		for c, n := range s.status {
			t.Spans[i].Statuses[c] += uint64(n)
		}
		for b, n := range s.lat {
			t.lat[i][b] += uint64(n)
		}
	}
	for i := range t.Spans {
		h := &t.lat[i]
		t.Spans[i].P99Us = coarseQuantile(0.99, func(b int) uint64 { return h[b] })
	}
}

// add adds q, the same phase's timeline measured on another load box,
// span by span (the boxes start their phases together): exactly while
// both histograms are at hand, otherwise (from JSON) a span's p99 is the
// higher of the two.
func (t *Timeline) add(q *Timeline) {
	exact := len(q.lat) == len(q.Spans)
	if len(t.Spans) == 0 {
		t.StartNs, t.WidthNs = q.StartNs, q.WidthNs
		t.Spans = append([]Span(nil), q.Spans...)
		t.lat = nil
		if exact {
			t.lat = append([]coarse64(nil), q.lat...)
		}
		return
	}
	if n := len(q.Spans); n > len(t.Spans) {
		t.Spans = append(t.Spans, make([]Span, n-len(t.Spans))...)
		if t.lat != nil {
			t.lat = append(t.lat, make([]coarse64, n-len(t.lat))...)
		}
	}
	exact = exact && t.lat != nil
	if !exact {
		t.lat = nil
	}
	for i, s := range q.Spans {
		t.Spans[i].Succeeded += s.Succeeded
		t.Spans[i].Failed += s.Failed
		t.Spans[i].SlowP99 += s.SlowP99
		t.Spans[i].SlowP999 += s.SlowP999
		t.Spans[i].Setups += s.Setups
		t.Spans[i].SetupsFailed += s.SetupsFailed
		for c, n := range s.Statuses {
			t.Spans[i].Statuses[c] += n
		}
		if !exact {
			t.Spans[i].P99Us = max(t.Spans[i].P99Us, s.P99Us)
			continue
		}
		for b, n := range q.lat[i] {
			t.lat[i][b] += n
		}
		h := &t.lat[i]
		t.Spans[i].P99Us = coarseQuantile(0.99, func(b int) uint64 { return h[b] })
	}
}

// Trimmed returns the spans up to the last one with an outcome.
func (t *Timeline) Trimmed() []Span {
	n := len(t.Spans)
	for n > 0 && t.Spans[n-1].Succeeded == 0 && t.Spans[n-1].Failed == 0 {
		n--
	}
	return t.Spans[:n]
}

// LiveP99Us reads the p99 (µs, a coarse bucket's upper edge) of the
// responses counted between two readings of the live latency counters.
func LiveP99Us(now, base *[CoarseBuckets]uint64) int64 {
	return coarseQuantile(0.99, func(i int) uint64 { return now[i] - base[i] })
}
