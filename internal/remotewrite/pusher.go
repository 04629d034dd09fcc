package remotewrite

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/exp/api/remote"

	"github.com/brk-bench/brk/internal/redact"
)

const (
	// queueSize bounds the samples waiting to be sent: two minutes at the
	// default interval, enough to ride out a receiver that stalls for a
	// while; beyond it new samples are dropped.
	queueSize = 120
	// closeBudget bounds Close's flush.
	closeBudget = time.Second
)

// Pusher sends samples to a remote-write receiver from its own goroutine.
// Its methods are safe for concurrent use.
type Pusher struct {
	cfg    Config
	api    *remote.API
	client *http.Client
	enc    *encoder
	sec    *redact.Secrets // kept out of the errors

	mu     sync.Mutex // guards closed and sends on queue
	closed bool
	queue  chan Sample

	ctx     context.Context // canceled when Close's budget is spent
	cancel  context.CancelFunc
	done    chan struct{} // closed when the sending goroutine has returned
	dropped atomic.Uint64
	sent    atomic.Uint64
	lastErr atomic.Pointer[error]
}

// New validates cfg and starts a Pusher's sending goroutine. It sends
// nothing until the first Push.
func New(cfg Config) (*Pusher, error) {
	// The secrets an error could carry: the URL's password, and the
	// credential a receiver may quote when it refuses it.
	sec := redact.New(cfg.Authorization)
	sec.URL(cfg.URL)
	cfg, err := cfg.validate()
	if err != nil {
		return nil, errors.New(sec.String(err.Error()))
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	client := &http.Client{Transport: quoteTransport{base: authTransport{base: tr, auth: cfg.Authorization}, sec: sec}}
	api, err := remote.NewAPI(cfg.URL,
		remote.WithAPIHTTPClient(client),
		remote.WithAPIPath(""), // cfg.URL is the whole endpoint
		remote.WithAPINoRetryOnRateLimit(),
		// One retry, soon: a later sample carries the same cumulative
		// counters, so persisting with an old one gains little.
		remote.WithAPIBackoff(remote.BackoffConfig{Min: cfg.Interval / 4, Max: cfg.Interval / 4, MaxRetries: 1}),
	)
	if err != nil {
		return nil, fmt.Errorf("prom: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &Pusher{
		cfg: cfg, api: api, client: client, enc: newEncoder(cfg), sec: sec,
		queue: make(chan Sample, queueSize),
		ctx:   ctx, cancel: cancel, done: make(chan struct{}),
	}
	go p.run()
	return p, nil
}

// Push queues s to be sent and returns at once. When the queue is full, or
// after Close, s is dropped and counted in Dropped. A zero s.Time is taken
// as now.
func (p *Pusher) Push(s Sample) {
	s = s.clone()
	if s.Time.IsZero() {
		s.Time = time.Now()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		p.dropped.Add(1)
		return
	}
	select {
	case p.queue <- s:
	default:
		p.dropped.Add(1)
	}
}

// Dropped returns the number of samples pushed but not sent: refused by a
// full queue, in a request that failed, still queued when Close gave up,
// or pushed after Close.
func (p *Pusher) Dropped() uint64 { return p.dropped.Load() }

// Sent returns the number of samples the receiver accepted.
func (p *Pusher) Sent() uint64 { return p.sent.Load() }

// Err returns the last send error, or nil.
func (p *Pusher) Err() error {
	if e := p.lastErr.Load(); e != nil {
		return *e
	}
	return nil
}

// Close stops accepting samples and sends those queued, for at most 1 s
// or until ctx ends, whichever comes first; then it abandons the request in
// flight, counts what was not sent as dropped and returns. It returns
// ctx's error if ctx ended first, an error if the 1 s ran out, or nil.
func (p *Pusher) Close(ctx context.Context) error {
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		close(p.queue)
	}
	p.mu.Unlock()
	budget := time.NewTimer(closeBudget)
	defer budget.Stop()
	var err error
	select {
	case <-p.done:
	case <-budget.C:
		err = errors.New("prom: flush took over 1s; unsent samples dropped")
	case <-ctx.Done():
		err = ctx.Err()
	}
	p.cancel() // aborts the request in flight; the rest are dropped unsent
	<-p.done
	p.client.CloseIdleConnections()
	return err
}

// run sends the queued samples, each time all that have queued up in one
// request, until the queue is closed and drained.
func (p *Pusher) run() {
	defer close(p.done)
	for s := range p.queue {
		batch := []Sample{s}
	more:
		for {
			select {
			case s, ok := <-p.queue:
				if !ok {
					break more
				}
				batch = append(batch, s)
			default:
				break more
			}
		}
		p.send(batch)
	}
}

// send writes batch in one request, bounded by 5 intervals; a failed
// request's samples are dropped.
func (p *Pusher) send(batch []Sample) {
	if p.ctx.Err() != nil {
		p.dropped.Add(uint64(len(batch)))
		return
	}
	req := p.enc.request(batch, p.dropped.Load())
	ctx, cancel := context.WithTimeout(p.ctx, 5*p.cfg.Interval)
	defer cancel()
	if _, err := p.api.Write(ctx, remote.WriteV1MessageType, req); err != nil {
		p.dropped.Add(uint64(len(batch)))
		err = errors.New(p.sec.String("prom: remote write: " + err.Error()))
		p.lastErr.Store(&err)
		return
	}
	p.sent.Add(uint64(len(batch)))
}

// authTransport sets the Authorization header on every request.
type authTransport struct {
	base *http.Transport
	auth string
}

func (t authTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if t.auth != "" {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", t.auth)
	}
	return t.base.RoundTrip(r)
}

func (t authTransport) CloseIdleConnections() { t.base.CloseIdleConnections() }

// errorBodyLimit bounds what is read of a failed response's body.
const errorBodyLimit = 64 << 10

// quoteTransport makes a failed response (not 2xx) fit for an error
// message, which is all the remote-write client uses it for: its body
// becomes the first redact.MaxBody bytes of what the receiver sent,
// secrets redacted, quoted (a receiver may quote the credential it
// refused, or send a page of HTML); its status the code's standard text,
// not the receiver's own words.
type quoteTransport struct {
	base authTransport
	sec  *redact.Secrets
}

func (t quoteTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if err != nil || resp.StatusCode/100 == 2 {
		return resp, err
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, errorBodyLimit))
	resp.Body.Close()
	resp.Body = io.NopCloser(strings.NewReader(t.sec.Body(b)))
	resp.ContentLength = -1
	resp.Status = fmt.Sprintf("%d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
	return resp, nil
}

func (t quoteTransport) CloseIdleConnections() { t.base.CloseIdleConnections() }
