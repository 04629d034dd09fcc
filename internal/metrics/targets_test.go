package metrics

import (
	"encoding/json"
	"testing"
	"unsafe"
)

// TestTargetRecBytes: one target's recorder costs what TargetRecBytes
// (and the docs' "about 141 KiB per worker per target") says.
func TestTargetRecBytes(t *testing.T) {
	r := NewRecorder(&Live{})
	r.EnableTargets(1)
	got := int(unsafe.Sizeof(r.Targets[0])) + int(r.Targets[0].Latency.ByteSize())
	if d := got - TargetRecBytes; d*100 > TargetRecBytes || -d*100 > TargetRecBytes {
		t.Errorf("a TargetRec holds %d bytes, TargetRecBytes says %d", got, TargetRecBytes)
	}
}

// TestTargetsMergeExactly: per-target outcomes of two workers merge into a
// phase, survive its JSON (a shard's Measurement) and add up again in a
// second merge, histograms included; Reset clears them and keeps the
// targets.
func TestTargetsMergeExactly(t *testing.T) {
	live := &Live{}
	a, b := NewRecorder(live), NewRecorder(live)
	a.EnableTargets(3)
	b.EnableTargets(3)
	a.TargetResponse(0, 1_000_000, 200)
	a.TargetSuccess(0)
	a.TargetResponse(2, 5_000_000, 503)
	a.TargetFail(2, Status, 1)
	b.TargetFail(1, Timeout, 4)
	b.TargetResponse(0, 2_000_000, 200)
	b.TargetSuccess(0)
	p := NewPhase()
	p.Merge(a)
	p.Merge(b)
	if len(p.Targets) != 3 {
		t.Fatalf("%d targets", len(p.Targets))
	}
	want := []Counts{
		{Attempted: 2, Succeeded: 2},
		{Attempted: 4, Failed: [NumCategories]uint64{Timeout: 4}},
		{Attempted: 1, Failed: [NumCategories]uint64{Status: 1}},
	}
	for i, w := range want {
		if p.Targets[i].Counts != w {
			t.Errorf("target %d: %+v, want %+v", i, p.Targets[i].Counts, w)
		}
	}
	if p.Targets[0].Latency.TotalCount() != 2 || p.Targets[0].LatencyCount != 2 || p.Targets[0].LatencySumNs != 3_000_000 || p.Targets[2].Statuses[503] != 1 {
		t.Errorf("target 0 latency %d/%d/%d, target 2's 503s %d", p.Targets[0].Latency.TotalCount(), p.Targets[0].LatencyCount, p.Targets[0].LatencySumNs, p.Targets[2].Statuses[503])
	}
	js, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var q Phase
	if err := json.Unmarshal(js, &q); err != nil {
		t.Fatal(err)
	}
	m := NewPhase()
	m.Add(&q)
	m.Add(p)
	for i := range p.Targets {
		if m.Targets[i].Counts.Attempted != 2*p.Targets[i].Counts.Attempted || m.Targets[i].Latency.TotalCount() != 2*p.Targets[i].Latency.TotalCount() ||
			m.Targets[i].Latency.Max() != p.Targets[i].Latency.Max() {
			t.Errorf("target %d after JSON and a second merge: %+v", i, m.Targets[i].Counts)
		}
	}
	a.Reset()
	if len(a.Targets) != 3 || a.Targets[0].Succeeded != 0 || a.Targets[0].Latency.TotalCount() != 0 {
		t.Errorf("Reset: %d targets, %+v", len(a.Targets), a.Targets[0])
	}
}
