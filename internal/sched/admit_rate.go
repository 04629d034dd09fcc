package sched

import (
	"math/rand/v2"

	"github.com/brk-bench/brk/internal/metrics"
)

// ratePolicy is the rate test's admission: an open model. Arrivals come
// due on a schedule against the clock, whatever the server does; each
// worker takes every n-th arrival of the phase's one schedule (schedule),
// wakes for its next due arrival (pump's return bounds the poll timeout)
// and takes up every arrival due when it wakes. A due arrival takes a free
// slot on an open connection (at most depth outstanding per connection);
// when none is free it waits in the worker's FIFO queue and is written as
// soon as a slot frees. Either way its latency and its deadline start at
// its scheduled instant: backlog is latency. An arrival still waiting at
// its deadline is a timeout, counted as expired unsent too; the queue is
// therefore bounded by rate × timeout.
type ratePolicy struct {
	depth uint32
	seed  uint64
	sched schedule

	q      []int64 // waiting arrivals' scheduled instants, a FIFO ring
	qt     []uint8 // their targets in a request mix (Mix.At of their index)
	qh, qn int

	// Owners with a free slot and nothing to put in it, FIFO (so that
	// arrivals go round the connections); isIdle marks membership.
	idle   []int32
	ih, in int
	isIdle []bool
}

func newRatePolicy(l RateLoad, threads, id int) *ratePolicy {
	p := &ratePolicy{depth: uint32(max(l.Depth, 1)), seed: l.Seed}
	// Worker id of this engine's threads takes arrivals k = shard +
	// shards × (id + threads × j): the shard's arrivals k ≡ ShardIndex
	// (mod Shards), dealt round the shard's workers.
	shards := uint64(max(l.Shards, 1))
	p.sched.id = uint64(l.ShardIndex) + shards*uint64(id)
	p.sched.n = shards * uint64(max(threads, 1))
	if l.Poisson {
		p.sched.pcg = new(rand.PCG)
		p.sched.rng = rand.New(p.sched.pcg)
	}
	return p
}

func (p *ratePolicy) start(w *worker, rate int) {
	w.setDepth(p.depth)
	p.sched.reset(w.schedStart, w.schedEnd, rate, p.seed, uint64(w.phase))
	// The queue holds at most this worker's share of rate × timeout
	// arrivals (a Poisson burst may exceed it: the ring then doubles).
	want := int(float64(rate)/float64(p.sched.n)*w.cfg.Timeout.Seconds()*1.25) + 64
	if len(p.q) < want {
		p.resizeQueue(want)
	}
	if len(p.idle) < len(w.owners) {
		p.idle = make([]int32, len(w.owners))
		p.isIdle = make([]bool, len(w.owners))
		p.ih, p.in = 0, 0
	}
}

func (*ratePolicy) inUse(*worker, *owner) bool { return true }

// next gives o the oldest waiting arrival, if any is still within its
// deadline; otherwise o joins the idle owners.
func (p *ratePolicy) next(w *worker, o *owner, now int64) (at int64, ok, last bool) {
	if o.state != stOpen {
		return 0, false, false
	}
	for p.qn > 0 {
		t := p.qt[p.qh]
		at := p.pop(w)
		if at+w.tmo <= now {
			p.expired(w, at, t, now)
			continue
		}
		w.mix.next = int(t)
		return at, true, false
	}
	if !p.isIdle[o.idx] {
		p.isIdle[o.idx] = true
		p.idle[(p.ih+p.in)%len(p.idle)] = o.idx
		p.in++
	}
	return 0, false, false
}

func (*ratePolicy) answered(w *worker, o *owner, closing bool, now int64) bool {
	if closing {
		w.closeFollowers(o, now)
		return false
	}
	return true
}

// pump takes up the arrivals due at now (within the admission window),
// expires waiting arrivals past their deadline, and hands what waits to
// idle connections. It returns the next due arrival or waiting deadline.
func (p *ratePolicy) pump(w *worker, now int64) int64 {
	s := &p.sched
	if w.admitting {
		var n uint64
		for s.due < s.end && s.due <= now {
			w.rec.Late(now - s.due)
			p.push(s.due, w.arrivalTarget(s.k))
			w.pending++
			n++
			s.advance()
		}
		if n > 0 {
			w.rec.Arrived(n)
		}
	}
	for p.qn > 0 && p.q[p.qh]+w.tmo <= now {
		t := p.qt[p.qh]
		p.expired(w, p.pop(w), t, now)
	}
	for p.qn > 0 && p.in > 0 {
		i := p.idle[p.ih]
		p.ih = (p.ih + 1) % len(p.idle)
		p.in--
		p.isIdle[i] = false
		if o := &w.owners[i]; o.state == stOpen {
			w.admit(o, now)
			w.flush(o, now)
		}
	}
	next := int64(-1)
	if w.admitting && s.due < s.end {
		next = s.due
	}
	if p.qn > 0 {
		if d := p.q[p.qh] + w.tmo; next < 0 || d < next {
			next = d
		}
	}
	return next
}

// chargeSetup counts a failed setup's first request: the oldest waiting
// arrival (one past its deadline is a timeout, as pump would count it),
// the one a connection would have taken first. An outage thus counts
// connect failures in the rate test too, as a failed setup does in the
// requests test; the arrivals behind it wait on for another connection.
func (p *ratePolicy) chargeSetup(w *worker, cat metrics.Category, now int64) {
	for p.qn > 0 {
		t := p.qt[p.qh]
		at := p.pop(w)
		if at+w.tmo <= now {
			p.expired(w, at, t, now)
			continue
		}
		w.rec.Fail(cat, 1)
		w.failTarget(t, cat)
		return
	}
}

// abort abandons the waiting arrivals.
func (*ratePolicy) clocked() bool { return true }

func (*ratePolicy) followsLimit() bool { return false }

func (p *ratePolicy) abort(w *worker) {
	w.rec.Fail(metrics.Abandoned, uint64(p.qn))
	for i := 0; i < p.qn && w.rec.Targets != nil; i++ {
		w.failTarget(p.qt[(p.qh+i)%len(p.q)], metrics.Abandoned)
	}
	w.pending -= int64(p.qn)
	p.qh, p.qn = 0, 0
}

// expired counts a waiting arrival whose deadline passed before a slot
// took it: a timeout, never written.
func (p *ratePolicy) expired(w *worker, at int64, t uint8, now int64) {
	w.rec.Fail(metrics.Timeout, 1)
	w.failTarget(t, metrics.Timeout)
	w.rec.ExpiredUnsent++
	if late := now - (at + w.tmo); late > w.rec.MaxLatenessNs {
		w.rec.MaxLatenessNs = late
	}
}

func (p *ratePolicy) push(at int64, t uint8) {
	if p.qn == len(p.q) {
		p.resizeQueue(2 * len(p.q))
	}
	k := (p.qh + p.qn) % len(p.q)
	p.q[k], p.qt[k] = at, t
	p.qn++
}

func (p *ratePolicy) pop(w *worker) int64 {
	at := p.q[p.qh]
	p.qh = (p.qh + 1) % len(p.q)
	p.qn--
	w.pending--
	return at
}

// resizeQueue copies the waiting arrivals into a ring of n (>= qn).
func (p *ratePolicy) resizeQueue(n int) {
	q, qt := make([]int64, max(n, 16)), make([]uint8, max(n, 16))
	for i := 0; i < p.qn; i++ {
		q[i], qt[i] = p.q[(p.qh+i)%len(p.q)], p.qt[(p.qh+i)%len(p.q)]
	}
	p.q, p.qt, p.qh = q, qt, 0
}

// schedule is one worker's share of a phase's arrivals: arrivals id,
// id+n, id+2n, … of the one schedule every worker (of every shard)
// computes alike, so that the workers' union is exactly that schedule. Uniform: arrival k is due
// at t0 + k/rate. Poisson: the gaps are exponential with mean 1/rate,
// drawn from one generator seeded with (seed, phase) that every worker
// replays, keeping its own arrivals.
type schedule struct {
	t0, end int64 // admission window; nothing due at or after end is scheduled
	rate    int64
	id, n   uint64
	k       uint64 // the schedule's index of this worker's next arrival
	due     int64  // its instant
	// Poisson only (rng nil: uniform).
	pcg   *rand.PCG
	rng   *rand.Rand
	clock float64 // ns from t0 to arrival k
}

func (s *schedule) reset(t0, end int64, rate int, seed, phase uint64) {
	s.t0, s.end, s.rate = t0, end, int64(max(rate, 1))
	s.k = s.id
	if s.rng == nil {
		s.due = s.t0 + int64(s.k)*1e9/s.rate
		return
	}
	s.pcg.Seed(seed, phase)
	s.clock = 0
	for i := uint64(0); i <= s.id; i++ {
		s.clock += s.gap()
	}
	s.due = s.t0 + int64(s.clock)
}

func (s *schedule) gap() float64 { return s.rng.ExpFloat64() * 1e9 / float64(s.rate) }

// advance moves to this worker's next arrival.
func (s *schedule) advance() {
	s.k += s.n
	if s.rng == nil {
		s.due = s.t0 + int64(s.k)*1e9/s.rate
		return
	}
	for i := uint64(0); i < s.n; i++ {
		s.clock += s.gap()
	}
	s.due = s.t0 + int64(s.clock)
}
