package brk_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brk-bench/brk"

	"github.com/brk-bench/brk/internal/testenv"
)

// mixServer counts requests per "METHOD path" and keeps every body it
// was sent per path.
type mixServer struct {
	mu     sync.Mutex
	counts map[string]int
	bodies map[string][][]byte
}

func startMixServer(t *testing.T, h2c bool) (*httptest.Server, *mixServer) {
	return startMixServerOpts(t, h2c, false, 0)
}

// startMixServerOpts is startMixServer over TLS (tls) and closing every
// closeEvery-th connection's response (0: never).
func startMixServerOpts(t *testing.T, h2c, tls bool, closeEvery int) (*httptest.Server, *mixServer) {
	ms := &mixServer{counts: map[string]int{}, bodies: map[string][][]byte{}}
	var served int
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		ms.mu.Lock()
		ms.counts[r.Method+" "+r.URL.Path]++
		if r.Header.Get("X-Run") != "1" || (r.URL.Path == "/b") != (r.Header.Get("X-Target") == "b") {
			ms.counts["wrong headers"]++
		}
		if r.Method != "GET" {
			ms.bodies[r.URL.Path] = append(ms.bodies[r.URL.Path], b)
		}
		served++
		if closeEvery > 0 && served%closeEvery == 0 {
			w.Header().Set("Connection", "close")
		}
		ms.mu.Unlock()
		if r.URL.Path == "/teapot" {
			w.WriteHeader(418)
		}
		io.WriteString(w, "ok")
	}))
	if h2c {
		srv.Config.Protocols = new(http.Protocols)
		srv.Config.Protocols.SetHTTP1(true)
		srv.Config.Protocols.SetUnencryptedHTTP2(true)
	}
	if tls {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv, ms
}

func (ms *mixServer) snapshot() (map[string]int, map[string][][]byte) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	c := map[string]int{}
	for k, v := range ms.counts {
		c[k] = v
	}
	b := map[string][][]byte{}
	for k, v := range ms.bodies {
		b[k] = v
	}
	return c, b
}

// checkMixRun checks a finished run against what the server saw: every
// target's attempted is what the server counted for its path (every
// request answered: no failure), the totals are in the weights' ratio
// within one request per worker, and every POST body arrived byte for
// byte.
func checkMixRun(t *testing.T, res *brk.Result, ms *mixServer, mix []brk.Request, workers int) {
	t.Helper()
	counts, bodies := ms.snapshot()
	total := make([]uint64, len(mix))
	var all uint64
	for _, ph := range res.Phases {
		if len(ph.Targets) != len(mix) {
			t.Fatalf("phase %d has %d targets, want %d", ph.Index, len(ph.Targets), len(mix))
		}
		var sum brk.Counts
		for i, ts := range ph.Targets {
			if ts.Index != i || ts.URL != mix[i].URL || ts.Weight != max(mix[i].Weight, 1) {
				t.Errorf("phase %d target %d: %+v, want %s weight %d", ph.Index, i, ts, mix[i].URL, mix[i].Weight)
			}
			total[i] += ts.Counts.Attempted
			sum.Attempted += ts.Counts.Attempted
			sum.Succeeded += ts.Counts.Succeeded
			if ts.LatencyMs.Count != ts.Counts.Attempted-ts.Counts.Abandoned-ts.Counts.Transport-ts.Counts.Timeout {
				t.Errorf("phase %d target %d: %d latencies for %+v", ph.Index, i, ts.LatencyMs.Count, ts.Counts)
			}
		}
		if sum.Attempted != ph.Counts.Attempted || sum.Succeeded != ph.Counts.Succeeded {
			t.Errorf("phase %d: targets sum to %+v, the phase counts %+v", ph.Index, sum, ph.Counts)
		}
	}
	var weights int
	for _, r := range mix {
		weights += max(r.Weight, 1)
	}
	for _, n := range total {
		all += n
	}
	if all == 0 {
		t.Fatal("no requests")
	}
	for i, r := range mix {
		method := strings.ToUpper(r.Method)
		if method == "" {
			method = "GET"
		}
		u, _ := url.Parse(r.URL)
		path := u.Path
		if got := counts[method+" "+path]; uint64(got) != total[i] {
			t.Errorf("target %d (%s %s): server counted %d, brk attempted %d", i, method, path, got, total[i])
		}
		share := float64(all) * float64(max(r.Weight, 1)) / float64(weights)
		if d := math.Abs(float64(total[i]) - share); d >= float64(workers) {
			t.Errorf("target %d: %d of %d, its share is %.1f (off by %.1f, more than one per worker)", i, total[i], all, share, d)
		}
		if r.Body != nil {
			for k, b := range bodies[path] {
				if !bytes.Equal(b, r.Body) {
					t.Fatalf("target %d: body %d arrived as %q, sent %q", i, k, b, r.Body)
				}
			}
			if uint64(len(bodies[path])) != total[i] {
				t.Errorf("target %d: %d bodies for %d requests", i, len(bodies[path]), total[i])
			}
		}
	}
}

func mixOf(base string) []brk.Request {
	return []brk.Request{
		{URL: base + "/a"},
		{URL: base + "/b?q=1", Headers: []brk.Header{{Name: "X-Target", Value: "b"}}},
		{Method: "post", URL: base + "/c", Body: []byte("body of c\x00\xff\r\n"), Weight: 2},
	}
}

// TestMixRequests: the requests test over HTTP/1.1 (pipelined, depth 3)
// and HTTP/2 sends the mix in its weights' ratio, each target's bytes
// exactly, and counts each target's outcomes.
func TestMixRequests(t *testing.T) {
	for _, h2c := range []bool{false, true} {
		t.Run(fmt.Sprintf("h2=%v", h2c), func(t *testing.T) {
			srv, ms := startMixServer(t, h2c)
			// A body above h1's inline bound: written after its head from
			// the one copy (HTTP/2: DATA frames within the windows).
			big := bytes.Repeat([]byte("0123456789abcdef"), 20<<10/16)
			mix := append(mixOf(srv.URL), brk.Request{Method: "PUT", URL: srv.URL + "/big", Body: big})
			p := brk.Plan{Conns: 2, Start: 3, Max: 3, Phase: 300 * time.Millisecond, Timeout: time.Second, Threads: 1, Accept: brk.AcceptAny}
			run := []brk.Header{{Name: "X-Run", Value: "1"}}
			res, err := brk.Run(context.Background(), brk.Target{Mix: mix, HTTP2: h2c, Headers: run}, p, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.URL != srv.URL {
				t.Errorf("report URL %q, want the origin %q", res.URL, srv.URL)
			}
			checkMixRun(t, res, ms, mix, 1)
			if n := ms.counts["wrong headers"]; n > 0 {
				t.Errorf("%d requests without the Target's header or with another target's", n)
			}
			if ph := res.Phases[0]; ph.Counts.Succeeded != ph.Counts.Attempted {
				t.Errorf("failures: %+v", ph.Counts)
			}
		})
	}
}

// TestMixRate: the rate test's arrivals take their targets by the
// schedule's index, so two workers together send the mix's ratio; a
// target's own expect-status decides its outcomes alone.
func TestMixRate(t *testing.T) {
	srv, ms := startMixServer(t, false)
	mix := append(mixOf(srv.URL), brk.Request{URL: srv.URL + "/teapot", ExpectStatus: []int{418}})
	p := brk.Plan{Load: brk.Rate{Conns: 4}, Start: 400, Max: 400, Phase: 500 * time.Millisecond, Timeout: time.Second, Threads: 2, Accept: brk.AcceptAny}
	res, err := brk.Run(context.Background(), brk.Target{Mix: mix}, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkMixRun(t, res, ms, mix, 2)
	ph := res.Phases[0]
	if ph.Counts.Status != 0 || ph.Targets[3].StatusCodes["418"] == 0 || ph.Targets[3].SuccessPct != 100 {
		t.Errorf("the teapot's 418 is its expected status: phase %+v, teapot %+v", ph.Counts, ph.Targets[3])
	}
	b, err := json.Marshal(ph)
	if err != nil || !strings.Contains(string(b), `"targets":[{"index":0,"method":"GET"`) {
		t.Errorf("JSON targets: %.300s (%v)", b, err)
	}
}

// TestMixRefused: what a mix cannot be is refused before any traffic.
func TestMixRefused(t *testing.T) {
	base := "http://127.0.0.1:1"
	many := make([]brk.Request, brk.MaxTargets+1)
	for i := range many {
		many[i] = brk.Request{URL: base + "/"}
	}
	for _, c := range []struct {
		t    brk.Target
		want string
	}{
		{brk.Target{URL: base + "/", Mix: []brk.Request{{URL: base + "/a"}}}, "Target.Mix and Target.URL cannot be combined"},
		{brk.Target{Method: "PUT", Mix: []brk.Request{{URL: base + "/a"}}}, "Target.Mix and Target.Method cannot be combined"},
		{brk.Target{Body: []byte{}, Mix: []brk.Request{{URL: base + "/a"}}}, "Target.Mix and Target.Body cannot be combined"},
		{brk.Target{Mix: []brk.Request{{URL: base + "/a"}, {URL: "http://127.0.0.2:1/b"}}}, "Target.Mix[1].URL \"http://127.0.0.2:1/b\": another origin"},
		{brk.Target{Mix: []brk.Request{{URL: base + "/a"}, {URL: "https://127.0.0.1:1/b"}}}, "another origin"},
		{brk.Target{Mix: many}, fmt.Sprintf("Target.Mix has %d requests: at most %d", brk.MaxTargets+1, brk.MaxTargets)},
		{brk.Target{Mix: []brk.Request{{URL: base + "/a", Weight: brk.MaxWeight + 1}}}, "Target.Mix[0].Weight 1001: want 1..1000"},
		{brk.Target{Mix: []brk.Request{{URL: base + "/a", Weight: -1}}}, "Target.Mix[0].Weight -1"},
		{brk.Target{Mix: []brk.Request{{URL: base + "/a", Method: "G T"}}}, "Target.Mix[0]: invalid method"},
		{brk.Target{Mix: []brk.Request{{URL: base + "/a", ExpectStatus: []int{99}}}}, "Target.Mix[0]: Target.ExpectStatus 99"},
	} {
		err := brk.Validate(c.t, brk.Plan{})
		var pe *brk.PlanError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want a PlanError with %q", c.t, err, c.want)
		}
	}
	if err := brk.Validate(brk.Target{Mix: []brk.Request{{URL: base + "/a"}, {URL: "http://127.0.0.1:1/b", Weight: brk.MaxWeight}}}, brk.Plan{}); err != nil {
		t.Errorf("a valid mix refused: %v", err)
	}
}

// TestMixConnectionsTLSAndReplacement: the connections test over TLS,
// three requests per connection (the last its target's closing variant),
// and the requests test against a server that closes a connection every
// 7th response: the sequence continues across connections, so the
// counts stay in the weights' ratio within one request and equal what
// the server counted.
func TestMixConnectionsTLSAndReplacement(t *testing.T) {
	t.Run("conn-tls", func(t *testing.T) {
		srv, ms := startMixServerOpts(t, false, true, 0)
		mix := mixOf(srv.URL)
		p := brk.Plan{Load: brk.Connections{Requests: 3}, Start: 4, Max: 4, Phase: 300 * time.Millisecond, Timeout: time.Second, Threads: 1, Accept: brk.AcceptAny}
		res, err := brk.Run(context.Background(), brk.Target{Mix: mix, TLS: brk.TLSOptions{Insecure: true}}, p, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !res.TLS || res.URL != srv.URL {
			t.Errorf("tls %v, url %q", res.TLS, res.URL)
		}
		checkMixRun(t, res, ms, mix, 1)
	})
	t.Run("replaced", func(t *testing.T) {
		srv, ms := startMixServerOpts(t, false, false, 7)
		mix := mixOf(srv.URL)
		p := brk.Plan{Conns: 2, Start: 1, Max: 1, Phase: 300 * time.Millisecond, Timeout: time.Second, Threads: 1, Accept: brk.AcceptAny}
		res, err := brk.Run(context.Background(), brk.Target{Mix: mix}, p, nil)
		if err != nil {
			t.Fatal(err)
		}
		if su := res.Phases[0].Setups; su.Established < 10 {
			t.Fatalf("%d setups: the server did not close connections", su.Established)
		}
		checkMixRun(t, res, ms, mix, 1)
	})
}

// TestMixReplayPerTarget: over pipelined HTTP/1.1, a server that closes a
// connection every 7th response leaves written followers unanswered: the
// GET targets' are replayed on the next connection (idempotent), the POST
// target's are abandoned (RFC 9112 §9.3.2), each counted on its own
// target; what the server answered is every target's attempted less its
// abandoned.
func TestMixReplayPerTarget(t *testing.T) {
	srv, ms := startMixServerOpts(t, false, false, 7)
	mix := mixOf(srv.URL)
	p := brk.Plan{Conns: 2, Start: 3, Max: 3, Phase: 300 * time.Millisecond, Timeout: time.Second, Threads: 1, Accept: brk.AcceptAny}
	res, err := brk.Run(context.Background(), brk.Target{Mix: mix}, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	ph := res.Phases[0]
	counts, _ := ms.snapshot()
	keys := []string{"GET /a", "GET /b", "POST /c"}
	for i, ts := range ph.Targets {
		c := ts.Counts
		if i < 2 && c.Abandoned != 0 {
			t.Errorf("GET target %d: %d abandoned, want every follower replayed", i, c.Abandoned)
		}
		if got := uint64(counts[keys[i]]); got != c.Attempted-c.Abandoned || c.Succeeded != got {
			t.Errorf("target %d: server answered %d, brk %+v", i, got, c)
		}
	}
	if ph.Targets[2].Counts.Abandoned == 0 || ph.StreamsReplayed == 0 {
		t.Errorf("no POST follower abandoned (%+v) or nothing replayed (%d): the server's closes did not cut pipelines", ph.Targets[2].Counts, ph.StreamsReplayed)
	}
}

// checkTargetsSum: every phase's targets add up to the phase's counts,
// category by category.
func checkTargetsSum(t *testing.T, res *brk.Result) {
	t.Helper()
	for _, ph := range res.Phases {
		var sum brk.Counts
		for _, ts := range ph.Targets {
			c := ts.Counts
			sum.Attempted += c.Attempted
			sum.Succeeded += c.Succeeded
			sum.Timeout += c.Timeout
			sum.Transport += c.Transport
			sum.Abandoned += c.Abandoned
			sum.Connect += c.Connect
			sum.ConnectTimeout += c.ConnectTimeout
			sum.Status += c.Status
			sum.Body += c.Body
			sum.Protocol += c.Protocol
		}
		if sum != ph.Counts {
			t.Errorf("phase %d: targets sum to %+v, the phase counts %+v", ph.Index, sum, ph.Counts)
		}
	}
}

// TestMixFailuresPerTarget: failures are charged to the target whose
// request failed, and every category adds up to the phase's: timeouts of
// a route that never answers (and the HTTP/1.1 followers they abandon),
// abandoned and replayed followers of closes, connect failures.
func TestMixFailuresPerTarget(t *testing.T) {
	t.Run("timeouts", func(t *testing.T) {
		// An HTTP/1.1 handler whose connection has pipelined bytes
		// waiting is not told of the client's close (net/http stops its
		// background read at the first byte): stop releases /hang before
		// Close waits for the handlers.
		stop := make(chan struct{})
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/hang" {
				select {
				case <-r.Context().Done():
				case <-stop:
				}
				return
			}
			io.WriteString(w, "ok")
		}))
		srv.Config.Protocols = new(http.Protocols)
		srv.Config.Protocols.SetHTTP1(true)
		srv.Config.Protocols.SetUnencryptedHTTP2(true)
		srv.Start()
		defer srv.Close()
		defer close(stop)
		mix := []brk.Request{{URL: srv.URL + "/a", Weight: 3}, {URL: srv.URL + "/hang"}}
		for _, h2c := range []bool{false, true} {
			p := brk.Plan{Conns: 2, Start: 2, Max: 2, Phase: 300 * time.Millisecond, Timeout: 100 * time.Millisecond, Threads: 1, Accept: brk.AcceptAny}
			res, err := brk.Run(context.Background(), brk.Target{Mix: mix, HTTP2: h2c}, p, nil)
			if err != nil {
				t.Fatal(err)
			}
			checkTargetsSum(t, res)
			hang, fast := res.Phases[0].Targets[1].Counts, res.Phases[0].Targets[0].Counts
			if hang.Timeout == 0 || hang.Succeeded != 0 {
				t.Errorf("h2 %v: /hang %+v, want timeouts only", h2c, hang)
			}
			if h2c && (fast.Succeeded == 0 || fast.Succeeded*10 < fast.Attempted*9) {
				t.Errorf("h2: /a %+v, want (nearly) every request a success: streams do not wait for /hang", fast)
			}
		}
	})
	t.Run("replays", func(t *testing.T) {
		srv, _ := startMixServerOpts(t, false, false, 5)
		p := brk.Plan{Conns: 2, Start: 4, Max: 4, Phase: 300 * time.Millisecond, Timeout: time.Second, Threads: 1, Accept: brk.AcceptAny}
		res, err := brk.Run(context.Background(), brk.Target{Mix: mixOf(srv.URL)}, p, nil)
		if err != nil {
			t.Fatal(err)
		}
		checkTargetsSum(t, res)
	})
	t.Run("connect", func(t *testing.T) {
		base := "http://" + testenv.RefusingAddr(t)
		p := brk.Plan{Conns: 2, Start: 1, Max: 1, Phase: 100 * time.Millisecond, Timeout: 100 * time.Millisecond, Threads: 1}
		res, err := brk.Run(context.Background(), brk.Target{Mix: mixOf(base)}, p, nil)
		if err != nil {
			t.Fatal(err)
		}
		checkTargetsSum(t, res)
		if len(res.Phases) > 0 && res.Phases[0].Counts.Connect == 0 {
			t.Errorf("no connect failures: %+v", res.Phases[0].Counts)
		}
	})
}
