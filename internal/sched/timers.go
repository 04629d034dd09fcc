package sched

import "github.com/brk-bench/brk/internal/metrics"

// Deadlines: each owner has one timer in the wheel, pointed at the deadline
// of its oldest unresolved request, of its setup, of its back-off, or of
// the wait for the server's close.

// fire handles an owner's due timer.
func (w *worker) fire(i int32, at int64) {
	o := &w.owners[i]
	now := w.now()
	if late := now - at; late > w.rec.MaxLatenessNs {
		w.rec.MaxLatenessNs = late
	}
	switch o.state {
	case stBackoff:
		if !w.bulk(now) {
			// A turn's setups are spent (sweep.go): the next tick.
			w.wheel.Schedule(o.idx, now+wheelTick)
			return
		}
		o.state = stIdle
		w.connect(o, now)
	case stConnecting, stGreeting:
		if now-o.connStart < w.tmo {
			// Not the setup's deadline but a replayed request's.
			w.expireInSetup(o, now)
			return
		}
		err := errSetupTimeout
		if o.state == stGreeting {
			err = errGreetingTimeout
		}
		w.setupFailed(o, now, err, true)
	case stHandshaking:
		// The setup path has the same deadline and reports the timeout.
	case stClosing:
		// The server did not close in time: close with a reset.
		w.retireConn(o, now, true)
	case stOpen:
		w.expire(o, now)
	case stIdle:
		// Requests waiting for a replay connection that never came.
		for o.pending() > 0 && o.slot(o.head).deadline <= now {
			w.expireHead(o)
		}
		w.armTimer(o)
	}
}

// expireInSetup resolves as timeout the requests replayed onto o's
// connection whose deadline came while the connection is set up (a
// replay keeps its first deadline; the setup has its own, later one), and
// the setup goes on. Nothing of them was written on this connection, so a
// session that cannot take one request back (HTTP/1.1, which is never in
// the greeting state) is given the rest again.
func (w *worker) expireInSetup(o *owner, now int64) {
	w.integrate(now)
	requeue := false
	for o.pending() > 0 && o.slot(o.head).deadline <= now {
		if !o.cancel(o.head) {
			requeue = true
		}
		w.expireHead(o)
	}
	if requeue && o.state == stConnecting {
		o.sess.Reset()
		for k := o.head; k != o.tail; k++ {
			if s := o.slot(k); s.state != slotDone {
				o.queue(k, s)
			}
		}
	}
	w.updateTarget(o, now)
	w.armTimer(o)
}

// expire resolves o's requests whose deadline passed as timeout. The
// session decides what an expiry costs: a session that cancels one request
// keeps the connection; otherwise (HTTP/1.1) every expired request counts
// as timeout, the unexpired followers as abandoned, and the connection is
// retired.
func (w *worker) expire(o *owner, now int64) {
	w.integrate(now)
	for o.pending() > 0 && o.slot(o.head).deadline <= now {
		if !o.cancel(o.head) {
			for o.pending() > 0 && o.slot(o.head).deadline <= now {
				w.expireHead(o)
			}
			// The followers go with the timeout's connection: the
			// timeout's doing (clientSaturated attributes them).
			w.rec.TimeoutFollowers += uint64(o.pending())
			w.failAll(o, metrics.Abandoned)
			w.retireConn(o, now, true)
			return
		}
		w.expireHead(o)
	}
	w.updateTarget(o, now)
	if w.drained(o, now) {
		return
	}
	w.admit(o, now)
	w.flush(o, now) // cancellations, then what was admitted
}
