package metrics

import (
	"encoding/json"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// TargetRec is one target's outcomes in one worker's phase, in a request
// mix: its successes, failures by category, status codes and latency
// histogram. A Recorder holds one per target (Recorder.EnableTargets),
// allocated once per run, so that recording one costs no allocation.
//
// Memory: one TargetRec is TargetRecBytes: its counters and status codes
// (about 4.8 KiB, most of it the 600 status counters) and its histogram
// (the phase's range and precision, 1 µs..60 s at 3 digits: about 136
// KiB of int64 counts), about 141 KiB in all; TestTargetRecBytes measures
// it. A worker with MaxTargets (64) targets holds about 9 MiB of them, a
// run Threads times that, and the phase's merge one more set. That is the
// reason for the bound.
type TargetRec struct {
	Succeeded    uint64
	Failed       [NumCategories]uint64
	Statuses     StatusCounts
	LatencySumNs uint64
	LatencyCount uint64
	Latency      *hdrhistogram.Histogram // µs, complete responses
}

// TargetRecBytes is the memory of one TargetRec, histogram included, per
// worker and target (TestTargetRecBytes checks it within 1 %).
const TargetRecBytes = 144_228

// EnableTargets gives the recorder n targets' outcomes (n > 0), kept
// across Reset; n = 0 removes them.
func (r *Recorder) EnableTargets(n int) {
	if n <= 0 {
		r.Targets = nil
		return
	}
	r.Targets = make([]TargetRec, n)
	for i := range r.Targets {
		r.Targets[i].Latency = NewHistogram()
	}
}

// resetTargets clears every target's outcomes, keeping the histograms.
func resetTargets(ts []TargetRec) {
	for i := range ts {
		h := ts[i].Latency
		h.Reset()
		ts[i] = TargetRec{Latency: h}
	}
}

// The Target methods record target i's outcomes beside the totals, which
// the caller records. Without targets (EnableTargets not called: a run of
// one target, whose totals are its own) they record nothing.

// TargetSuccess records a successful request of target i.
func (r *Recorder) TargetSuccess(i int) {
	if i < len(r.Targets) {
		r.Targets[i].Succeeded++
	}
}

// TargetFail records n failed requests of target i in category c.
func (r *Recorder) TargetFail(i int, c Category, n uint64) {
	if i < len(r.Targets) {
		r.Targets[i].Failed[c] += n
	}
}

// TargetResponse records a complete response of target i: its latency
// and status code.
func (r *Recorder) TargetResponse(i int, latencyNs int64, code int) {
	if i >= len(r.Targets) {
		return
	}
	t := &r.Targets[i]
	if latencyNs < 0 {
		latencyNs = 0
	}
	t.LatencySumNs += uint64(latencyNs)
	t.LatencyCount++
	recordUs(t.Latency, latencyNs)
	t.Statuses.Add(code)
}

// TargetPhase is one target's share of a merged phase: counts, status
// codes and latency, merged from every worker and every load box.
type TargetPhase struct {
	Counts       Counts                  `json:"counts"`
	Statuses     StatusCounts            `json:"statuses"`
	LatencySumNs uint64                  `json:"latency_sum_ns"`
	LatencyCount uint64                  `json:"latency_count"`
	Latency      *hdrhistogram.Histogram `json:"-"`
}

// addTarget merges one target's counts and histogram into p.Targets[i],
// growing the list to i+1.
func (p *Phase) addTarget(i int, succeeded uint64, failed *[NumCategories]uint64, st *StatusCounts, sumNs, count uint64, h *hdrhistogram.Histogram) {
	for len(p.Targets) <= i {
		p.Targets = append(p.Targets, TargetPhase{Latency: NewHistogram()})
	}
	t := &p.Targets[i]
	t.Counts.Succeeded += succeeded
	for c, v := range failed {
		t.Counts.Failed[c] += v
	}
	t.Counts.Attempted = t.Counts.Succeeded + t.Counts.FailedTotal()
	t.Statuses.Merge(st)
	t.LatencySumNs += sumNs
	t.LatencyCount += count
	if h != nil {
		t.Latency.Merge(h)
	}
}

// addTargets merges q's targets into p's.
func (p *Phase) addTargets(q []TargetPhase) {
	for i := range q {
		t := &q[i]
		p.addTarget(i, t.Counts.Succeeded, &t.Counts.Failed, &t.Statuses, t.LatencySumNs, t.LatencyCount, t.Latency)
	}
}

// mergeTargetRecs merges one worker's targets into p's.
func (p *Phase) mergeTargetRecs(rs []TargetRec) {
	for i := range rs {
		t := &rs[i]
		p.addTarget(i, t.Succeeded, &t.Failed, &t.Statuses, t.LatencySumNs, t.LatencyCount, t.Latency)
	}
}

// targetJSON is TargetPhase's wire form: the histogram encoded.
type targetJSON struct {
	*targetFields
	LatencyHdr string `json:"latency_hdr"`
}

type targetFields TargetPhase

// MarshalJSON encodes t with its histogram.
func (t TargetPhase) MarshalJSON() ([]byte, error) {
	h := t.Latency
	if h == nil {
		h = NewHistogram()
	}
	hdr, err := EncodeHistogram(h)
	if err != nil {
		return nil, err
	}
	return json.Marshal(targetJSON{targetFields: (*targetFields)(&t), LatencyHdr: hdr})
}

// UnmarshalJSON decodes what MarshalJSON wrote.
func (t *TargetPhase) UnmarshalJSON(b []byte) error {
	v := targetJSON{targetFields: (*targetFields)(t)}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	h, err := DecodeHistogram(v.LatencyHdr)
	t.Latency = h
	return err
}
