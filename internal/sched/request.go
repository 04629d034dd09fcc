package sched

import (
	"github.com/brk-bench/brk/internal/metrics"
)

// The life of one request on its owner's ring — admitted (with the
// owner's timer pointed at its deadline), written, answered, resolved —
// and the load integrals it moves. This file and io.go are the request
// path; the test mode's policy (admit_*.go) decides what is admitted and
// what follows a response.

// An owner's ring holds its admitted requests in admission order, which is
// their deadline order too (a replay keeps its original deadline and stays
// ahead of later admissions), so the owner's timer always points at the
// head. A request is identified by its token: its ring position, counted
// without wrapping. Responses may resolve requests out of order; a
// resolved request in the middle is a hole that the head skips once it
// gets there.

// slot is one admitted request on its owner's ring.
type slot struct {
	admit    int64 // admission instant (ns since the engine's epoch)
	deadline int64 // admit + timeout (connect start for a first request)
	start    int64 // latency start: admission, or end of setup for requests admitted before it
	written  int64 // when first completely written (0: never yet)
	state    uint8
	last     bool  // the connection's last request (Connection: close)
	target   uint8 // the request mix's target (mix_engine.go; 0 without one)
	idle     bool  // written on a connection with nothing else outstanding
	crossed  bool  // replayed once already after an idle close crossed it (ends.go)
}

// Slot states.
const (
	slotQueued  = iota // admitted, not completely written on this connection
	slotWritten        // written, awaiting its response
	slotDone           // resolved (a hole until the head passes it)
)

func (o *owner) slot(tok uint32) *slot { return &o.ring[tok&o.mask] }

// queuedThrough is how many requests of o from the next to write on its
// connection through tok are still queued (unwritten).
func (o *owner) queuedThrough(tok uint32) int {
	k := o.wpos
	if int32(o.head-k) > 0 {
		k = o.head
	}
	n := 0
	for ; int32(tok-k) >= 0; k++ {
		if o.slot(k).state == slotQueued {
			n++
		}
	}
	return n
}

// holds reports whether tok is an unresolved request of o.
func (o *owner) holds(tok uint32) bool {
	return tok-o.head < o.tail-o.head && o.slot(tok).state != slotDone
}

// admit fills o's ring with new requests up to the depth, the session's
// capacity and what the test mode's policy allows (admission stops with
// the phase's admission window in the policy's own terms).
func (w *worker) admit(o *owner, now int64) {
	limit := o.depth
	if c := o.live.Capacity; c >= 0 && uint32(c) < limit {
		limit = uint32(c)
	}
	for o.unresolved < limit {
		at, ok, last := w.pol.next(w, o, now)
		if !ok {
			break
		}
		s := w.push(o)
		s.last = last
		s.target = w.pickTarget()
		s.admit = at
		s.deadline = at + w.tmo
		s.start = at
		if o.state != stOpen {
			s.start = -1 // set when the setup ends
		}
		o.queue(o.tail-1, s)
	}
	w.armTimer(o)
}

// push admits one request at the tail and returns its slot. Holes can make
// the span from head to tail exceed the depth: the ring then doubles (a
// rare, amortised growth; HTTP/1.1 never leaves holes).
func (w *worker) push(o *owner) *slot {
	if o.tail-o.head == uint32(len(o.ring)) {
		o.resize(2 * uint32(len(o.ring)))
	}
	s := o.slot(o.tail)
	o.tail++
	o.unresolved++
	w.pending++
	s.state = slotQueued
	s.written = 0
	s.crossed = false
	return s
}

// wrote records that the session completely wrote its next n queued
// requests on o's connection.
func (w *worker) wrote(o *owner, n int, now int64) {
	w.integrate(now)
	w.markWritten(o, n, now)
	w.updateTarget(o, now)
}

// markWritten records that the session has written its next n queued
// requests on o's connection: they are written in the order they were
// queued, so they are the next n slots still queued from wpos on.
func (w *worker) markWritten(o *owner, n int, now int64) {
	k := o.wpos
	if int32(o.head-k) > 0 {
		k = o.head
	}
	for ; n > 0 && k != o.tail; k++ {
		s := o.slot(k)
		if s.state != slotQueued {
			continue
		}
		n--
		s.state = slotWritten
		s.idle = o.inflight == 0
		if s.idle {
			o.silent = true
		}
		o.inflight++
		w.outN++
		if d := now - s.start; d > w.rec.MaxSendDelayNs {
			w.rec.MaxSendDelayNs = d
		}
		if s.written == 0 {
			// A replay on a new connection is not written twice.
			s.written = now
			w.rec.Wrote(now - s.admit)
		}
	}
	o.wpos = k
}

// complete resolves the request a response answers with its outcome: a
// multiplexed session's names it; a pipeline's answers the oldest
// unresolved, the ring's head. It returns false when the connection was
// retired.
func (w *worker) complete(o *owner, c *Completion, now int64) bool {
	tok := o.head
	if o.streams != nil {
		tok = c.Token
	}
	if !o.holds(tok) {
		w.protocolFault(o, now, "response to an unknown request")
		return false
	}
	s := o.slot(tok)
	if c.Reset {
		// The server reset this request alone: no response.
		w.integrate(now)
		w.resolve(o, tok)
		w.failSlot(s, metrics.Transport)
		w.updateTarget(o, now)
		w.admit(o, now)
		return true
	}
	if s.state == slotQueued {
		// An early response to a request still being written (a server
		// refusing an upload): the server has it, so it counts as
		// written from now, with every request queued before it.
		w.wrote(o, o.queuedThrough(tok), now)
	}
	if c.Status == 408 && w.crossedClose(o, s, c, now) {
		return false
	}
	a := metrics.Answer{NowNs: now, LatencyNs: now - s.start, ServedNs: now - s.written, Code: c.Status, Target: int(s.target)}
	a.OK, a.Failed = w.outcome(s, c, now)
	w.rec.Answered(&a)
	if a.Failed == metrics.Body && !a.OK && len(c.Sample) > 0 {
		w.rec.BodySample(c.Sample)
	}
	w.integrate(now)
	w.resolve(o, tok)
	o.reused = true
	w.updateTarget(o, now)
	if !w.pol.answered(w, o, c.Closing, now) {
		return false
	}
	w.admit(o, now)
	return true
}

// outcome judges a complete response to s's request: a success, or the
// category of its failure (late, a status its target does not accept, a
// body that is not the expected one).
func (w *worker) outcome(s *slot, c *Completion, now int64) (ok bool, failed metrics.Category) {
	switch code, status := c.Status, w.statusFor(s); {
	case now > s.deadline:
		return false, metrics.Timeout
	case code < 0 || code >= len(status) || !status[code]:
		return false, metrics.Status
	case !c.BodyOK:
		return false, metrics.Body
	}
	return true, 0
}

// resolve takes request tok off o's books; the caller records its outcome.
func (w *worker) resolve(o *owner, tok uint32) {
	s := o.slot(tok)
	if s.state == slotWritten {
		o.inflight--
		w.outN--
	}
	s.state = slotDone
	o.unresolved--
	w.pending--
	for o.head != o.tail && o.slot(o.head).state == slotDone {
		o.head++
	}
}

// integrate advances the load integrals to now.
func (w *worker) integrate(now int64) {
	if w.admitting {
		dt := now - w.last
		if dt > 0 {
			w.rec.OutstandingNs += uint64(w.outN * dt)
			w.rec.AtTargetNs += uint64(w.atTarget * dt)
		}
	}
	w.last = now
}

// updateTarget re-evaluates whether o holds its full depth (its own
// target: an owner with none never is at it).
func (w *worker) updateTarget(o *owner, now int64) {
	at := o.outstanding() >= o.depth && o.depth > 0
	if at == o.atTarget {
		return
	}
	w.integrate(now)
	o.atTarget = at
	if at {
		w.atTarget++
		if w.admitting && o.reached != w.phase+1 {
			o.reached = w.phase + 1
			w.rec.ReachedOnce++
			w.live.Reached.Add(1)
		}
	} else {
		w.atTarget--
	}
}

// armTimer points o's timer at its oldest unresolved request.
func (w *worker) armTimer(o *owner) {
	if o.state == stBackoff {
		return
	}
	if o.state == stClosing {
		return // its close-wait timer is set by awaitClose
	}
	setup := o.state == stConnecting || o.state == stHandshaking || o.state == stGreeting
	switch {
	case setup && o.pending() > 0:
		// The setup's deadline or an earlier one of a replayed request.
		w.wheel.Schedule(o.idx, min(o.slot(o.head).deadline, o.connStart+w.tmo))
	case setup:
		w.wheel.Schedule(o.idx, o.connStart+w.tmo)
	case o.pending() > 0:
		w.wheel.Schedule(o.idx, o.slot(o.head).deadline)
	default:
		w.wheel.Cancel(o.idx)
	}
}
