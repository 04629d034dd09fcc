package sched

import (
	"errors"
	"fmt"

	"brk/conn"
	"brk/metrics"
)

// The read side: responses, their outcomes, and how a connection ends
// (a graceful close, EOF, reset, protocol fault).

// readAll reads until the transport would block. It returns false when
// the connection was retired.
func (w *worker) readAll(o *owner, now int64) bool {
	for {
		n, err := o.tr.Read(w.rbuf)
		if err == conn.ErrWouldBlock {
			return true
		}
		if err != nil {
			if o.fresh && conn.IsRemoteAlert(err) {
				w.setupRejected(o, now, err)
			} else {
				w.abrupt(o, now, err)
			}
			return false
		}
		if n == 0 {
			w.eof(o, now)
			return false
		}
		if o.fresh {
			if w.cfg.TLS == nil && looksLikeTLS(w.rbuf[:n]) {
				w.setupRejected(o, now, errTLSAnswer)
				return false
			}
			w.proved(o)
		}
		if !w.consume(o, w.rbuf[:n], w.now()) {
			return false
		}
	}
}

// consume parses response bytes. It returns false when the connection was
// retired.
func (w *worker) consume(o *owner, b []byte, now int64) bool {
	for len(b) > 0 {
		n, comps, err := o.sess.Parse(b, w.comps[:0])
		b = b[n:]
		for i := range comps {
			if !w.complete(o, &comps[i], now) {
				return false
			}
		}
		if err != nil {
			w.protocolFault(o, now, err.Error())
			return false
		}
		if n == 0 && len(comps) == 0 {
			break // the session wants more bytes than this
		}
	}
	if o.state == stGreeting {
		if !o.sess.Ready() {
			return true
		}
		w.established(o, now) // admits
	} else {
		// A response may have raised the session's capacity.
		w.admit(o, now)
	}
	return !w.drained(o, now)
}

// drained ends a connection the session finished with (HTTP/2: after the
// peer's GOAWAY, nothing it may still answer is outstanding): what the
// session still has to say is written, the connection closed, and what
// was not processed replayed. It reports whether the connection ended.
func (w *worker) drained(o *owner, now int64) bool {
	if o.state != stOpen || !o.sess.Drained() {
		return false
	}
	w.flush(o, now)
	if o.state == stOpen {
		w.closeFollowers(o, now)
	}
	return true
}

// complete resolves the request a response answers with its outcome. It
// returns false when the connection was retired.
func (w *worker) complete(o *owner, c *Completion, now int64) bool {
	if !o.holds(c.Token) {
		w.protocolFault(o, now, "response to an unknown request")
		return false
	}
	s := o.slot(c.Token)
	if c.Reset {
		// The server reset this request alone: no response.
		w.integrate(now)
		w.resolve(o, c.Token)
		w.rec.Fail(metrics.Transport, 1)
		w.updateTarget(o, now)
		w.admit(o, now)
		return true
	}
	if s.state == slotQueued {
		// An early response to a request still being written (a server
		// refusing an upload): the server has it, so it counts as
		// written from now.
		w.wrote(o, c.Token, now)
	}
	w.rec.Response(now - s.start)
	w.rec.Statuses.Add(c.Status)
	w.rec.Served(now - s.written)
	switch code := c.Status; {
	case now > s.deadline:
		w.rec.Fail(metrics.Timeout, 1)
	case code < 0 || code >= len(w.status) || !w.status[code]:
		w.rec.Fail(metrics.Status, 1)
	case !c.BodyOK:
		w.rec.Fail(metrics.Body, 1)
		if len(c.Sample) > 0 {
			w.rec.BodySample(c.Sample)
		}
	default:
		w.rec.Success()
	}
	w.integrate(now)
	w.resolve(o, c.Token)
	w.updateTarget(o, now)
	if !w.pol.answered(w, o, c.Closing, now) {
		return false
	}
	w.admit(o, now)
	return true
}

// awaitClose waits (up to the timeout) for the server to close a
// connection whose last response was read, so that the closing handshake's
// TIME_WAIT stays on the server and not on the client's ports.
func (w *worker) awaitClose(o *owner, now int64) {
	// A session that ends the connection itself (HTTP/2: GOAWAY after
	// the last response) closes it at once.
	if w.drained(o, now) {
		return
	}
	o.state = stClosing
	w.wheel.Schedule(o.idx, now+w.tmo)
	o.tr.Arm(false)
	w.readClosing(o, now)
}

// readClosing reads a closing connection: EOF ends it; bytes after the
// last response are a protocol fault.
func (w *worker) readClosing(o *owner, now int64) {
	n, err := o.tr.Read(w.rbuf)
	switch {
	case err == conn.ErrWouldBlock:
	case err != nil || n == 0:
		w.retireConn(o, now, false)
	default:
		w.protocolFault(o, now, "unsolicited_response")
	}
}

// closeFollowers ends a connection the server closed gracefully after a
// response. Written requests that may not have been processed are
// replayed on the next connection with their original admission and
// deadline: those the session knows were not processed (whatever the
// method), or any of an idempotent method (RFC 9112 §9.3.2). The others
// count as abandoned. Requests never written are always replayed.
func (w *worker) closeFollowers(o *owner, now int64) {
	if o.inflight > 0 {
		w.integrate(now)
		var lost uint64
		for k := o.head; k != o.tail && o.inflight > 0; k++ {
			if o.slot(k).state == slotWritten && !w.cfg.Replay && !o.sess.Unprocessed(k) {
				w.resolve(o, k)
				lost++
			}
		}
		w.rec.Fail(metrics.Abandoned, lost)
	}
	w.retireConn(o, now, false)
}

// abrupt handles a connection that ended without a graceful close while
// requests were outstanding: the first counts as transport, the other
// written ones as abandoned — one incident.
func (w *worker) abrupt(o *owner, now int64, err error) {
	if o.state == stGreeting {
		w.setupFailed(o, now, fmt.Errorf("the server closed the connection before its HTTP/2 SETTINGS: %v", err), false)
		return
	}
	if o.outstanding() > 0 {
		w.integrate(now)
		if o.sess.Independent() {
			// Each written request failed on its own.
			w.failWritten(o, metrics.Transport)
		} else {
			w.resolveFirstWritten(o, metrics.Transport)
			w.failWritten(o, metrics.Abandoned)
		}
	}
	w.retireConn(o, now, false)
}

// resolveFirstWritten resolves o's oldest written request with cat.
func (w *worker) resolveFirstWritten(o *owner, cat metrics.Category) {
	for k := o.head; k != o.tail; k++ {
		if o.slot(k).state == slotWritten && !o.sess.Unprocessed(k) {
			w.resolve(o, k)
			w.rec.Fail(cat, 1)
			return
		}
	}
}

func (w *worker) eof(o *owner, now int64) {
	comps, err := o.sess.EOF(w.comps[:0])
	for i := range comps {
		// A close-delimited body ends at EOF; the connection ends with it.
		if !w.complete(o, &comps[i], now) {
			return
		}
	}
	if len(comps) > 0 {
		w.closeFollowers(o, now)
		return
	}
	// Truncated, or nothing received: a transport incident.
	w.abrupt(o, now, err)
}

func (w *worker) protocolFault(o *owner, now int64, reason string) {
	if o.state == stGreeting {
		// No HTTP/2 server answered: the setup failed.
		w.setupFailed(o, now, errors.New(reason), false)
		return
	}
	if b := o.sess.Farewell(); len(b) > 0 && o.tr != nil {
		// Best effort: the GOAWAY naming the error, then the reset.
		if _, err := o.tr.Write(b); err == nil {
			o.tr.Flush()
		}
	}
	if w.rec.ProtocolReason == "" {
		w.rec.ProtocolReason = reason
	}
	w.integrate(now)
	switch {
	case o.outstanding() > 0:
		w.resolveFirstWritten(o, metrics.Protocol)
		w.failWritten(o, metrics.Abandoned)
	case o.pending() > 0:
		// Nothing was asked on this connection yet: the incident has no
		// request to charge, but the first admitted one cannot trust it.
		w.resolveHead(o, metrics.Protocol)
	default:
		w.rec.ProtocolUnattributed++
	}
	w.retireConn(o, now, true)
}
