package remotewrite

import (
	"context"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
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

// TestErrorKeepsSecrets: a receiver whose 401 body quotes the credential
// it refused (plain, JSON-escaped, and again past a long preamble) leaves
// neither the credential nor the token after its scheme in Err, nor the
// URL's password; Err quotes at most 200 bytes of the body, escaped
// (issue 29 item 1).
func TestErrorKeepsSecrets(t *testing.T) {
	const auth = `Bearer tok/en"s3cret`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		got := req.Header.Get("Authorization")
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, "bad credentials "+got+"\n")
		io.WriteString(w, `{"refused":"tok\/en\"s3cret"}`+strings.Repeat(".", 500)+got)
	}))
	t.Cleanup(srv.Close)
	u := strings.Replace(srv.URL, "http://", "http://user:pa55word@", 1)
	p, err := New(Config{URL: u, Authorization: auth, Edges: []float64{0.1}, Interval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	p.Push(sampleAt(1))
	p.Close(context.Background())
	e := p.Err()
	if e == nil {
		t.Fatal("no error from a 401 receiver")
	}
	msg := e.Error()
	for _, secret := range []string{"s3cret", "tok/en", `tok\/en`, "pa55word"} {
		if strings.Contains(msg, secret) {
			t.Errorf("Err carries %q: %s", secret, msg)
		}
	}
	if !strings.Contains(msg, "401") || !strings.Contains(msg, `bad credentials [redacted]\n`) || !strings.Contains(msg, "more bytes") {
		t.Errorf("Err = %s; want the 401, the body quoted and redacted, cut", msg)
	}
	if len(msg) > 400 {
		t.Errorf("Err is %d bytes: the body was not cut to 200", len(msg))
	}
	t.Log(msg)
}
