package remotewrite

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	prompb "buf.build/gen/go/prometheus/prometheus/protocolbuffers/go"
)

// label is one name=value pair.
type label struct{ name, value string }

// encoder turns samples into remote-write 1.0 requests. It lives on the
// pusher's goroutine and remembers what earlier batches sent: the roles
// seen (a role no longer current is sent as 0) and the last timestamp
// (Prometheus refuses a second sample with the same timestamp, so samples
// are kept strictly increasing).
type encoder struct {
	cfg    Config
	roles  map[string]bool
	lastMS int64

	series map[string]*prompb.TimeSeries
	order  []string
}

func newEncoder(cfg Config) *encoder {
	return &encoder{cfg: cfg, roles: map[string]bool{}}
}

// request encodes batch, and dropped as brk_push_dropped_total at the last
// sample's time.
func (e *encoder) request(batch []Sample, dropped uint64) *prompb.WriteRequest {
	e.series = map[string]*prompb.TimeSeries{}
	e.order = e.order[:0]
	var base []label
	var ms int64
	for _, s := range batch {
		ms = s.Time.UnixMilli()
		if ms <= e.lastMS {
			ms = e.lastMS + 1
		}
		e.lastMS = ms
		base = e.base(s)
		e.sample(base, s, ms)
	}
	if len(batch) > 0 {
		e.add(SeriesPushDropped, base, nil, ms, float64(dropped))
	}
	ts := make([]*prompb.TimeSeries, 0, len(e.order))
	for _, k := range e.order {
		ts = append(ts, e.series[k])
	}
	return prompb.WriteRequest_builder{Timeseries: ts}.Build()
}

// base returns the labels every series of s carries.
func (e *encoder) base(s Sample) []label {
	var ls []label
	for _, k := range slices.Sorted(maps.Keys(e.cfg.Labels)) {
		ls = append(ls, label{k, e.cfg.Labels[k]})
	}
	for _, l := range []label{
		{LabelRunID, s.RunID}, {LabelTest, s.Test}, {LabelProtocol, s.Protocol},
		{LabelOrigin, s.Origin}, {LabelShard, s.Shard},
	} {
		if l.value != "" {
			ls = append(ls, l)
		}
	}
	return ls
}

func (e *encoder) sample(base []label, s Sample, ms int64) {
	e.add(SeriesLevel, base, nil, ms, s.Level)
	e.add(SeriesPhaseIndex, base, nil, ms, float64(s.Phase))
	if s.Role != "" {
		e.roles[s.Role] = true
	}
	for _, r := range slices.Sorted(maps.Keys(e.roles)) {
		v := 0.0
		if r == s.Role {
			v = 1
		}
		e.add(SeriesPhaseRole, base, []label{{LabelRole, r}}, ms, v)
	}
	if s.PhaseVerdict != "" {
		e.add(SeriesPhaseVerdict, base, []label{{LabelVerdict, s.PhaseVerdict}}, ms, 1)
	}
	if s.RunVerdict != "" {
		e.add(SeriesRunVerdict, base, []label{{LabelVerdict, s.RunVerdict}}, ms, 1)
	}
	if len(s.Targets) == 0 {
		e.outcomes(base, nil, s.Outcomes, ms)
		return
	}
	for _, t := range s.Targets {
		e.outcomes(base, []label{{LabelTarget, t.Target}}, t.Outcomes, ms)
	}
}

func (e *encoder) outcomes(base, extra []label, o Outcomes, ms int64) {
	e.add(SeriesSuccesses, base, extra, ms, float64(o.Successes))
	for _, c := range slices.Sorted(maps.Keys(o.Failures)) {
		e.add(SeriesFailures, base, append(slices.Clip(extra), label{LabelCategory, c}), ms, float64(o.Failures[c]))
	}
	for _, c := range slices.Sorted(maps.Keys(o.Responses)) {
		e.add(SeriesResponses, base, append(slices.Clip(extra), label{LabelCode, strconv.Itoa(c)}), ms, float64(o.Responses[c]))
	}
	if e.cfg.Native {
		e.native(base, extra, o.Native, ms)
		return
	}
	var cum uint64
	for i, edge := range e.cfg.Edges {
		if i < len(o.Latency.Counts) {
			cum += o.Latency.Counts[i]
		}
		le := strconv.FormatFloat(edge, 'g', -1, 64)
		e.add(SeriesLatencyBucket, base, append(slices.Clip(extra), label{LabelLe, le}), ms, float64(cum))
	}
	count := o.Latency.Count()
	e.add(SeriesLatencyBucket, base, append(slices.Clip(extra), label{LabelLe, "+Inf"}), ms, float64(count))
	e.add(SeriesLatencySum, base, extra, ms, o.Latency.Sum)
	e.add(SeriesLatencyCount, base, extra, ms, float64(count))
}

// native adds h as one native histogram sample: its buckets in index order,
// a span per run of consecutive indices, counts as deltas (the integer
// histogram encoding).
func (e *encoder) native(base, extra []label, h NativeHistogram, ms int64) {
	schema := h.Schema
	if schema == 0 && len(h.Buckets) == 0 {
		schema = NativeSchema
	}
	var spans []*prompb.BucketSpan
	var deltas []int64
	var prevIdx int32
	var prevCount int64
	for n, idx := range slices.Sorted(maps.Keys(h.Buckets)) {
		c := int64(h.Buckets[idx])
		switch {
		case n == 0:
			spans = append(spans, prompb.BucketSpan_builder{Offset: idx, Length: 1}.Build())
		case idx == prevIdx+1:
			sp := spans[len(spans)-1]
			sp.SetLength(sp.GetLength() + 1)
		default:
			spans = append(spans, prompb.BucketSpan_builder{Offset: idx - prevIdx - 1, Length: 1}.Build())
		}
		deltas = append(deltas, c-prevCount)
		prevIdx, prevCount = idx, c
	}
	count, zero := h.Count(), h.ZeroCount
	hist := prompb.Histogram_builder{
		CountInt:       &count,
		Sum:            h.Sum,
		Schema:         schema,
		ZeroThreshold:  h.ZeroThreshold,
		ZeroCountInt:   &zero,
		PositiveSpans:  spans,
		PositiveDeltas: deltas,
		Timestamp:      ms,
	}.Build()
	t := e.get(SeriesLatency, base, extra)
	t.SetHistograms(append(t.GetHistograms(), hist))
}

// add appends a float sample to the series name{base, extra}.
func (e *encoder) add(name string, base, extra []label, ms int64, v float64) {
	t := e.get(name, base, extra)
	t.SetSamples(append(t.GetSamples(), prompb.Sample_builder{Value: v, Timestamp: ms}.Build()))
}

// get returns the series name{base, extra}, creating it with its labels
// sorted by name, as the protocol requires.
func (e *encoder) get(name string, base, extra []label) *prompb.TimeSeries {
	ls := make([]label, 0, len(base)+len(extra)+1)
	ls = append(ls, label{"__name__", name})
	ls = append(ls, base...)
	ls = append(ls, extra...)
	slices.SortFunc(ls, func(a, b label) int { return strings.Compare(a.name, b.name) })
	var key strings.Builder
	for _, l := range ls {
		key.WriteString(l.name)
		key.WriteByte('=')
		key.WriteString(l.value)
		key.WriteByte(0xff)
	}
	k := key.String()
	if t, ok := e.series[k]; ok {
		return t
	}
	pl := make([]*prompb.Label, len(ls))
	for i, l := range ls {
		pl[i] = prompb.Label_builder{Name: l.name, Value: l.value}.Build()
	}
	t := prompb.TimeSeries_builder{Labels: pl}.Build()
	e.series[k] = t
	e.order = append(e.order, k)
	return t
}
