package sched

import (
	"brk/conn"
	"brk/metrics"
)

// Admission, the load integrals, timers and connection replacement.

func (w *worker) setDepth(d uint32) {
	w.depth = d
	for i := range w.owners {
		o := &w.owners[i]
		if uint32(len(o.ring)) >= d {
			continue
		}
		size := uint32(1)
		for size < d {
			size <<= 1
		}
		ring := make([]slot, size)
		for k := o.head; k != o.tail; k++ {
			ring[k&(size-1)] = o.ring[k&o.mask]
		}
		o.ring = ring
		o.mask = size - 1
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

// updateTarget re-evaluates whether o holds its full depth.
func (w *worker) updateTarget(o *owner, now int64) {
	at := o.outstanding() >= w.depth && w.depth > 0
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

// admit fills o's ring up to the depth with new requests.
func (w *worker) admit(o *owner, now int64) {
	for w.admitting && o.pending() < w.depth {
		last := false
		if w.cfg.Connections {
			// One request at a time, written as soon as it is admitted,
			// --requests of them per connection, the last one closing.
			if o.state != stOpen || o.sent >= uint32(w.cfg.PerConn) || int(o.idx) >= w.active {
				break
			}
			o.sent++
			last = o.sent == uint32(w.cfg.PerConn)
		}
		s := &o.ring[o.tail&o.mask]
		s.last = last
		o.sess.Queue(last)
		s.admit = now
		s.deadline = now + w.tmo
		s.start = now
		if o.state != stOpen {
			s.start = -1 // set when the setup ends
		}
		o.tail++
		w.pending++
	}
	w.armTimer(o)
}

// armTimer points o's timer at its oldest unresolved request.
func (w *worker) armTimer(o *owner) {
	if o.state == stBackoff {
		return
	}
	if o.state == stClosing {
		return // its close-wait timer is set by awaitClose
	}
	if o.pending() > 0 {
		w.wheel.Schedule(o.idx, o.ring[o.head&o.mask].deadline)
	} else if o.state == stConnecting || o.state == stHandshaking {
		w.wheel.Schedule(o.idx, o.connStart+w.tmo)
	} else {
		w.wheel.Cancel(o.idx)
	}
}

// resolveHead drops the oldest request with a failure category.
func (w *worker) resolveHead(o *owner, cat metrics.Category) {
	if o.head == o.written && o.written != o.tail {
		o.written++ // never written: keep the ring invariant (the connection is replaced)
	} else if o.head != o.written {
		w.outN--
	}
	o.head++
	w.pending--
	w.rec.Fail(cat, 1)
}

// failAll resolves every unresolved request of o with cat.
func (w *worker) failAll(o *owner, cat metrics.Category) {
	n := o.pending()
	if n == 0 {
		return
	}
	w.outN -= int64(o.outstanding())
	w.pending -= int64(n)
	w.rec.Fail(cat, uint64(n))
	o.head = o.tail
	o.written = o.tail
}

func (w *worker) closeFd(o *owner, reset bool) {
	if o.fd < 0 {
		return
	}
	if o.fd < len(w.byFd) {
		w.byFd[o.fd] = 0
	}
	if reset {
		conn.Reset(o.fd)
	} else {
		conn.Close(o.fd)
	}
	o.fd = -1
	o.tr.Fd = -1
	o.tl = nil
}

// retireConn closes o's connection and queues the owner for a new one
// after the current event batch (so that no stale event of this batch can
// reach a reused descriptor).
func (w *worker) retireConn(o *owner, now int64, reset bool) {
	w.integrate(now)
	w.closeFd(o, reset)
	o.state = stIdle
	if o.atTarget {
		o.atTarget = false
		w.atTarget--
	}
	// Whatever was written is gone with the connection; what remains in
	// the ring is replayed from its first byte.
	w.outN -= int64(o.outstanding())
	o.written = o.head
	if !o.retire {
		o.retire = true
		w.retired = append(w.retired, o.idx)
	}
	w.armTimer(o)
}

func (w *worker) reconnect() {
	if len(w.retired) == 0 {
		return
	}
	now := w.now()
	for _, i := range w.retired {
		o := &w.owners[i]
		o.retire = false
		if o.state == stIdle {
			w.connect(o, now)
		}
	}
	w.retired = w.retired[:0]
}

// fire handles an owner's due timer.
func (w *worker) fire(i int32, at int64) {
	o := &w.owners[i]
	now := w.now()
	if late := now - at; late > w.rec.MaxLatenessNs {
		w.rec.MaxLatenessNs = late
	}
	switch o.state {
	case stBackoff:
		o.state = stIdle
		w.connect(o, now)
	case stConnecting:
		w.setupFailed(o, now, errSetupTimeout, true)
	case stHandshaking:
		// The setup path has the same deadline and reports the timeout.
	case stClosing:
		// The server did not close in time: close with a reset.
		w.retireConn(o, now, true)
	case stOpen:
		if o.pending() == 0 {
			return
		}
		if o.ring[o.head&o.mask].deadline > now {
			w.armTimer(o) // a stale timer: the head changed
			return
		}
		// The oldest request missed its deadline: it and every other
		// expired one count as timeout, unexpired followers as abandoned,
		// and the connection is retired.
		w.integrate(now)
		for o.pending() > 0 && o.ring[o.head&o.mask].deadline <= now {
			w.resolveHead(o, metrics.Timeout)
		}
		w.failAll(o, metrics.Abandoned)
		w.retireConn(o, now, true)
	case stIdle:
		// Requests waiting for a replay connection that never came.
		for o.pending() > 0 && o.ring[o.head&o.mask].deadline <= now {
			w.resolveHead(o, metrics.Timeout)
		}
		w.armTimer(o)
	}
}
