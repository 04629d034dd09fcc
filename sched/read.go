package sched

import (
	"brk/conn"
	"brk/metrics"
)

// The read side: responses in order, their outcomes, and how a
// connection ends (Connection: close, EOF, reset, protocol fault).

// read reads into the worker's buffer through o's transport.
func (w *worker) read(o *owner) (int, error) {
	if o.tl != nil {
		return o.tl.Read(w.rbuf)
	}
	return o.tr.Read(w.rbuf)
}

// readAll reads until the socket is drained. It returns false when the
// connection was retired.
func (w *worker) readAll(o *owner, now int64, hup bool) bool {
	for {
		n, err := w.read(o)
		if err == conn.ErrWouldBlock {
			return true
		}
		if err != nil {
			w.abrupt(o, now, err)
			return false
		}
		if n == 0 {
			w.eof(o, now)
			return false
		}
		if !w.consume(o, w.rbuf[:n], w.now()) {
			return false
		}
		if n < len(w.rbuf) && !hup && o.tl == nil {
			// A short read drained the socket. A FIN or RST that arrived
			// with the data would have been reported in this event (hup);
			// one that arrives later raises a new edge.
			return true
		}
	}
}

// consume parses response bytes. It returns false when the connection was
// retired.
func (w *worker) consume(o *owner, b []byte, now int64) bool {
	for len(b) > 0 {
		if o.head == o.written {
			// Bytes nobody asked for: a response before any request or
			// more responses than requests.
			w.protocolFault(o, now, "unsolicited_response")
			return false
		}
		n, done, err := o.sess.Parse(b)
		if err != nil {
			w.protocolFault(o, now, err.Error())
			return false
		}
		b = b[n:]
		if !done {
			return true
		}
		if !w.complete(o, now) {
			return false
		}
	}
	return true
}

// complete resolves the oldest written request with its parsed response.
func (w *worker) complete(o *owner, now int64) bool {
	s := &o.ring[o.head&o.mask]
	w.rec.Response(now - s.start)
	switch code := o.sess.Status(); {
	case now > s.deadline:
		w.rec.Fail(metrics.Timeout, 1)
	case code < 0 || code >= len(w.status) || !w.status[code]:
		w.rec.Fail(metrics.Status, 1)
	case !o.sess.BodyOK():
		w.rec.Fail(metrics.Body, 1)
	default:
		w.rec.Success()
	}
	w.integrate(now)
	o.head++
	w.outN--
	w.pending--
	closing := o.sess.Closing()
	w.updateTarget(o, now)
	if w.cfg.Connections {
		switch {
		case closing || o.sent >= uint32(w.cfg.PerConn):
			// The connection's last response (or the server ends it):
			// ending the connection is the server's work.
			w.awaitClose(o, now)
			return false
		case !w.admitting:
			w.retireConn(o, now, false)
			return false
		}
	} else if closing {
		w.closeFollowers(o, now)
		return false
	}
	w.admit(o, now)
	return true
}

// awaitClose waits (up to the timeout) for the server to close a
// connection whose last response was read, so that the closing handshake's
// TIME_WAIT stays on the server and not on the client's ports.
func (w *worker) awaitClose(o *owner, now int64) {
	o.state = stClosing
	w.wheel.Schedule(o.idx, now+w.tmo)
	if o.tl != nil {
		o.tl.Arm(false)
	}
	w.readClosing(o, now)
}

// readClosing reads a closing connection: EOF ends it; bytes after the
// last response are a protocol fault.
func (w *worker) readClosing(o *owner, now int64) {
	n, err := w.read(o)
	switch {
	case err == conn.ErrWouldBlock:
	case err != nil || n == 0:
		w.retireConn(o, now, false)
	default:
		w.protocolFault(o, now, "unsolicited_response")
	}
}

// closeFollowers ends a connection the server closed after a response:
// written followers of a replayable method are replayed on the next
// connection with their original admission and deadline (RFC 9112
// §9.3.2); others count as abandoned.
func (w *worker) closeFollowers(o *owner, now int64) {
	if !w.cfg.Replay {
		n := o.outstanding()
		if n > 0 {
			w.integrate(now)
			w.outN -= int64(n)
			w.pending -= int64(n)
			o.head = o.written
			w.rec.Fail(metrics.Abandoned, uint64(n))
		}
	}
	w.retireConn(o, now, false)
}

// abrupt handles a connection that ended without Connection: close while
// requests were outstanding: the first counts as transport, the followers
// as abandoned — one incident.
func (w *worker) abrupt(o *owner, now int64, err error) {
	if o.outstanding() > 0 {
		w.integrate(now)
		w.resolveHead(o, metrics.Transport)
		w.failWritten(o, metrics.Abandoned)
	}
	w.retireConn(o, now, false)
}

// failWritten resolves the written requests of o with cat.
func (w *worker) failWritten(o *owner, cat metrics.Category) {
	n := o.outstanding()
	if n == 0 {
		return
	}
	w.outN -= int64(n)
	w.pending -= int64(n)
	o.head = o.written
	w.rec.Fail(cat, uint64(n))
}

func (w *worker) eof(o *owner, now int64) {
	if o.outstanding() > 0 {
		done, err := o.sess.EOF()
		if done {
			// A close-delimited body ends at EOF.
			if w.complete(o, now) {
				w.closeFollowers(o, now)
			}
			return
		}
		// Truncated, or nothing received: a transport incident.
		w.abrupt(o, now, err)
		return
	}
	w.retireConn(o, now, false)
}

func (w *worker) protocolFault(o *owner, now int64, reason string) {
	if w.rec.ProtocolReason == "" {
		w.rec.ProtocolReason = reason
	}
	w.integrate(now)
	if o.outstanding() > 0 {
		w.resolveHead(o, metrics.Protocol)
		w.failWritten(o, metrics.Abandoned)
	} else {
		// Nothing was asked on this connection yet: the incident has no
		// request to charge, but the first admitted one cannot trust it.
		if o.pending() > 0 {
			w.resolveHead(o, metrics.Protocol)
		} else {
			w.rec.ProtocolUnattributed++
		}
	}
	w.retireConn(o, now, true)
}
