package sched

import (
	"brk/conn"
)

// The write side: admitted requests go out in as few writes as the socket
// takes.

// flush writes admitted requests in as few writes as the socket takes.
func (w *worker) flush(o *owner, now int64) {
	if o.tl != nil {
		w.flushTLS(o, now)
		return
	}
	for o.written != o.tail && !o.blocked {
		n, err := o.tr.Write(o.sess.Output())
		if err == conn.ErrWouldBlock {
			o.blocked = true
			w.rec.BlockedWrites++
			return
		}
		if err != nil {
			w.abrupt(o, now, err)
			return
		}
		w.wrote(o, o.sess.Wrote(n), now)
	}
}

// flushTLS writes ciphertext left from earlier writes, then encrypts every
// admitted request in one Write (one record per 16 KiB); what the socket
// does not take waits in the transport for the next write readiness.
func (w *worker) flushTLS(o *owner, now int64) {
	if o.blocked {
		return
	}
	pending, err := o.tl.Flush()
	if err != nil {
		w.abrupt(o, now, err)
		return
	}
	if pending {
		o.blocked = true
		w.rec.BlockedWrites++
		return
	}
	for o.written != o.tail {
		n, err := o.tl.Write(o.sess.Output())
		if err != nil {
			w.abrupt(o, now, err)
			return
		}
		w.wrote(o, o.sess.Wrote(n), now)
	}
	if pending, _ := o.tl.Flush(); pending {
		o.blocked = true
		w.rec.BlockedWrites++
	}
}

// wrote advances o's write position by done completely written requests.
func (w *worker) wrote(o *owner, done int, now int64) {
	if done == 0 {
		return
	}
	w.integrate(now)
	for ; done > 0; done-- {
		s := &o.ring[o.written&o.mask]
		if d := now - s.start; d > w.rec.MaxSendDelayNs {
			w.rec.MaxSendDelayNs = d
		}
		o.written++
		w.outN++
	}
	w.updateTarget(o, now)
}
