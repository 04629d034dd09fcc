package remotewrite

import (
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	prompb "buf.build/gen/go/prometheus/prometheus/protocolbuffers/go"
	"google.golang.org/protobuf/proto"
)

func TestTimestampsStrictlyIncrease(t *testing.T) {
	e := newEncoder(Config{Edges: []float64{1}})
	s := sampleAt(0)
	req := e.request([]Sample{s, s, s}, 0)
	req2 := e.request([]Sample{s}, 0)
	var ms []int64
	for _, r := range []*prompb.WriteRequest{req, req2} {
		for _, ts := range r.GetTimeseries() {
			if ts.GetLabels()[0].GetValue() == SeriesLevel {
				for _, p := range ts.GetSamples() {
					ms = append(ms, p.GetTimestamp())
				}
			}
		}
	}
	want := []int64{t0.UnixMilli(), t0.UnixMilli() + 1, t0.UnixMilli() + 2, t0.UnixMilli() + 3}
	if !slices.Equal(ms, want) {
		t.Fatalf("timestamps %v, want %v", ms, want)
	}
}

func TestNativeHistogramEncoding(t *testing.T) {
	r := newReceiver(t, http.StatusNoContent)
	p, err := New(Config{URL: r.srv.URL, Native: true})
	if err != nil {
		t.Fatal(err)
	}
	s := sampleAt(0)
	obs := []float64{0.001, 0.001, 0.0011, 0.004, 0.5, 0}
	for _, v := range obs {
		s.Native.Observe(v, 1)
	}
	p.Push(s)
	closeNow(t, p)
	got := byLabels(t, r.requests())
	var h *prompb.Histogram
	for k, ps := range got {
		if strings.HasPrefix(k, SeriesLatency+"{") {
			h = ps[0].hist
		}
		if strings.HasPrefix(k, SeriesLatencyBucket) {
			t.Errorf("native mode sent %s", k)
		}
	}
	if h == nil {
		t.Fatalf("no %s histogram in %v", SeriesLatency, got)
	}
	if h.GetCountInt() != 6 || h.GetZeroCountInt() != 1 || h.GetSchema() != NativeSchema || h.GetTimestamp() != t0.UnixMilli() {
		t.Fatalf("count %d zero %d schema %d ts %d", h.GetCountInt(), h.GetZeroCountInt(), h.GetSchema(), h.GetTimestamp())
	}
	// Expand spans and deltas back to index → count and check each
	// observation sits in (b^(i-1), b^i].
	idx := map[int32]int64{}
	var i int32
	var c int64
	d := 0
	for n, sp := range h.GetPositiveSpans() {
		if n == 0 {
			i = sp.GetOffset()
		} else {
			i += sp.GetOffset()
		}
		for range sp.GetLength() {
			c += h.GetPositiveDeltas()[d]
			d++
			idx[i] = c
			i++
		}
	}
	b := math.Exp2(math.Exp2(-NativeSchema))
	var total int64
	for _, v := range obs[:5] {
		found := false
		for i := range idx {
			if math.Pow(b, float64(i-1)) < v && v <= math.Pow(b, float64(i))*(1+1e-12) {
				found = true
			}
		}
		if !found {
			t.Errorf("%v in no bucket of %v", v, idx)
		}
	}
	for _, c := range idx {
		total += c
	}
	if total != 5 {
		t.Errorf("bucket counts %v sum to %d, want 5", idx, total)
	}
}

func TestNativeObserveIgnoresNonFinite(t *testing.T) {
	var h NativeHistogram
	h.Observe(math.NaN(), 1)
	h.Observe(math.Inf(1), 1)
	h.Observe(0.01, 2)
	if h.Count() != 2 || h.Sum != 0.02 {
		t.Fatalf("count %d sum %v, want 2 and 0.02", h.Count(), h.Sum)
	}
}

func TestNativeIndexEdges(t *testing.T) {
	for _, schema := range []int32{-4, 0, 3, 8} {
		scale := math.Exp2(float64(schema))
		for _, i := range []int32{-40, -3, 0, 1, 7} {
			edge := math.Exp2(float64(i) / scale) // b^i, as nativeIndex computes it
			if got := nativeIndex(schema, edge); got != i {
				t.Errorf("schema %d: edge b^%d in bucket %d", schema, i, got)
			}
			if got := nativeIndex(schema, edge*1.0001); got != i+1 {
				t.Errorf("schema %d: just above b^%d in bucket %d, want %d", schema, i, got, i+1)
			}
		}
	}
}

func BenchmarkEncode(b *testing.B) {
	edges := Buckets(2*time.Second, 100*time.Millisecond)
	e := newEncoder(Config{Edges: edges, Labels: map[string]string{"env": "staging"}})
	s := sampleAt(0)
	for i := range 4 {
		o := Outcomes{Successes: 1000, Failures: map[string]uint64{"timeout": 1, "refused": 2, "5xx": 3},
			Responses: map[int]uint64{200: 1000, 500: 3, 503: 1}}
		o.Latency.Observe(edges, 0.003, 1000)
		s.Targets = append(s.Targets, TargetOutcomes{Target: strconv.Itoa(i), Outcomes: o})
	}
	b.ReportAllocs()
	for b.Loop() {
		if n := proto.Size(e.request([]Sample{s}, 0)); n == 0 {
			b.Fatal("empty request")
		}
	}
}
