package bench

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

func startFixture(t *testing.T, cfg FixtureConfig) *Fixture {
	t.Helper()
	f, err := StartFixture(cfg)
	if err != nil {
		t.Fatalf("StartFixture: %v", err)
	}
	t.Cleanup(func() {
		if err := f.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return f
}

func newClient(t *testing.T) *http.Client {
	t.Helper()
	tr := &http.Transport{MaxIdleConnsPerHost: 64, MaxConnsPerHost: 0}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

type result struct {
	code  int
	body  []byte
	ctype string
	resp  *http.Response
}

func do(t *testing.T, c *http.Client, ctx context.Context, method, url string, body []byte) result {
	t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading body: %v", method, url, err)
	}
	return result{resp.StatusCode, b, resp.Header.Get("Content-Type"), resp}
}

func TestRoutes(t *testing.T) {
	f := startFixture(t, FixtureConfig{})
	c := newClient(t)
	ctx := testCtx(t)

	if !strings.HasPrefix(f.Addr(), "127.0.0.1:") || f.Addr() == "127.0.0.1:0" {
		t.Fatalf("Addr() = %q", f.Addr())
	}
	if got, want := f.URL("/x"), "http://"+f.Addr()+"/x"; got != want {
		t.Fatalf("URL = %q, want %q", got, want)
	}

	cases := []struct {
		path, body, ctype string
		code              int
	}{
		{"/plain", "ok", "text/plain", 200},
		{"/hello", "Hello, World!", "text/plain", 200},
		{"/json", `{"message":"Hello, World!"}`, "application/json", 200},
		{"/status?code=503", "ok", "text/plain", 503},
		{"/status?code=200", "ok", "text/plain", 200},
		{"/status?code=418", "ok", "text/plain", 418},
		{"/status?code=204", "", "", 204},
		{"/status?code=100", "", "", 400},
		{"/status?code=600", "", "", 400},
		{"/status?code=abc", "", "", 400},
		{"/status", "", "", 400},
		{"/delay?ms=-1", "", "", 400},
		{"/delay?ms=60001", "", "", 400},
		{"/delay?ms=x", "", "", 400},
		{"/nope", "", "", 404},
		{"/", "", "", 404},
	}
	for _, tc := range cases {
		r := do(t, c, ctx, "GET", f.URL(tc.path), nil)
		if r.code != tc.code {
			t.Errorf("%s: status %d, want %d", tc.path, r.code, tc.code)
		}
		if tc.body != "" && string(r.body) != tc.body {
			t.Errorf("%s: body %q, want %q", tc.path, r.body, tc.body)
		}
		if tc.ctype != "" && !strings.HasPrefix(r.ctype, tc.ctype) {
			t.Errorf("%s: Content-Type %q, want %q", tc.path, r.ctype, tc.ctype)
		}
		if tc.code == 200 && r.resp.ContentLength != int64(len(tc.body)) {
			t.Errorf("%s: ContentLength %d, want %d", tc.path, r.resp.ContentLength, len(tc.body))
		}
	}
	if got := f.Requests(); got != int64(len(cases)) {
		t.Errorf("Requests() = %d, want %d", got, len(cases))
	}
	// Every route brk fixture --help lists is served (its query made
	// valid), and every path served is listed.
	served := map[string]bool{}
	for _, tc := range cases {
		if tc.code != 404 {
			p, _, _ := strings.Cut(tc.path, "?")
			served[p] = true
		}
	}
	for _, r := range FixtureRoutes {
		q := map[string]string{"/delay": "?ms=0", "/status": "?code=200"}[r.Path]
		if got := do(t, c, ctx, "GET", f.URL(r.Path+q), nil); got.code != 200 || r.Answers == "" {
			t.Errorf("FixtureRoutes lists %s (%q): status %d", r.Path, r.Answers, got.code)
		}
		delete(served, r.Path)
	}
	for p := range served {
		if p != "/echo" && p != "/chunked" { // TestEcho, TestChunked
			t.Errorf("%s is served but not in FixtureRoutes", p)
		}
	}
}

func TestEcho(t *testing.T) {
	f := startFixture(t, FixtureConfig{})
	c := newClient(t)
	ctx := testCtx(t)

	bin := make([]byte, 70000)
	for i := range bin {
		bin[i] = byte(i * 7)
	}
	for _, body := range [][]byte{{}, {0, 1, 2, 0xff, '\r', '\n', 0}, bin} {
		r := do(t, c, ctx, "POST", f.URL("/echo"), body)
		if r.code != 200 || !bytes.Equal(r.body, body) {
			t.Fatalf("echo of %d bytes: status %d, got %d bytes (equal=%v)", len(body), r.code, len(r.body), bytes.Equal(r.body, body))
		}
		if r.ctype != "application/octet-stream" {
			t.Errorf("echo Content-Type %q", r.ctype)
		}
		if r.resp.ContentLength != int64(len(body)) {
			t.Errorf("echo ContentLength %d, want %d", r.resp.ContentLength, len(body))
		}
	}
}

func TestChunked(t *testing.T) {
	f := startFixture(t, FixtureConfig{})
	c := newClient(t)
	r := do(t, c, testCtx(t), "GET", f.URL("/chunked"), nil)
	if r.code != 200 || string(r.body) != "Hello, World!" {
		t.Fatalf("chunked: %d %q", r.code, r.body)
	}
	if len(r.resp.TransferEncoding) != 1 || r.resp.TransferEncoding[0] != "chunked" {
		t.Fatalf("TransferEncoding = %v, want [chunked]", r.resp.TransferEncoding)
	}
	if r.resp.ContentLength != -1 {
		t.Fatalf("ContentLength = %d, want -1", r.resp.ContentLength)
	}
}

func TestDelay(t *testing.T) {
	f := startFixture(t, FixtureConfig{})
	c := newClient(t)
	ctx := testCtx(t)
	start := time.Now()
	r := do(t, c, ctx, "GET", f.URL("/delay?ms=50"), nil)
	if el := time.Since(start); el < 50*time.Millisecond || el > 2*time.Second {
		t.Fatalf("/delay?ms=50 took %v", el)
	}
	if r.code != 200 || string(r.body) != "ok" {
		t.Fatalf("/delay: %d %q", r.code, r.body)
	}
	if r := do(t, c, ctx, "GET", f.URL("/delay?ms=0"), nil); r.code != 200 {
		t.Fatalf("/delay?ms=0: %d", r.code)
	}
}

// TestPipelining sends several requests in one write on one connection and
// reads the responses back in order.
func TestPipelining(t *testing.T) {
	f := startFixture(t, FixtureConfig{})
	conn, err := net.DialTimeout("tcp", f.Addr(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	paths := []string{"/plain", "/hello", "/json", "/nope", "/chunked"}
	var req strings.Builder
	for _, p := range paths {
		req.WriteString("GET " + p + " HTTP/1.1\r\nHost: x\r\n\r\n")
	}
	req.WriteString("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc")
	if _, err := io.WriteString(conn, req.String()); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	want := []string{"ok", "Hello, World!", `{"message":"Hello, World!"}`, "", "Hello, World!", "abc"}
	for i, w := range want {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("response %d: %v", i, err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("response %d body: %v", i, err)
		}
		if w != "" && string(b) != w {
			t.Errorf("response %d: body %q, want %q", i, b, w)
		}
	}
}

func TestCapacity(t *testing.T) {
	f := startFixture(t, FixtureConfig{Capacity: 2, Service: 20 * time.Millisecond})
	c := newClient(t)
	ctx := testCtx(t)
	const n = 8
	var wg sync.WaitGroup
	codes := make([]int, n)
	start := time.Now()
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequestWithContext(ctx, "GET", f.URL("/plain"), nil)
			resp, err := c.Do(req)
			if err != nil {
				t.Errorf("request %d: %v", i, err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			codes[i] = resp.StatusCode
		}()
	}
	wg.Wait()
	el := time.Since(start)
	for i, code := range codes {
		if code != 200 {
			t.Errorf("request %d: status %d", i, code)
		}
	}
	t.Logf("8 requests, capacity 2, service 20ms: %v (ideal 80ms); max in flight %d, max in service %d",
		el, f.MaxInFlight(), f.MaxInService())
	if el < 75*time.Millisecond || el > 400*time.Millisecond {
		t.Errorf("wall time %v, want about 80ms (75ms..400ms)", el)
	}
	if got := f.MaxInService(); got != 2 {
		t.Errorf("MaxInService() = %d, want 2", got)
	}
	if got := f.MaxInFlight(); got < 2 || got > n {
		t.Errorf("MaxInFlight() = %d, want 2..%d", got, n)
	}
	if got := f.Requests(); got != n {
		t.Errorf("Requests() = %d, want %d", got, n)
	}
}

// TestServiceNoCapacity: Service > 0 with Capacity 0 sleeps without queueing.
func TestServiceNoCapacity(t *testing.T) {
	f := startFixture(t, FixtureConfig{Service: 50 * time.Millisecond})
	c := newClient(t)
	ctx := testCtx(t)
	var wg sync.WaitGroup
	start := time.Now()
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			do(t, c, ctx, "GET", f.URL("/plain"), nil)
		}()
	}
	wg.Wait()
	el := time.Since(start)
	if el < 50*time.Millisecond || el > 250*time.Millisecond {
		t.Errorf("6 concurrent requests with 50ms service, no capacity limit: %v, want about 50ms", el)
	}
	if got := f.MaxInService(); got < 2 {
		t.Errorf("MaxInService() = %d, want concurrency > 1", got)
	}
}

func TestDelayDist(t *testing.T) {
	f := startFixture(t, FixtureConfig{DelayDist: "uniform:20ms-30ms"})
	c := newClient(t)
	ctx := testCtx(t)
	for range 5 {
		start := time.Now()
		do(t, c, ctx, "GET", f.URL("/hello"), nil)
		if el := time.Since(start); el < 20*time.Millisecond || el > time.Second {
			t.Errorf("uniform:20ms-30ms request took %v", el)
		}
	}
}

// TestCancelWhileQueued: a request whose client gives up while it waits for
// a slot never enters service.
func TestCancelWhileQueued(t *testing.T) {
	f := startFixture(t, FixtureConfig{Capacity: 1, Service: 150 * time.Millisecond})
	c := newClient(t)
	ctx := testCtx(t)
	done := make(chan struct{})
	go func() {
		defer close(done)
		do(t, c, ctx, "GET", f.URL("/plain"), nil)
	}()
	// Wait for the first request to hold the slot.
	for deadline := time.Now().Add(5 * time.Second); f.inService.Load() != 1; {
		if time.Now().After(deadline) {
			t.Fatal("first request never entered service")
		}
		time.Sleep(time.Millisecond)
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(cctx, "GET", f.URL("/plain"), nil)
	if resp, err := c.Do(req); err == nil {
		resp.Body.Close()
		t.Fatal("cancelled request succeeded")
	}
	<-done
	// Give the server a moment to notice; the cancelled one must not be served.
	time.Sleep(200 * time.Millisecond)
	if got := f.slotsTaken.Load(); got != 1 {
		t.Fatalf("slots taken = %d, want 1 (cancelled request was serviced)", got)
	}
	if got := f.Requests(); got != 2 {
		t.Fatalf("Requests() = %d, want 2", got)
	}
}

func TestParseDelayDist(t *testing.T) {
	good := []struct {
		in     string
		lo, hi time.Duration
	}{
		{"uniform:1ms-10ms", time.Millisecond, 10 * time.Millisecond},
		{"uniform:0s-0s", 0, 0},
		{"uniform:5ms-5ms", 5 * time.Millisecond, 5 * time.Millisecond},
		{"uniform:500us-1.5ms", 500 * time.Microsecond, 1500 * time.Microsecond},
		{"uniform: 1s - 2s ", time.Second, 2 * time.Second},
	}
	for _, tc := range good {
		lo, hi, err := ParseDelayDist(tc.in)
		if err != nil || lo != tc.lo || hi != tc.hi {
			t.Errorf("ParseDelayDist(%q) = %v, %v, %v; want %v, %v", tc.in, lo, hi, err, tc.lo, tc.hi)
		}
	}
	bad := []string{
		"", "uniform", "uniform:", "uniform:1ms", "uniform:10ms-1ms", "normal:1ms-2ms",
		"uniform:1-2", "uniform:x-2ms", "uniform:1ms-y", "uniform:-1ms-2ms", "Uniform:1ms-2ms",
	}
	for _, in := range bad {
		_, _, err := ParseDelayDist(in)
		if err == nil {
			t.Errorf("ParseDelayDist(%q) succeeded, want error", in)
		} else if strings.Contains(err.Error(), "\n") {
			t.Errorf("ParseDelayDist(%q) error is not one line: %q", in, err)
		}
	}
}

func TestStartFixtureValidation(t *testing.T) {
	bad := []FixtureConfig{
		{Capacity: -1},
		{Service: -time.Millisecond},
		{DelayDist: "uniform:2ms-1ms"},
		{DelayDist: "bogus"},
		{Addr: "not an address"},
	}
	for _, cfg := range bad {
		f, err := StartFixture(cfg)
		if err == nil {
			f.Close()
			t.Errorf("StartFixture(%+v) succeeded, want error", cfg)
		} else if strings.Contains(err.Error(), "\n") {
			t.Errorf("StartFixture(%+v) error is not one line: %q", cfg, err)
		}
	}
}

func TestCloseNoGoroutineLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	f, err := StartFixture(FixtureConfig{Capacity: 1, Service: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{}
	c := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	// Some requests stuck in service / waiting for a slot, one idle keep-alive conn.
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := c.Get(f.URL("/plain"))
			if err == nil {
				resp.Body.Close()
			}
		}()
	}
	for deadline := time.Now().Add(5 * time.Second); f.Requests() < 3; {
		if time.Now().After(deadline) {
			t.Fatal("requests never arrived")
		}
		time.Sleep(time.Millisecond)
	}
	start := time.Now()
	if err := f.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("Close took %v with requests in service", el)
	}
	if err := f.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	wg.Wait()
	tr.CloseIdleConnections()
	var now int
	for deadline := time.Now().Add(5 * time.Second); ; {
		now = runtime.NumGoroutine()
		if now <= before || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if now > before {
		buf := make([]byte, 1<<16)
		n := runtime.Stack(buf, true)
		t.Fatalf("goroutines: %d before, %d after Close\n%s", before, now, buf[:n])
	}
	if _, err := net.DialTimeout("tcp", f.Addr(), time.Second); err == nil {
		t.Errorf("fixture still accepting after Close")
	}
}

func TestServeFixture(t *testing.T) {
	ctx, cancel := context.WithCancel(testCtx(t))
	pr, pw := io.Pipe()
	errc := make(chan error, 1)
	go func() {
		errc <- ServeFixture(ctx, FixtureConfig{}, pw)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, pr)
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if !ok || !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("ServeFixture printed %q", line)
	}
	c := newClient(t)
	if r := do(t, c, ctx, "GET", url+"/plain", nil); r.code != 200 || string(r.body) != "ok" {
		t.Fatalf("GET /plain via ServeFixture: %d %q", r.code, r.body)
	}
	c.Transport.(*http.Transport).CloseIdleConnections()
	cancel()
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("ServeFixture: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ServeFixture did not return after cancel")
	}
	if err := ServeFixture(context.Background(), FixtureConfig{Capacity: -1}, io.Discard); err == nil {
		t.Fatal("ServeFixture with capacity -1 succeeded")
	}
}
