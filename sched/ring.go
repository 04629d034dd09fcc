package sched

import "brk/metrics"

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
	last     bool // the connection's last request (Connection: close)
}

// Slot states.
const (
	slotQueued  = iota // admitted, not completely written on this connection
	slotWritten        // written, awaiting its response
	slotDone           // resolved (a hole until the head passes it)
)

func (o *owner) slot(tok uint32) *slot { return &o.ring[tok&o.mask] }

// holds reports whether tok is an unresolved request of o.
func (o *owner) holds(tok uint32) bool {
	return tok-o.head < o.tail-o.head && o.slot(tok).state != slotDone
}

// setDepth sets the depth per connection and makes every ring hold it.
func (w *worker) setDepth(d uint32) {
	w.depth = d
	for i := range w.owners {
		if o := &w.owners[i]; uint32(len(o.ring)) < d {
			o.resize(d)
		}
	}
}

// resize copies o's ring into one of at least n slots (a power of two).
func (o *owner) resize(n uint32) {
	size := uint32(1)
	for size < n {
		size <<= 1
	}
	ring := make([]slot, size)
	for k := o.head; k != o.tail; k++ {
		ring[k&(size-1)] = o.ring[k&o.mask]
	}
	o.ring = ring
	o.mask = size - 1
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
	return s
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

// resolveHead drops the oldest unresolved request with a failure category.
func (w *worker) resolveHead(o *owner, cat metrics.Category) {
	w.resolve(o, o.head)
	w.rec.Fail(cat, 1)
}

// expireHead drops the oldest unresolved request as a timeout; one never
// written is also counted as expired unsent.
func (w *worker) expireHead(o *owner) {
	if o.slot(o.head).written == 0 {
		w.rec.ExpiredUnsent++
	}
	w.resolveHead(o, metrics.Timeout)
}

// failAll resolves every unresolved request of o with cat.
func (w *worker) failAll(o *owner, cat metrics.Category) {
	if o.unresolved == 0 {
		return
	}
	w.rec.Fail(cat, uint64(o.unresolved))
	w.outN -= int64(o.inflight)
	w.pending -= int64(o.unresolved)
	o.unresolved, o.inflight = 0, 0
	o.head = o.tail
}

// failWritten resolves the written requests of o with cat.
// Those the session knows were not processed (HTTP/2: above a GOAWAY's
// last stream id) stay, to be replayed.
func (w *worker) failWritten(o *owner, cat metrics.Category) {
	if o.inflight == 0 {
		return
	}
	var n uint64
	for k := o.head; k != o.tail && o.inflight > 0; k++ {
		if o.slot(k).state == slotWritten && !o.sess.Unprocessed(k) {
			w.resolve(o, k)
			n++
		}
	}
	w.rec.Fail(cat, n)
}

// requeue marks what is still unresolved as not written, to be written
// again from its first byte on o's next connection.
func (w *worker) requeue(o *owner) {
	w.outN -= int64(o.inflight)
	w.rec.Replayed += uint64(o.inflight)
	o.inflight = 0
	for k := o.head; k != o.tail; k++ {
		if s := o.slot(k); s.state == slotWritten {
			s.state = slotQueued
		}
	}
	o.wpos = o.head
}

// markWritten records that the session has written every request up to
// token upTo on o's connection.
func (w *worker) markWritten(o *owner, upTo uint32, now int64) {
	k := o.wpos
	if int32(o.head-k) > 0 {
		k = o.head
	}
	for ; int32(upTo-k) >= 0; k++ {
		s := o.slot(k)
		if s.state != slotQueued {
			continue
		}
		s.state = slotWritten
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
	o.wpos = upTo + 1
}
