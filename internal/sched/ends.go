package sched

import (
	"errors"
	"fmt"

	"github.com/brk-bench/brk/internal/conn"
	"github.com/brk-bench/brk/internal/exchange"
	"github.com/brk-bench/brk/internal/metrics"
)

// How a connection ends — a graceful close, the server's close after the
// last request, an abrupt end, a protocol fault — and how its owner
// replaces it.

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
	n, err := o.tr.Read(w.readBuf())
	switch {
	case n > 0: // with or without the news that the socket is drained
		w.protocolFault(o, now, "unsolicited_response")
	case err == conn.ErrWouldBlock:
	default: // the end, or an error
		w.retireConn(o, now, false)
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
			if s := o.slot(k); s.state == slotWritten && !w.replayFor(s) && !o.unprocessed(k) {
				w.resolve(o, k)
				w.failTarget(s.target, metrics.Abandoned)
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
		if w.raced(o) {
			w.replayRaced(o, now)
			return
		}
		if o.independent() {
			// Each written request failed on its own.
			w.failWritten(o, metrics.Transport)
		} else {
			w.resolveFirstWritten(o, metrics.Transport)
			w.failWritten(o, metrics.Abandoned)
		}
	}
	w.retireConn(o, now, false)
}

// raced reports whether a connection that ended abruptly (a reset, or a
// close without a byte of the response) most likely lost the idle
// timeout's race: an HTTP/1.1 connection that had carried a response,
// nothing read from it since a request was written on it with nothing
// else outstanding, and every written request one that may be replayed
// (GET, HEAD) and has not been replayed for such a race yet. The server
// ended the connection as idle before the request reached it. Go's client
// retries then (a reused connection, a replayable request, no byte of a
// response); a fresh connection that ends so is the server's failure.
func (w *worker) raced(o *owner) bool {
	if !o.reused || !o.silent || o.independent() {
		return false
	}
	for k := o.head; k != o.tail; k++ {
		if s := o.slot(k); s.state == slotWritten && (s.crossed || !w.replayFor(s)) {
			return false
		}
	}
	return true
}

// replayRaced ends a connection that lost the idle timeout's race (raced):
// an idle close, its written requests replayed once on a new connection
// with their original admission and deadline; none fails for it.
func (w *worker) replayRaced(o *owner, now int64) {
	for k := o.head; k != o.tail; k++ {
		if s := o.slot(k); s.state == slotWritten {
			s.crossed = true
			s.state = slotQueued // written again from its first byte
			o.inflight--
			w.outN--
			w.rec.Replayed++
		}
	}
	w.rec.IdleCloses++
	w.updateTarget(o, now)
	w.retireConn(o, now, false)
}

// resolveFirstWritten resolves o's oldest written request with cat.
func (w *worker) resolveFirstWritten(o *owner, cat metrics.Category) {
	for k := o.head; k != o.tail; k++ {
		if s := o.slot(k); s.state == slotWritten && !o.unprocessed(k) {
			w.resolve(o, k)
			w.failSlot(s, cat)
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
	if err == exchange.ErrClosedIdle {
		w.closedIdle(o, now)
		return
	}
	// Truncated, or nothing received: a transport incident.
	w.abrupt(o, now, err)
}

// closedIdle ends a connection whose server said farewell while nothing
// was outstanding on it: a response that answered no request and
// announced the close (an idle timeout's 408). It is counted, closed
// gracefully and replaced; no request fails for it. Requests written
// after the farewell began crossed it: they are replayed, whatever their
// method (the server ended the connection before reading them).
func (w *worker) closedIdle(o *owner, now int64) {
	w.rec.IdleCloses++
	w.retireConn(o, now, false)
}

// crossedClose handles the idle-timeout race: a 408 Request Timeout that
// announces the close, answering a request written on a connection that
// had nothing else outstanding, was most likely sent for the idle
// connection before the request reached the server. It counts as the
// server's idle close, the request is replayed once on a new connection
// with its original admission and deadline whatever its method (a 408
// means the server did not take it), and the connection ends as after
// any response that closes it. A second such 408 for the same request,
// and a 408 on a connection that was busy answering, are status outcomes.
// It reports whether it took the response; the caller has checked the
// status.
func (w *worker) crossedClose(o *owner, s *slot, c *Completion, now int64) bool {
	if !c.Closing || !s.idle || s.crossed {
		return false
	}
	w.rec.IdleCloses++
	w.rec.Replayed++
	w.integrate(now)
	s.crossed = true
	s.state = slotQueued // written again from its first byte
	o.inflight--
	w.outN--
	w.updateTarget(o, now)
	w.pol.answered(w, o, true, now)
	return true
}

func (w *worker) protocolFault(o *owner, now int64, reason string) {
	if o.state == stGreeting {
		// No HTTP/2 server answered: the setup failed.
		w.setupFailed(o, now, errors.New(reason), false)
		return
	}
	if b := o.farewell(); len(b) > 0 && o.tr != nil {
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

func (w *worker) closeFd(o *owner, reset bool) {
	if o.fd < 0 {
		return
	}
	if o.fd < len(w.byFd) {
		w.byFd[o.fd] = 0
	}
	if o.lim != nil && o.lim.counting {
		w.limitEnd(o, w.now())
	}
	if o.fresh {
		w.proved(o) // it ends without a refusal
	}
	w.p.Forget(o.fd)
	if reset {
		conn.Reset(o.fd)
	} else {
		conn.Close(o.fd)
	}
	o.fd = -1
	o.tr, o.armEach, o.buffers, o.inPlace = nil, false, false, false
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

// reconnect connects the owners retired in this loop turn anew.
func (w *worker) reconnect() {
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
