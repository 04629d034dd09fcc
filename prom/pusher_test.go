package prom

import (
	"context"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	prompb "buf.build/gen/go/prometheus/prometheus/protocolbuffers/go"
	"github.com/klauspost/compress/snappy"
	"google.golang.org/protobuf/proto"
)

// received is one decoded request.
type received struct {
	header http.Header
	req    *prompb.WriteRequest
}

// receiver is an httptest remote-write receiver that decodes what it gets
// (snappy, then protobuf) and answers with status.
type receiver struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []received
}

func newReceiver(t *testing.T, status int) *receiver {
	t.Helper()
	r := &receiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			t.Errorf("receiver: read: %v", err)
			return
		}
		raw, err := snappy.Decode(nil, body)
		if err != nil {
			t.Errorf("receiver: snappy: %v", err)
			http.Error(w, err.Error(), 400)
			return
		}
		var wr prompb.WriteRequest
		if err := proto.Unmarshal(raw, &wr); err != nil {
			t.Errorf("receiver: protobuf: %v", err)
			http.Error(w, err.Error(), 400)
			return
		}
		r.mu.Lock()
		r.got = append(r.got, received{req.Header.Clone(), &wr})
		r.mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) requests() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

// point is one float or histogram sample of a series, by its labels.
type point struct {
	ms   int64
	v    float64
	hist *prompb.Histogram
}

// byLabels flattens requests into series keyed "name{a=b,c=d}" (labels
// other than __name__ sorted, and in the order sent, which is checked).
func byLabels(t *testing.T, rs []received) map[string][]point {
	t.Helper()
	out := map[string][]point{}
	for _, r := range rs {
		for _, ts := range r.req.GetTimeseries() {
			var name string
			var rest []string
			prev := ""
			for _, l := range ts.GetLabels() {
				if l.GetName() <= prev {
					t.Errorf("labels not sorted: %q after %q", l.GetName(), prev)
				}
				prev = l.GetName()
				if l.GetValue() == "" {
					t.Errorf("label %q has an empty value", l.GetName())
				}
				if l.GetName() == "__name__" {
					name = l.GetValue()
					continue
				}
				rest = append(rest, l.GetName()+"="+l.GetValue())
			}
			k := name + "{" + strings.Join(rest, ",") + "}"
			for _, s := range ts.GetSamples() {
				out[k] = append(out[k], point{ms: s.GetTimestamp(), v: s.GetValue()})
			}
			for _, h := range ts.GetHistograms() {
				out[k] = append(out[k], point{ms: h.GetTimestamp(), hist: h})
			}
		}
	}
	return out
}

func values(ps []point) []float64 {
	var vs []float64
	for _, p := range ps {
		vs = append(vs, p.v)
	}
	return vs
}

var t0 = time.UnixMilli(1_800_000_000_000)

func sampleAt(i int) Sample {
	return Sample{
		Time: t0.Add(time.Duration(i) * time.Second), RunID: "r1", Test: "t", Protocol: "h1",
		Origin: "http://127.0.0.1:8080", Level: float64(10 * (i + 1)), Phase: i, Role: "ramp",
		Outcomes: Outcomes{Successes: uint64(100 * (i + 1))},
	}
}

func closeNow(t *testing.T, p *Pusher) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := p.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

func TestPushSeriesLabelsSamples(t *testing.T) {
	r := newReceiver(t, http.StatusNoContent)
	edges := []float64{0.001, 0.01, 0.1}
	p, err := New(Config{URL: r.srv.URL + "/api/v1/write", Labels: map[string]string{"env": "staging"},
		Authorization: "Bearer s3cret", Edges: edges})
	if err != nil {
		t.Fatal(err)
	}
	s := sampleAt(0)
	s.Shard = "0"
	s.Failures = map[string]uint64{"timeout": 3, "refused": 1}
	s.Responses = map[int]uint64{200: 100, 503: 2}
	for _, v := range []float64{0.0005, 0.001, 0.005, 0.05, 0.05, 2} {
		s.Latency.Observe(edges, v, 1)
	}
	p.Push(s)
	s2 := sampleAt(1)
	s2.Role = "bisect"
	s2.PhaseVerdict = "accepted"
	s2.RunVerdict = "passed"
	s2.Shard = "0"
	s2.Targets = []TargetOutcomes{
		{Target: "a", Outcomes: Outcomes{Successes: 7}},
		{Target: "b", Outcomes: Outcomes{Successes: 9, Failures: map[string]uint64{"5xx": 1}}},
	}
	p.Push(s2)
	closeNow(t, p)
	if p.Dropped() != 0 || p.Sent() != 2 {
		t.Fatalf("Dropped = %d, Sent = %d, want 0 and 2 (err %v)", p.Dropped(), p.Sent(), p.Err())
	}
	rs := r.requests()
	if len(rs) == 0 {
		t.Fatal("no request received")
	}
	for _, h := range []struct{ name, want string }{
		{"Content-Type", "application/x-protobuf"},
		{"Content-Encoding", "snappy"},
		{"X-Prometheus-Remote-Write-Version", "0.1.0"},
		{"Authorization", "Bearer s3cret"},
	} {
		if got := rs[0].header.Get(h.name); got != h.want {
			t.Errorf("header %s = %q, want %q", h.name, got, h.want)
		}
	}
	got := byLabels(t, rs)
	base := []string{"env=staging", "origin=http://127.0.0.1:8080", "protocol=h1", "run_id=r1", "shard=0", "test=t"}
	key := func(name string, extra ...string) string {
		ls := append(slices.Clone(base), extra...)
		slices.Sort(ls)
		return name + "{" + strings.Join(ls, ",") + "}"
	}
	want := map[string][]float64{
		key("brk_level"):                                         {10, 20},
		key("brk_phase_index"):                                   {0, 1},
		key("brk_phase_role", "role=ramp"):                       {1, 0},
		key("brk_phase_role", "role=bisect"):                     {1},
		key("brk_phase_verdict", "verdict=accepted"):             {1},
		key("brk_run_verdict", "verdict=passed"):                 {1},
		key("brk_successes_total"):                               {100},
		key("brk_failures_total", "category=refused"):            {1},
		key("brk_failures_total", "category=timeout"):            {3},
		key("brk_responses_total", "code=200"):                   {100},
		key("brk_responses_total", "code=503"):                   {2},
		key("brk_latency_seconds_bucket", "le=0.001"):            {2},
		key("brk_latency_seconds_bucket", "le=0.01"):             {3},
		key("brk_latency_seconds_bucket", "le=0.1"):              {5},
		key("brk_latency_seconds_bucket", "le=+Inf"):             {6},
		key("brk_latency_seconds_count"):                         {6},
		key("brk_successes_total", "target=a"):                   {7},
		key("brk_successes_total", "target=b"):                   {9},
		key("brk_failures_total", "category=5xx", "target=b"):    {1},
		key("brk_latency_seconds_count", "target=a"):             {0},
		key("brk_latency_seconds_bucket", "le=+Inf", "target=b"): {0},
	}
	for k, w := range want {
		if g := values(got[k]); !slices.Equal(g, w) {
			t.Errorf("%s = %v, want %v", k, g, w)
		}
	}
	if sum := values(got[key("brk_latency_seconds_sum")]); len(sum) != 1 || math.Abs(sum[0]-2.1065) > 1e-9 {
		t.Errorf("latency sum = %v, want [2.1065]", sum)
	}
	if d := got[key("brk_push_dropped_total")]; len(d) == 0 || d[len(d)-1].v != 0 {
		t.Errorf("brk_push_dropped_total = %v, want a 0", d)
	}
	if ps := got[key("brk_level")]; len(ps) == 2 && (ps[0].ms != t0.UnixMilli() || ps[1].ms != t0.UnixMilli()+1000) {
		t.Errorf("timestamps %d, %d; want %d and 1 s later", ps[0].ms, ps[1].ms, t0.UnixMilli())
	}
	// Every series name sent is listed, and every name listed for the
	// classic mode was sent.
	names := map[string]bool{}
	for k := range got {
		names[k[:strings.IndexByte(k, '{')]] = true
	}
	for n := range names {
		if !slices.Contains(SeriesNames(), n) {
			t.Errorf("sent %s, which SeriesNames lacks", n)
		}
	}
	for _, n := range seriesNamesFor(false) {
		if !names[n] {
			t.Errorf("SeriesNames lists %s, not sent", n)
		}
	}
}

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

// stallingReceiver accepts requests and holds each until release is
// closed (or the request is abandoned), telling arrived about each.
func stallingReceiver(t *testing.T) (url string, arrived chan struct{}, release chan struct{}) {
	arrived, release = make(chan struct{}, 100), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(func() { close(release); srv.Close() })
	return srv.URL, arrived, release
}

// pushMany pushes n samples and returns the longest Push.
func pushMany(p *Pusher, from, n int) time.Duration {
	var worst time.Duration
	for i := range n {
		start := time.Now()
		p.Push(sampleAt(from + i))
		worst = max(worst, time.Since(start))
	}
	return worst
}

func TestStallingReceiverNeverBlocksPush(t *testing.T) {
	url, arrived, _ := stallingReceiver(t)
	p, err := New(Config{URL: url, Edges: Buckets(time.Second, 0)})
	if err != nil {
		t.Fatal(err)
	}
	p.Push(sampleAt(0))
	select {
	case <-arrived: // the first request is now held by the receiver
	case <-time.After(5 * time.Second):
		t.Fatal("no request reached the receiver")
	}
	// While the receiver holds the request, fill the queue and overflow it.
	n := queueSize + 50
	worst := pushMany(p, 1, n)
	t.Logf("longest of %d Push calls against a stalled receiver: %v", n, worst)
	if worst > 50*time.Millisecond {
		t.Errorf("a Push took %v with the receiver stalled", worst)
	}
	if d := p.Dropped(); d != 50 {
		t.Errorf("Dropped = %d with the queue full, want 50", d)
	}
	start := time.Now()
	err = p.Close(context.Background())
	took := time.Since(start)
	t.Logf("Close against a stalled receiver returned in %v: %v", took, err)
	if took > closeBudget+300*time.Millisecond {
		t.Errorf("Close took %v, want at most 1 s + ε", took)
	}
	if err == nil {
		t.Error("Close returned nil with the flush unfinished")
	}
	if d, s := p.Dropped(), p.Sent(); d != uint64(n+1) || s != 0 {
		t.Errorf("Dropped = %d, Sent = %d; want %d and 0", d, s, n+1)
	}
	p.Push(sampleAt(999))
	if d := p.Dropped(); d != uint64(n+2) {
		t.Errorf("a Push after Close: Dropped = %d, want %d", d, n+2)
	}
}

func TestFailingReceiverDropsAndCounts(t *testing.T) {
	r := newReceiver(t, http.StatusInternalServerError)
	p, err := New(Config{URL: r.srv.URL, Edges: []float64{0.1}, Interval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	const n = 20
	worst := pushMany(p, 0, n)
	t.Logf("longest of %d Push calls against a 500 receiver: %v", n, worst)
	if worst > 50*time.Millisecond {
		t.Errorf("a Push took %v with the receiver failing", worst)
	}
	start := time.Now()
	p.Close(context.Background())
	if took := time.Since(start); took > closeBudget+300*time.Millisecond {
		t.Errorf("Close took %v, want at most 1 s + ε", took)
	}
	if d, s := p.Dropped(), p.Sent(); d != n || s != 0 {
		t.Errorf("Dropped = %d, Sent = %d; want %d and 0", d, s, n)
	}
	if len(r.requests()) == 0 || p.Err() == nil || !strings.Contains(p.Err().Error(), "500") {
		t.Errorf("requests %d, Err %v; want some requests and a 500", len(r.requests()), p.Err())
	}
	// The counts of drops travel with later requests.
	var last float64 = -1
	for k, ps := range byLabels(t, r.requests()) {
		if strings.HasPrefix(k, SeriesPushDropped) {
			last = ps[len(ps)-1].v
		}
	}
	if last < 0 {
		t.Error("no brk_push_dropped_total sent")
	}
}

func TestCloseFlushesQueued(t *testing.T) {
	url, arrived, release := stallingReceiver(t)
	p, err := New(Config{URL: url, Edges: []float64{0.1}})
	if err != nil {
		t.Fatal(err)
	}
	p.Push(sampleAt(0))
	<-arrived
	pushMany(p, 1, 5)
	go func() {
		release <- struct{}{} // the first request, holding sample 0
		<-arrived
		release <- struct{}{} // the second, holding the 5 queued behind it
	}()
	closeNow(t, p)
	if d, s := p.Dropped(), p.Sent(); d != 0 || s != 6 {
		t.Errorf("Dropped = %d, Sent = %d; want 0 and 6", d, s)
	}
}

func TestConfigValidation(t *testing.T) {
	ok := Config{URL: "http://127.0.0.1:9090/api/v1/write", Edges: []float64{0.1}}
	for _, c := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"ok", func(*Config) {}, ""},
		{"native needs no edges", func(c *Config) { c.Native, c.Edges = true, nil }, ""},
		{"scheme", func(c *Config) { c.URL = "ftp://x/" }, "want http"},
		{"no host", func(c *Config) { c.URL = "http:///x" }, "want http"},
		{"label syntax", func(c *Config) { c.Labels = map[string]string{"a-b": "x"} }, "label name"},
		{"label reserved", func(c *Config) { c.Labels = map[string]string{"__x": "x"} }, "label name"},
		{"label brk's", func(c *Config) { c.Labels = map[string]string{"run_id": "x"} }, "brk sets itself"},
		{"no edges", func(c *Config) { c.Edges = nil }, "needs bucket edges"},
		{"edges order", func(c *Config) { c.Edges = []float64{0.2, 0.1} }, "ascending"},
		{"edge inf", func(c *Config) { c.Edges = []float64{math.Inf(1)} }, "finite"},
		{"interval", func(c *Config) { c.Interval = -1 }, "negative"},
	} {
		cfg := ok
		c.edit(&cfg)
		p, err := New(cfg)
		if p != nil {
			p.Close(context.Background())
		}
		if (err == nil) != (c.want == "") || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want %q", c.name, err, c.want)
		}
	}
}

func TestBuckets(t *testing.T) {
	for _, c := range []struct {
		timeout, maxP99 time.Duration
		must            []float64
		top             float64
	}{
		{2 * time.Second, 0, []float64{0.0001, 0.001, 0.5, 1, 2}, 2},
		{1500 * time.Millisecond, 130 * time.Millisecond, []float64{0.13, 1.5, 1}, 1.5},
		{0, 0, []float64{0.0001, 10}, 10},
		{time.Second, 3 * time.Second, []float64{1, 2, 3}, 3},
	} {
		b := Buckets(c.timeout, c.maxP99)
		if !sort.Float64sAreSorted(b) || slices.Compact(slices.Clone(b)) == nil || len(slices.Compact(slices.Clone(b))) != len(b) {
			t.Errorf("Buckets(%v, %v) = %v: not ascending and distinct", c.timeout, c.maxP99, b)
		}
		for _, m := range c.must {
			if !slices.Contains(b, m) {
				t.Errorf("Buckets(%v, %v) = %v lacks %v", c.timeout, c.maxP99, b, m)
			}
		}
		if b[len(b)-1] != c.top {
			t.Errorf("Buckets(%v, %v) tops at %v, want %v", c.timeout, c.maxP99, b[len(b)-1], c.top)
		}
		if _, err := (Config{URL: "http://x", Edges: b}).validate(); err != nil {
			t.Errorf("Buckets(%v, %v) invalid: %v", c.timeout, c.maxP99, err)
		}
	}
}

func TestPushZeroTimeIsNow(t *testing.T) {
	r := newReceiver(t, http.StatusNoContent)
	p, err := New(Config{URL: r.srv.URL, Edges: []float64{1}})
	if err != nil {
		t.Fatal(err)
	}
	before := time.Now().UnixMilli()
	p.Push(Sample{Level: 1})
	closeNow(t, p)
	after := time.Now().UnixMilli()
	ps := byLabels(t, r.requests())["brk_level{}"]
	if len(ps) != 1 || ps[0].ms < before || ps[0].ms > after {
		t.Fatalf("brk_level %v, want one sample in [%d, %d]", ps, before, after)
	}
}

// BenchmarkEncode encodes one typical sample: 4 targets, 3 failure
// categories, 3 status codes, the default buckets.
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
