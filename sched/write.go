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
		n, err := o.tr.Write(w.pendingBytes(o))
		if err == conn.ErrWouldBlock {
			o.blocked = true
			w.rec.BlockedWrites++
			return
		}
		if err != nil {
			w.abrupt(o, now, err)
			return
		}
		w.wrote(o, n, now)
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
		n, err := o.tl.Write(w.pendingBytes(o))
		if err != nil {
			w.abrupt(o, now, err)
			return
		}
		w.wrote(o, n, now)
	}
	if pending, _ := o.tl.Flush(); pending {
		o.blocked = true
		w.rec.BlockedWrites++
	}
}

// reqBytes is the encoding of o's next unwritten request.
func (w *worker) reqBytes(o *owner) (buf []byte, size int) {
	if o.ring[o.written&o.mask].last {
		return w.cbuf, len(w.cbuf)
	}
	return w.wbuf, w.reqLen
}

// pendingBytes returns the bytes of o's admitted, unwritten requests from
// the per-worker buffer (every request of a target is the same bytes, so
// the buffer holds the request repeated; a connections-test connection has
// at most one request in flight).
func (w *worker) pendingBytes(o *owner) []byte {
	buf, size := w.reqBytes(o)
	left := int(o.tail-o.written)*size - o.partial
	chunk := buf[o.partial:]
	if len(chunk) > left {
		chunk = chunk[:left]
	}
	return chunk
}

// wrote advances o's write position by n bytes of requests.
func (w *worker) wrote(o *owner, n int, now int64) {
	_, size := w.reqBytes(o)
	total := o.partial + n
	done := total / size
	o.partial = total % size
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
