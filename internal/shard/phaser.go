package shard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/brk-bench/brk/internal/judge"
)

// Config is one shard's part in a sharded run.
type Config struct {
	Spec Spec
	// Addr is the coordinator's address: shard 0 listens there (or on
	// Listen), the others dial it. Empty: no coordinator; every shard runs
	// every phase on the absolute boundaries from StartAt, with no
	// exchange, and returns its own measurement (a merge judges later).
	Addr   string
	Listen string
	// Token is the shared secret (BRK_TOKEN); it must not be empty.
	Token string
	// PlanHash names the whole plan; shards with different plans are
	// refused.
	PlanHash string
	// StartAt is when phase 0 starts on every shard; zero: the
	// coordinator picks it, Lead after the last shard joined.
	StartAt time.Time
	Lead    time.Duration
	// Tolerance is how late a shard may start a phase (its clock, the
	// scheduler) before the run fails closed.
	Tolerance time.Duration
	// Allowance follows every phase's admission before the next phase's
	// boundary: the drain, the exchange with the coordinator. Phase n
	// starts at StartAt + n × (Plan.Phase + Allowance).
	Allowance time.Duration
	// JoinTimeout bounds the wait for every shard to join when StartAt
	// is zero (with StartAt: until StartAt + Tolerance).
	JoinTimeout time.Duration
	// Plan is the whole plan, as Judge judges it.
	Plan judge.Plan
	// Local runs this shard's part of a phase (the engine); LocalSpec
	// maps the whole phase to this shard's part (nil: the same spec).
	Local     judge.Phaser
	LocalSpec func(judge.PhaseSpec) judge.PhaseSpec

	stall func(n int) // tests: a process stall before phase n starts
}

// Lateness is one shard's phase start lateness, and its worker threads.
type Lateness struct {
	Index   int
	Start   time.Duration // phase 0
	Max     time.Duration // over the phases it reported
	Threads int           // its worker threads, as its last measurement counted them (0: none yet)
}

// Lockstep is a judge.Phaser for one shard of a coordinated run: it runs the
// local phase at its absolute boundary, exchanges measurements with the
// coordinator and returns the merged measurement of every shard. Any
// failure of the exchange (a shard lost, late or silent) is an error, so
// the Ramp ends the run inconclusive, never with a server verdict.
type Lockstep struct {
	cfg    Config
	n      int
	start  time.Time // zero until known
	local  *judge.Measurement
	late   []time.Duration
	failed error
	events chan event
	done   chan struct{} // closed by Close: readers stop posting
	closed bool

	// shard 0
	ln      net.Listener
	mu      sync.Mutex
	peers   map[int]*peer
	started bool
	joined  int
	pending map[int]*message
	peerLat map[int][]time.Duration
	peerThr map[int]int

	free bool // no coordinator (Config.Addr empty)

	// the others
	conn net.Conn
	wmu  sync.Mutex
	in   *opener // the coordinator's frames
	out  *sealer // this shard's, under wmu
}

type peer struct {
	index int
	conn  net.Conn
	mu    sync.Mutex // held while writing; out is under it
	out   *sealer
	in    *opener // the peer's reader's alone
}

// event is a message or a lost connection (err) from shard index.
type event struct {
	index int
	m     *message
	err   error
}

const (
	handshakeTimeout = 5 * time.Second
	writeTimeout     = 5 * time.Second
	helloLimit       = 4 << 10
	msgJoined        = "joined" // internal: a shard passed the handshake
)

// Join starts this shard's part: shard 0 listens for the others; another
// shard dials the coordinator (retrying until the join deadline) and
// authenticates. It returns once shard 0 listens or the shard is
// welcomed.
func Join(ctx context.Context, cfg Config) (*Lockstep, error) {
	if err := cfg.Spec.Valid(); err != nil {
		return nil, err
	}
	if cfg.Token == "" {
		return nil, errors.New("the shared token is empty (set BRK_TOKEN)")
	}
	if cfg.Tolerance <= 0 {
		cfg.Tolerance = time.Second
	}
	if cfg.Lead <= 0 {
		cfg.Lead = 2 * time.Second
	}
	if cfg.JoinTimeout <= 0 {
		cfg.JoinTimeout = 2 * time.Minute
	}
	if cfg.Allowance <= 0 {
		cfg.Allowance = time.Second
	}
	if cfg.LocalSpec == nil {
		cfg.LocalSpec = func(s judge.PhaseSpec) judge.PhaseSpec { return s }
	}
	if !cfg.StartAt.IsZero() {
		cfg.StartAt = time.UnixMilli(cfg.StartAt.UnixMilli()) // the wire's precision, no monotonic reading
	}
	p := &Lockstep{cfg: cfg, events: make(chan event, 4*cfg.Spec.Count+16), done: make(chan struct{})}
	if cfg.Addr == "" && cfg.Listen == "" {
		if cfg.StartAt.IsZero() {
			return nil, errors.New("a shard without a coordinator needs its start time (Config.StartAt)")
		}
		p.free = true
		return p, nil
	}
	if cfg.Spec.Index == 0 {
		addr := cfg.Listen
		if addr == "" {
			addr = cfg.Addr
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, fmt.Errorf("coordinator: %v", err)
		}
		p.ln, p.peers, p.peerLat, p.peerThr = ln, map[int]*peer{}, map[int][]time.Duration{}, map[int]int{}
		go p.accept()
		return p, nil
	}
	if err := p.dial(ctx); err != nil {
		return nil, err
	}
	return p, nil
}

// Addr is the coordinator's listening address (shard 0).
func (p *Lockstep) Addr() string {
	if p.ln == nil {
		return ""
	}
	return p.ln.Addr().String()
}

// StartAt is when phase 0 started (zero before it is known).
func (p *Lockstep) StartAt() time.Time { return p.start }

// Local is this shard's own measurement of the last phase it ran.
func (p *Lockstep) Local() *judge.Measurement { return p.local }

// Lateness is this shard's start lateness of each phase it started.
func (p *Lockstep) Lateness() []time.Duration { return p.late }

// Shards is every shard's start lateness as shard 0 knows it (shard 0
// only; others: their own).
func (p *Lockstep) Shards() []Lateness {
	own := summarize(p.cfg.Spec.Index, p.late)
	if p.local != nil && p.local.Stats != nil {
		own.Threads = p.local.Stats.Workers
	}
	out := []Lateness{own}
	if p.ln != nil {
		for i := 1; i < p.cfg.Spec.Count; i++ {
			l := summarize(i, p.peerLat[i])
			l.Threads = p.peerThr[i]
			out = append(out, l)
		}
	}
	return out
}

func summarize(i int, ls []time.Duration) Lateness {
	l := Lateness{Index: i}
	for k, v := range ls {
		if k == 0 {
			l.Start = v
		}
		l.Max = max(l.Max, v)
	}
	return l
}

// Close ends the connections (a shard that leaves mid-run makes the
// coordinator stop the others).
func (p *Lockstep) Close() {
	if p.closed {
		return
	}
	p.closed = true
	close(p.done)
	if p.ln != nil {
		p.ln.Close()
		p.mu.Lock()
		p.started = true // no more joins
		for _, q := range p.peers {
			q.conn.Close()
		}
		p.mu.Unlock()
	}
	if p.conn != nil {
		p.conn.Close()
	}
}

func (p *Lockstep) slot() time.Duration { return p.cfg.Plan.Phase + p.cfg.Allowance }

func (p *Lockstep) boundary(n int) time.Time { return p.start.Add(time.Duration(n) * p.slot()) }

// RunPhase runs phase n of the whole plan in step with every shard.
func (p *Lockstep) RunPhase(ctx context.Context, spec judge.PhaseSpec) (*judge.Measurement, error) {
	n := p.n
	p.n++
	if p.failed != nil {
		return nil, p.failed
	}
	p.pending = map[int]*message{}
	if n == 0 {
		if p.free {
			p.start = p.cfg.StartAt
		} else if err := p.begin(ctx); err != nil {
			return nil, p.fail(err, true)
		}
	}
	at := p.boundary(n)
	if err := p.sleepUntil(ctx, at, n, spec.Level); err != nil {
		return nil, p.fail(err, true)
	}
	if p.cfg.stall != nil {
		p.cfg.stall(n)
	}
	late := max(time.Since(at), 0)
	p.late = append(p.late, late)
	if ctx.Err() == nil && late > p.cfg.Tolerance {
		return nil, p.fail(fmt.Errorf("shard %d started phase %d %s late (tolerance %s): the shards are not in step",
			p.cfg.Spec.Index, n, late.Round(time.Millisecond), p.cfg.Tolerance), true)
	}
	local, err := p.runLocal(ctx, spec, n)
	if err != nil {
		return p.cut(ctx, local, p.fail(err, true))
	}
	p.local = local
	if local.Interrupted {
		// This box was interrupted: it ends Interrupted, the others
		// inconclusive.
		p.fail(fmt.Errorf("shard %d was interrupted", p.cfg.Spec.Index), true)
		return local, nil
	}
	var merged *judge.Measurement
	switch {
	case p.free:
		return local, nil
	case p.ln != nil:
		merged, err = p.merge(n, spec.Level, local, late)
	default:
		merged, err = p.exchange(n, spec.Level, local, late)
	}
	if err != nil {
		return p.cut(ctx, local, err)
	}
	return merged, nil
}

// cut is a phase that ran here but cannot be merged (a shard lost,
// silent or stopped during it): this shard's own measurement, marked so
// that it is judged inconclusive with err's reason naming the shard,
// rather than an error that leaves the phase out of the report. Nothing
// ran here (local nil): the error.
func (p *Lockstep) cut(ctx context.Context, local *judge.Measurement, err error) (*judge.Measurement, error) {
	if local == nil || local.Stats == nil {
		return nil, err
	}
	m := *local
	if ctx.Err() == nil {
		m.Interrupted = false // the stop cut it short here, not a signal
	}
	m.ClientError = err.Error()
	p.local = &m
	return &m, nil
}

// fail ends the coordinated run: shard 0 tells every shard to stop,
// another shard tells the coordinator it cannot go on (when notify).
func (p *Lockstep) fail(err error, notify bool) error {
	if p.failed != nil {
		return p.failed
	}
	p.failed = err
	var s stopped
	if !notify || p.free || errors.As(err, &s) {
		return err
	}
	if p.ln != nil {
		p.broadcast(&message{Type: msgStop, Phase: p.n - 1, Reason: err.Error()})
	} else {
		p.send(&message{Type: msgAbort, Index: p.cfg.Spec.Index, Reason: err.Error()})
	}
	return err
}

// sleepUntil waits for the phase boundary, watching the other shards. An
// interrupt ends the wait: the local phase then ends at once, interrupted.
func (p *Lockstep) sleepUntil(ctx context.Context, at time.Time, n, depth int) error {
	t := time.NewTimer(time.Until(at))
	defer t.Stop()
	for {
		select {
		case <-t.C:
			return nil
		case <-ctx.Done():
			return nil
		case ev := <-p.events:
			if err := p.handle(ev, n, depth); err != nil {
				return err
			}
		}
	}
}

// runLocal runs this shard's part of the phase; a stop from the
// coordinator (or a lost shard, at the coordinator) cuts it short.
func (p *Lockstep) runLocal(ctx context.Context, spec judge.PhaseSpec, n int) (*judge.Measurement, error) {
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type done struct {
		m   *judge.Measurement
		err error
	}
	ch := make(chan done, 1)
	go func() {
		m, err := p.cfg.Local.RunPhase(lctx, p.cfg.LocalSpec(spec))
		ch <- done{m, err}
	}()
	var stopErr error
	for {
		select {
		case d := <-ch:
			if stopErr != nil {
				return d.m, stopErr // the phase as far as it ran: cut
			}
			return d.m, d.err
		case ev := <-p.events:
			if stopErr != nil {
				continue
			}
			if err := p.handle(ev, n, spec.Level); err != nil {
				stopErr = err
				cancel() // the engine abandons what is outstanding after its grace
			}
		}
	}
}

// handle takes one event outside the exchange: a report for the current
// phase is kept (shard 0); anything else ends the run.
func (p *Lockstep) handle(ev event, n, depth int) error {
	if p.ln == nil {
		var fe *FrameError
		switch {
		case errors.As(ev.err, &fe):
			return fmt.Errorf("shard %d: %v: the run is inconclusive", p.cfg.Spec.Index, fe)
		case ev.err != nil:
			return fmt.Errorf("lost the coordinator: %v", ev.err)
		case ev.m.Type == msgStop:
			return stopped{ev.m.Reason}
		}
		return fmt.Errorf("the coordinator sent an unexpected %s message", ev.m.Type)
	}
	var fe *FrameError
	switch {
	case errors.As(ev.err, &fe):
		return fmt.Errorf("%v: the run is inconclusive", fe)
	case ev.err != nil:
		return fmt.Errorf("shard %d was lost: %v", ev.index, ev.err)
	case ev.m.Type == msgJoined:
		p.joined++
		return nil
	case ev.m.Type == msgAbort:
		return fmt.Errorf("shard %d stopped: %s", ev.index, trim(ev.m.Reason))
	case ev.m.Type == msgReport && ev.m.Phase == n && ev.m.Depth == depth && p.pending[ev.index] == nil:
		if err := checkMeasurement(ev.m.M); err != nil {
			return fmt.Errorf("shard %d sent a bad measurement: %v", ev.index, err)
		}
		p.pending[ev.index] = ev.m
		p.peerLat[ev.index] = append(p.peerLat[ev.index], time.Duration(ev.m.Lateness))
		p.peerThr[ev.index] = ev.m.M.Stats.Workers // its worker threads: one recorder each
		return nil
	}
	return fmt.Errorf("shard %d sent an unexpected %s message (phase %d, depth %d; expected phase %d, depth %d)",
		ev.index, ev.m.Type, ev.m.Phase, ev.m.Depth, n, depth)
}

// stopped is the coordinator's stop: not sent back.
type stopped struct{ reason string }

func (s stopped) Error() string { return s.reason }

func trim(s string) string {
	if len(s) > 512 {
		s = s[:512] + "…"
	}
	return strings.ToValidUTF8(s, "?")
}

func checkMeasurement(m *judge.Measurement) error {
	switch {
	case m == nil:
		return errors.New("no measurement")
	case m.Stats == nil || m.Stats.Latency == nil || m.Stats.SetupLatency == nil:
		return errors.New("no stats")
	case m.Boxes < 1:
		return errors.New("no boxes")
	}
	return nil
}

// Merge merges measurements of the same phase in order (shard i is
// ms[i]); a shard whose own client fell behind its share of the rate
// test's schedule by more than judge.MaxShortfall is named in the merge
// (Behind), for the unfulfilled rule judged on the merge.
func Merge(ms []*judge.Measurement) *judge.Measurement {
	out := &judge.Measurement{}
	for _, m := range ms {
		out.Merge(m)
	}
	out.Behind = nil
	for i, m := range ms {
		if f := m.Shortfall(); f > judge.MaxShortfall {
			out.Behind = append(out.Behind, judge.Behind{Shard: i, Shortfall: f})
		}
	}
	return out
}

// merge (shard 0) waits for every shard's report of phase n until the
// exchange deadline, merges, judges and tells every shard.
func (p *Lockstep) merge(n, depth int, local *judge.Measurement, late time.Duration) (*judge.Measurement, error) {
	margin := min(p.cfg.Allowance/4, 250*time.Millisecond)
	deadline := p.boundary(n + 1).Add(-margin)
	t := time.NewTimer(max(time.Until(deadline), 0))
	defer t.Stop()
	for len(p.pending) < p.cfg.Spec.Count-1 {
		select {
		case ev := <-p.events:
			if err := p.handle(ev, n, depth); err != nil {
				return nil, p.fail(err, true)
			}
			continue
		default:
		}
		select {
		case ev := <-p.events:
			if err := p.handle(ev, n, depth); err != nil {
				return nil, p.fail(err, true)
			}
		case <-t.C:
			var missing []string
			for i := 1; i < p.cfg.Spec.Count; i++ {
				if p.pending[i] == nil {
					missing = append(missing, fmt.Sprint(i))
				}
			}
			return nil, p.fail(fmt.Errorf("shard %s did not report phase %d in time: the phase is inconclusive",
				strings.Join(missing, ", "), n), true)
		}
	}
	ms := []*judge.Measurement{local}
	idx := make([]int, 0, len(p.pending))
	for i := range p.pending {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	for _, i := range idx {
		ms = append(ms, p.pending[i].M)
	}
	merged := Merge(ms)
	j := judge.Judge(merged, p.cfg.Plan, n, depth)
	p.broadcast(&message{Type: msgResult, Phase: n, Depth: depth, M: merged, Stop: j.Stop, Verdict: j.Verdict, Reason: j.Reason})
	return merged, nil
}

// exchange (shards 1..N-1) sends this shard's measurement and waits for
// the coordinator's merged phase.
func (p *Lockstep) exchange(n, depth int, local *judge.Measurement, late time.Duration) (*judge.Measurement, error) {
	if err := p.send(&message{Type: msgReport, Index: p.cfg.Spec.Index, Phase: n, Depth: depth, Lateness: int64(late), M: local}); err != nil {
		return nil, p.fail(fmt.Errorf("lost the coordinator: %v", err), false)
	}
	deadline := p.boundary(n + 1).Add(p.cfg.Tolerance)
	t := time.NewTimer(max(time.Until(deadline), 0))
	defer t.Stop()
	for {
		select {
		case <-t.C:
			return nil, p.fail(fmt.Errorf("the coordinator did not answer phase %d in time", n), true)
		case ev := <-p.events:
			if ev.err == nil && ev.m.Type == msgResult {
				if ev.m.Phase != n || ev.m.Depth != depth {
					return nil, p.fail(fmt.Errorf("the coordinator answered phase %d at depth %d, expected %d at %d", ev.m.Phase, ev.m.Depth, n, depth), true)
				}
				if err := checkMeasurement(ev.m.M); err != nil {
					return nil, p.fail(fmt.Errorf("the coordinator sent a bad measurement: %v", err), true)
				}
				j := judge.Judge(ev.m.M, p.cfg.Plan, n, depth)
				if j.Stop != ev.m.Stop || j.Verdict != ev.m.Verdict {
					return nil, p.fail(fmt.Errorf("phase %d: the coordinator's verdict (%s) differs from this shard's (%s) on the same measurement", n, ev.m.Reason, j.Reason), true)
				}
				return ev.m.M, nil
			}
			return nil, p.fail(p.handle(ev, n, depth), true)
		}
	}
}

func (p *Lockstep) broadcast(m *message) {
	p.mu.Lock()
	peers := make([]*peer, 0, len(p.peers))
	for _, q := range p.peers {
		peers = append(peers, q)
	}
	p.mu.Unlock()
	var wg sync.WaitGroup
	for _, q := range peers {
		wg.Add(1)
		go func(q *peer) {
			defer wg.Done()
			q.mu.Lock()
			defer q.mu.Unlock()
			if writeSealed(q.conn, q.out, m, writeTimeout) != nil {
				q.conn.Close() // its reader reports the loss
			}
		}(q)
	}
	wg.Wait()
}

func (p *Lockstep) send(m *message) error {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	return writeSealed(p.conn, p.out, m, writeTimeout)
}

// post hands a reader's event to the run, unless the run has closed.
func (p *Lockstep) post(ev event) {
	select {
	case p.events <- ev:
	case <-p.done:
	}
}

// Free reports whether this shard runs without a coordinator.
func (p *Lockstep) Free() bool { return p.free }
