package sched

import "github.com/brk-bench/brk/metrics"

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
		o.state = stIdle
		w.connect(o, now)
	case stConnecting:
		w.setupFailed(o, now, errSetupTimeout, true)
	case stHandshaking:
		// The setup path has the same deadline and reports the timeout.
	case stGreeting:
		w.setupFailed(o, now, errGreetingTimeout, true)
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

// expire resolves o's requests whose deadline passed as timeout. The
// session decides what an expiry costs: a session that cancels one request
// keeps the connection; otherwise (HTTP/1.1) every expired request counts
// as timeout, the unexpired followers as abandoned, and the connection is
// retired.
func (w *worker) expire(o *owner, now int64) {
	w.integrate(now)
	for o.pending() > 0 && o.slot(o.head).deadline <= now {
		if !o.sess.Cancel(o.head) {
			for o.pending() > 0 && o.slot(o.head).deadline <= now {
				w.expireHead(o)
			}
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
