package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// maxBodyBytes bounds the request body the fixture reads (and /echo echoes).
const maxBodyBytes = 64 << 20

// FixtureConfig configures the fixture responder.
type FixtureConfig struct {
	// Addr is the listen address; "" means "127.0.0.1:0".
	Addr string
	// Capacity allows at most Capacity requests in service at once
	// (0 = unlimited); the rest wait in FIFO order.
	Capacity int
	// Service is the service time of each request while it holds a
	// capacity slot (used when Capacity > 0 or Service > 0).
	Service time.Duration
	// DelayDist is "", "lognormal:MEDIAN,SIGMA" (e.g. "lognormal:10ms,1.2":
	// a heavy tail) or "uniform:A-B" with Go durations, e.g.
	// "uniform:1ms-10ms": each request's service time is drawn uniformly
	// from [A,B] instead of Service (a slow upstream).
	DelayDist string
	// KeepWorking keeps serving a request whose client has gone: its
	// capacity slot stays taken for the whole service time (a backend that
	// cannot cancel its work), so an overloaded phase leaves work behind
	// for the next. Its response is written to a closed connection.
	KeepWorking bool
	// TLS serves HTTPS (ALPN "h2" and "http/1.1") with an
	// ephemeral self-signed ECDSA P-256 certificate for localhost,
	// 127.0.0.1 and ::1 that is its own CA; see fixture_tls.go.
	TLS bool
	// CAPath, with TLS, is where the certificate's PEM is written so that
	// clients can trust it. Setting it without TLS is an error.
	CAPath string
}

// maxLogNormal bounds a lognormal service time.
const maxLogNormal = 10 * time.Second

// parseLogNormal parses "lognormal:MEDIAN,SIGMA" (a Go duration and a
// positive number): service times whose logarithm is normal, a heavy
// tail. ok is false for another distribution.
func parseLogNormal(s string) (median time.Duration, sigma float64, ok bool, err error) {
	spec, found := strings.CutPrefix(strings.TrimSpace(s), "lognormal:")
	if !found {
		return 0, 0, false, nil
	}
	m, sg, found := strings.Cut(spec, ",")
	if !found {
		return 0, 0, true, fmt.Errorf("bad delay distribution %q: want lognormal:MEDIAN,SIGMA, e.g. lognormal:10ms,1.2", s)
	}
	if median, err = time.ParseDuration(strings.TrimSpace(m)); err != nil || median <= 0 {
		return 0, 0, true, fmt.Errorf("bad delay distribution %q: bad median %q", s, m)
	}
	if sigma, err = strconv.ParseFloat(strings.TrimSpace(sg), 64); err != nil || !(sigma > 0) || sigma > 5 {
		return 0, 0, true, fmt.Errorf("bad delay distribution %q: sigma %q must be above 0 and at most 5", s, sg)
	}
	return median, sigma, true, nil
}

// ParseDelayDist parses "uniform:A-B" (A <= B, both >= 0, Go durations) and
// returns min, max or a one-line error.
func ParseDelayDist(s string) (lo, hi time.Duration, err error) {
	kind, spec, ok := strings.Cut(strings.TrimSpace(s), ":")
	if !ok || kind != "uniform" {
		return 0, 0, fmt.Errorf("bad delay distribution %q: want uniform:A-B, e.g. uniform:1ms-10ms", s)
	}
	a, b, ok := strings.Cut(spec, "-")
	if !ok {
		return 0, 0, fmt.Errorf("bad delay distribution %q: want uniform:A-B, e.g. uniform:1ms-10ms", s)
	}
	lo, err = time.ParseDuration(strings.TrimSpace(a))
	if err != nil {
		return 0, 0, fmt.Errorf("bad delay distribution %q: bad lower bound %q", s, a)
	}
	hi, err = time.ParseDuration(strings.TrimSpace(b))
	if err != nil {
		return 0, 0, fmt.Errorf("bad delay distribution %q: bad upper bound %q", s, b)
	}
	if lo < 0 || hi < 0 {
		return 0, 0, fmt.Errorf("bad delay distribution %q: bounds must be >= 0", s)
	}
	if lo > hi {
		return 0, 0, fmt.Errorf("bad delay distribution %q: lower bound %v exceeds upper bound %v", s, lo, hi)
	}
	return lo, hi, nil
}

// Fixture is a running responder.
type Fixture struct {
	ln  net.Listener
	srv *http.Server
	tls *fixtureTLS // nil: plain HTTP

	sem         chan time.Time // capacity slot tokens, each holding the time its slot frees; nil when Capacity == 0
	service     time.Duration
	distLo      time.Duration
	distHi      time.Duration
	logMedian   time.Duration // lognormal:MEDIAN,SIGMA (logSigma > 0)
	logSigma    float64
	useDist     bool
	keepWorking bool // FixtureConfig.KeepWorking

	quit      chan struct{} // closed by Close: aborts waits and sleeps
	serveDone chan struct{} // closed when srv.Serve returns
	handlers  sync.WaitGroup
	conns     sync.WaitGroup

	requests     atomic.Int64
	inFlight     atomic.Int64
	maxInFlight  atomic.Int64
	inService    atomic.Int64
	maxInService atomic.Int64
	slotsTaken   atomic.Int64 // requests that entered the service section

	closeOnce sync.Once
	closeErr  error
}

// StartFixture validates cfg, listens and serves HTTP/1.1 and HTTP/2
// (prior knowledge on plain connections; ALPN over TLS when cfg.TLS) in background goroutines (net/http). Validation errors are
// one-line messages.
func StartFixture(cfg FixtureConfig) (*Fixture, error) {
	if cfg.Capacity < 0 {
		return nil, fmt.Errorf("fixture: capacity must be >= 0, got %d", cfg.Capacity)
	}
	if cfg.Service < 0 {
		return nil, fmt.Errorf("fixture: service time must be >= 0, got %v", cfg.Service)
	}
	if cfg.CAPath != "" && !cfg.TLS {
		return nil, fmt.Errorf("fixture: a CA output path needs TLS")
	}
	f := &Fixture{
		service:     cfg.Service,
		keepWorking: cfg.KeepWorking,
		quit:        make(chan struct{}),
		serveDone:   make(chan struct{}),
	}
	if cfg.DelayDist != "" {
		if median, sigma, ok, err := parseLogNormal(cfg.DelayDist); ok {
			if err != nil {
				return nil, fmt.Errorf("fixture: %v", err)
			}
			f.logMedian, f.logSigma, f.useDist = median, sigma, true
		} else {
			lo, hi, err := ParseDelayDist(cfg.DelayDist)
			if err != nil {
				return nil, fmt.Errorf("fixture: %v", err)
			}
			f.distLo, f.distHi, f.useDist = lo, hi, true
		}
	}
	if cfg.Capacity > 0 {
		f.sem = make(chan time.Time, cfg.Capacity)
		for range cfg.Capacity {
			f.sem <- time.Time{}
		}
	}
	addr := cfg.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("fixture: %v", err)
	}
	tln, err := f.setupTLS(cfg, ln)
	if err != nil {
		ln.Close()
		return nil, err
	}
	ln = tln
	f.ln = ln

	mux := http.NewServeMux()
	handlers := f.routeHandlers()
	for _, r := range FixtureRoutes {
		mux.HandleFunc(r.Path, handlers[r.Path])
	}
	mux.HandleFunc("/", http.NotFound)

	f.srv = &http.Server{
		Handler:           f.wrap(mux),
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          log.New(io.Discard, "", 0),
		ConnState: func(_ net.Conn, st http.ConnState) {
			switch st {
			case http.StateNew:
				f.conns.Add(1) // called from the Serve goroutine
			case http.StateClosed, http.StateHijacked:
				f.conns.Done()
			}
		},
	}
	// HTTP/2 too: prior knowledge (h2c) on plain connections, ALPN h2
	// over TLS; same routes, capacity and delays.
	var protos http.Protocols
	protos.SetHTTP1(true)
	protos.SetHTTP2(true)
	protos.SetUnencryptedHTTP2(true)
	f.srv.Protocols = &protos
	f.srv.HTTP2 = &http.HTTP2Config{MaxConcurrentStreams: 1000}
	f.srv.SetKeepAlivesEnabled(true)
	go func() {
		defer close(f.serveDone)
		_ = f.srv.Serve(ln) // returns http.ErrServerClosed after Close
	}()
	return f, nil
}

// Addr returns the address actually bound, e.g. "127.0.0.1:PORT".
func (f *Fixture) Addr() string { return f.ln.Addr().String() }

// URL returns "http://" (or "https://" with TLS) + Addr() + path.
func (f *Fixture) URL(path string) string { return f.scheme() + "://" + f.Addr() + path }

// Requests returns the number of requests handled so far.
func (f *Fixture) Requests() int64 { return f.requests.Load() }

// MaxInFlight returns the peak number of requests inside handlers at once.
func (f *Fixture) MaxInFlight() int64 { return f.maxInFlight.Load() }

// MaxInService returns the peak number of requests holding a capacity slot
// (in their service section) at once. With Capacity = K it never exceeds K.
func (f *Fixture) MaxInService() int64 { return f.maxInService.Load() }

// Close stops listening, closes connections, aborts pending waits and
// sleeps, and waits for handlers and connection goroutines to finish.
// It is safe to call more than once.
func (f *Fixture) Close() error {
	f.closeOnce.Do(func() {
		close(f.quit)
		err := f.srv.Close()
		<-f.serveDone
		f.handlers.Wait()
		f.conns.Wait()
		if err != nil && !errors.Is(err, net.ErrClosed) {
			f.closeErr = err
		}
	})
	return f.closeErr
}

// ServeFixture runs the fixture until ctx is done, printing
// "listening on http://ADDR" (https://ADDR with TLS) to w once bound.
// Used by `brk fixture`.
func ServeFixture(ctx context.Context, cfg FixtureConfig, w io.Writer) error {
	f, err := StartFixture(cfg)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(w, "listening on %s\n", f.URL("")); err != nil {
		_ = f.Close()
		return err
	}
	<-ctx.Done()
	return f.Close()
}

func peak(max *atomic.Int64, v int64) {
	for {
		m := max.Load()
		if v <= m || max.CompareAndSwap(m, v) {
			return
		}
	}
}

// serviceTime returns this request's service time.
func (f *Fixture) serviceTime() time.Duration {
	if f.logSigma > 0 {
		d := float64(f.logMedian) * math.Exp(f.logSigma*rand.NormFloat64())
		return time.Duration(min(d, float64(maxLogNormal)))
	}
	if f.useDist {
		if f.distHi == f.distLo {
			return f.distLo
		}
		return f.distLo + time.Duration(rand.Int64N(int64(f.distHi-f.distLo)+1))
	}
	return f.service
}

// sleep waits d, returning false if ctx is done or the fixture closes first.
func (f *Fixture) sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	case <-f.quit:
		return false
	}
}

// serveSlot waits in FIFO order for a capacity slot, holds it for the
// service time and releases it. It reports false if the client went away
// (or the fixture closed) first; a request cancelled while waiting never
// takes a slot, one cancelled in service frees its slot at once.
//
// The slots run on a virtual clock so that timer overshoot (Go timers wake
// up to about a millisecond late) does not accumulate: each slot token
// carries the time its previous service was scheduled to end, and a
// request's service runs from max(arrival, that time) for exactly its
// service time. With a backlog the slot thus serves exactly one request per
// service time, so throughput is K/D and the latency of C outstanding
// requests C·D/K; each response is still late by one timer overshoot, but
// that lateness is not passed on to the requests queued behind it.
func (f *Fixture) serveSlot(ctx context.Context) bool {
	arrival := time.Now()
	var free time.Time
	select {
	case free = <-f.sem:
	case <-ctx.Done():
		return false
	case <-f.quit:
		return false
	}
	f.slotsTaken.Add(1)
	peak(&f.maxInService, f.inService.Add(1))
	start := arrival
	if free.After(start) {
		start = free
	}
	end := start.Add(f.serviceTime())
	ok := f.sleep(ctx, time.Until(end))
	if !ok {
		if now := time.Now(); now.Before(end) {
			end = now // the slot is free from now on
		}
	}
	f.inService.Add(-1)
	f.sem <- end // never blocks: at most cap(f.sem) tokens exist
	return ok
}

// wrap counts the request, reads its body (so the request is fully received
// and r.Context() tracks the client connection), then applies the capacity
// model (see serveSlot): take a FIFO slot, hold it for the service time,
// release it, and only then run h to write the response. A request whose client goes away
// (or that is aborted by Close) while waiting or in service gets no response.
func (f *Fixture) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.handlers.Add(1)
		defer f.handlers.Done()
		f.requests.Add(1)
		peak(&f.maxInFlight, f.inFlight.Add(1))
		defer f.inFlight.Add(-1)

		if r.Body != nil && r.Body != http.NoBody {
			body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
			if err != nil {
				var mbe *http.MaxBytesError
				if errors.As(err, &mbe) {
					http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
				}
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.ContentLength = int64(len(body))
		}

		ctx := r.Context()
		if f.keepWorking {
			ctx = context.WithoutCancel(ctx) // f.quit still ends it
		}
		if f.sem != nil {
			if !f.serveSlot(ctx) {
				return
			}
		} else if f.useDist || f.service > 0 {
			f.slotsTaken.Add(1)
			peak(&f.maxInService, f.inService.Add(1))
			ok := f.sleep(ctx, f.serviceTime())
			f.inService.Add(-1)
			if !ok {
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// FixtureRoute is one of the fixture's routes: its path, and what it
// answers.
type FixtureRoute struct {
	Path, Answers string
}

// FixtureRoutes are the fixture's routes (brk fixture --help lists them);
// every other path is 404.
var FixtureRoutes = []FixtureRoute{
	{"/plain", "ok (text/plain)"},
	{"/hello", "Hello, World!"},
	{"/json", `{"message":"Hello, World!"}`},
	{"/echo", "the request's body"},
	{"/chunked", "Hello, World! in two chunks"},
	{"/delay", "?ms=N: ok after N ms (0..60000)"},
	{"/status", "?code=N: status N (200..599)"},
}

// routeHandlers are the fixture's handlers by FixtureRoutes' paths.
func (f *Fixture) routeHandlers() map[string]http.HandlerFunc {
	return map[string]http.HandlerFunc{
		"/plain": f.handlePlain, "/hello": f.handleHello, "/json": f.handleJSON, "/echo": f.handleEcho,
		"/chunked": f.handleChunked, "/delay": f.handleDelay, "/status": f.handleStatus,
	}
}

func writeBody(w http.ResponseWriter, code int, ctype, body string) {
	h := w.Header()
	h.Set("Content-Type", ctype)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(code)
	_, _ = io.WriteString(w, body)
}

func (f *Fixture) handlePlain(w http.ResponseWriter, _ *http.Request) {
	writeBody(w, http.StatusOK, "text/plain; charset=utf-8", "ok")
}

func (f *Fixture) handleHello(w http.ResponseWriter, _ *http.Request) {
	writeBody(w, http.StatusOK, "text/plain; charset=utf-8", "Hello, World!")
}

func (f *Fixture) handleJSON(w http.ResponseWriter, _ *http.Request) {
	writeBody(w, http.StatusOK, "application/json", `{"message":"Hello, World!"}`)
}

func (f *Fixture) handleEcho(w http.ResponseWriter, r *http.Request) {
	var body []byte
	if r.Body != nil {
		var err error
		body, err = io.ReadAll(r.Body) // already buffered by wrap
		if err != nil {
			return
		}
	}
	h := w.Header()
	h.Set("Content-Type", "application/octet-stream")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

func (f *Fixture) handleChunked(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	_, _ = io.WriteString(w, "Hello, ")
	if fl != nil {
		fl.Flush()
	}
	_, _ = io.WriteString(w, "World!")
	if fl != nil {
		fl.Flush()
	}
}

func (f *Fixture) handleDelay(w http.ResponseWriter, r *http.Request) {
	ms, err := strconv.Atoi(r.URL.Query().Get("ms"))
	if err != nil || ms < 0 || ms > 60000 {
		writeBody(w, http.StatusBadRequest, "text/plain; charset=utf-8", "bad ms: want an integer 0..60000\n")
		return
	}
	if !f.sleep(r.Context(), time.Duration(ms)*time.Millisecond) {
		return
	}
	writeBody(w, http.StatusOK, "text/plain; charset=utf-8", "ok")
}

func (f *Fixture) handleStatus(w http.ResponseWriter, r *http.Request) {
	code, err := strconv.Atoi(r.URL.Query().Get("code"))
	if err != nil || code < 200 || code > 599 {
		writeBody(w, http.StatusBadRequest, "text/plain; charset=utf-8", "bad code: want an integer 200..599\n")
		return
	}
	if code == http.StatusNoContent || code == http.StatusNotModified {
		w.WriteHeader(code) // these statuses carry no body
		return
	}
	writeBody(w, code, "text/plain; charset=utf-8", "ok")
}
