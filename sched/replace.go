package sched

import "brk/conn"

// Ending a connection and replacing it.

func (w *worker) closeFd(o *owner, reset bool) {
	if o.fd < 0 {
		return
	}
	if o.fd < len(w.byFd) {
		w.byFd[o.fd] = 0
	}
	if o.fresh {
		w.proved(o) // it ends without a refusal
	}
	if reset {
		conn.Reset(o.fd)
	} else {
		conn.Close(o.fd)
	}
	o.fd = -1
	o.tr = nil
}

// proved records the setup time of a TLS connection that was not refused
// on its first read.
func (w *worker) proved(o *owner) {
	o.fresh = false
	w.rec.SetupTime(o.setupNs)
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
	w.requeue(o)
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
