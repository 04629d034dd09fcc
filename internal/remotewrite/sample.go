package remotewrite

import (
	"maps"
	"math"
	"slices"
	"sort"
	"time"
)

// Sample is one moment of a run, as the pusher sends it. Counters and
// histograms are cumulative since the run's start. Push copies it, so the
// caller may reuse its maps and slices afterwards.
type Sample struct {
	Time time.Time // the sample's timestamp (ms resolution on the wire)

	// Labels on every series; an empty value leaves the label out.
	RunID    string // shared by every shard of a run
	Test     string
	Protocol string // the report's name of it: "http/1.1" or "h2" (brk.Protocol.Name)
	Origin   string // scheme://host:port of the target (the first one in a mix)
	Shard    string // "" for an unsharded run

	Level float64 // the current level (connections, rate, …): brk_level
	Phase int     // the current phase's index, from 0: brk_phase_index
	Role  string  // the current phase's role, e.g. "ramp", "bisect": brk_phase_role

	// PhaseVerdict, when set, ends the phase: brk_phase_verdict{verdict} 1.
	PhaseVerdict string
	// RunVerdict, when set, ends the run: brk_run_verdict{verdict} 1.
	RunVerdict string

	// Outcomes are the run's totals. They are sent when Targets is empty.
	Outcomes
	// Targets, with a request mix, holds each target's outcomes: the
	// outcome series are then sent once per target with a target label,
	// and Outcomes is not sent, so that a sum over a series never counts
	// a response twice.
	Targets []TargetOutcomes
}

// TargetOutcomes are one target's outcomes in a request mix.
type TargetOutcomes struct {
	Target string // the target label's value
	Outcomes
}

// Outcomes are the cumulative counters and latency histogram of a run or of
// one of its targets.
type Outcomes struct {
	Successes uint64            // brk_successes_total
	Failures  map[string]uint64 // by category: brk_failures_total{category}
	Responses map[int]uint64    // by status code: brk_responses_total{code}
	Latency   Histogram         // classic: brk_latency_seconds_{bucket,sum,count}
	Native    NativeHistogram   // with Config.Native: brk_latency_seconds
}

// Histogram is a classic histogram over Config.Edges. Counts has one
// entry per edge and one more for the observations above the last edge:
// Counts[i] holds the observations in (Edges[i-1], Edges[i]]. The pusher
// accumulates them into Prometheus's cumulative le buckets. Sum is in
// seconds. An empty Counts sends an empty histogram.
type Histogram struct {
	Counts []uint64
	Sum    float64
}

// Observe adds n observations of seconds to h, whose counts are over edges.
func (h *Histogram) Observe(edges []float64, seconds float64, n uint64) {
	if len(h.Counts) != len(edges)+1 {
		h.Counts = make([]uint64, len(edges)+1)
	}
	i := sort.SearchFloat64s(edges, seconds) // first edge >= seconds
	h.Counts[i] += n
	h.Sum += seconds * float64(n)
}

// Count returns the number of observations.
func (h Histogram) Count() uint64 {
	var n uint64
	for _, c := range h.Counts {
		n += c
	}
	return n
}

// NativeSchema is the schema Observe uses when NativeHistogram.Schema is
// unset: 2^(2^-3), about 9 % between bucket edges.
const NativeSchema = 3

// NativeHistogram is a Prometheus native (exponential) histogram of
// non-negative observations. Bucket i covers (b^(i-1), b^i] where
// b = 2^(2^-Schema); observations at most ZeroThreshold are counted in
// ZeroCount.
type NativeHistogram struct {
	Schema        int32 // -4 … 8
	ZeroThreshold float64
	ZeroCount     uint64
	Buckets       map[int32]uint64 // bucket index → observations
	Sum           float64          // seconds
}

// Observe adds n observations of seconds to h. A histogram with no
// buckets yet and Schema 0 takes NativeSchema. A NaN or infinite value is
// ignored.
func (h *NativeHistogram) Observe(seconds float64, n uint64) {
	if math.IsNaN(seconds) || math.IsInf(seconds, 0) {
		return
	}
	if h.Buckets == nil {
		h.Buckets = map[int32]uint64{}
		if h.Schema == 0 {
			h.Schema = NativeSchema
		}
	}
	h.Sum += seconds * float64(n)
	if seconds <= h.ZeroThreshold {
		h.ZeroCount += n
		return
	}
	h.Buckets[nativeIndex(h.Schema, seconds)] += n
}

// nativeIndex returns the index i of the bucket (b^(i-1), b^i] that holds
// v > 0, with b = 2^(2^-schema).
func nativeIndex(schema int32, v float64) int32 {
	scale := math.Ldexp(1, int(schema)) // 2^schema
	i := int32(math.Ceil(math.Log2(v) * scale))
	// Log2 rounds; put v on the right side of the edges it is near.
	upper := func(i int32) float64 { return math.Exp2(float64(i) / scale) }
	for v > upper(i) {
		i++
	}
	for i > math.MinInt32 && v <= upper(i-1) {
		i--
	}
	return i
}

// Count returns the number of observations.
func (h NativeHistogram) Count() uint64 {
	n := h.ZeroCount
	for _, c := range h.Buckets {
		n += c
	}
	return n
}

func (o Outcomes) clone() Outcomes {
	o.Failures = maps.Clone(o.Failures)
	o.Responses = maps.Clone(o.Responses)
	o.Latency.Counts = slices.Clone(o.Latency.Counts)
	o.Native.Buckets = maps.Clone(o.Native.Buckets)
	return o
}

func (s Sample) clone() Sample {
	s.Outcomes = s.Outcomes.clone()
	s.Targets = slices.Clone(s.Targets)
	for i := range s.Targets {
		s.Targets[i].Outcomes = s.Targets[i].Outcomes.clone()
	}
	return s
}
