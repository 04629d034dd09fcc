package sched

import "github.com/brk-bench/brk/internal/metrics"

// The ring's sizing and its bulk operations: what an incident (a timeout,
// a reset, a failed setup, a protocol fault) resolves at once, and what a
// replaced connection writes again. One request's own path is in
// request.go.

// setDepth sets every owner's depth to d and makes every ring hold it.
func (w *worker) setDepth(d uint32) {
	for i := range w.owners {
		o := &w.owners[i]
		o.depth = d
		if uint32(len(o.ring)) < d {
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

// resolveHead drops the oldest unresolved request with a failure category.
func (w *worker) resolveHead(o *owner, cat metrics.Category) {
	s := o.slot(o.head)
	w.resolve(o, o.head)
	w.failSlot(s, cat)
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
	w.failUnresolved(o, cat)
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
		if s := o.slot(k); s.state == slotWritten && !o.unprocessed(k) {
			w.resolve(o, k)
			w.failTarget(s.target, cat)
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
