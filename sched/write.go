package sched

import "brk/conn"

// The write side: what the session has to send goes out in as few writes
// as the socket takes.

// flush writes the session's output until it is empty or the socket is
// full, then flushes what the transport buffered.
func (w *worker) flush(o *owner, now int64) {
	if o.blocked {
		return
	}
	for {
		out := o.sess.Output()
		if len(out) == 0 {
			break
		}
		n, err := o.tr.Write(out)
		if n > 0 {
			if upTo, ok := o.sess.Wrote(n); ok {
				w.wrote(o, upTo, now)
			}
		}
		if err == conn.ErrWouldBlock {
			w.block(o)
			return
		}
		if err != nil {
			w.writeFailed(o, now, err)
			return
		}
	}
	pending, err := o.tr.Flush()
	if err != nil {
		w.writeFailed(o, now, err)
		return
	}
	if pending {
		w.block(o)
	}
}

// writeFailed handles a connection the peer ended while we wrote: a server
// may answer and close before it read all we sent (refusing a large
// upload), so what it sent is read and parsed before the connection is
// called broken.
func (w *worker) writeFailed(o *owner, now int64, err error) {
	o.tr.Arm(true)
	if w.readAll(o, now) {
		w.abrupt(o, now, err)
	}
}

// block waits for the next write readiness.
func (w *worker) block(o *owner) {
	o.blocked = true
	w.rec.BlockedWrites++
}

// wrote records requests completely written, up to token upTo.
func (w *worker) wrote(o *owner, upTo uint32, now int64) {
	w.integrate(now)
	w.markWritten(o, upTo, now)
	w.updateTarget(o, now)
}
