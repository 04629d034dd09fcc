package sched

import (
	"github.com/brk-bench/brk/internal/conn"
	"github.com/brk-bench/brk/internal/exchange"
	"github.com/brk-bench/brk/internal/poller"
)

// Readiness and socket I/O: one event, reads until the transport would
// block (each byte parsed by the connection's session), writes until the
// session's output is taken or the socket is full.

// event handles one readiness notification. Order: finish a connect, then
// read everything buffered (responses free slots and admit followers),
// then write what is admitted in one batch.
func (w *worker) event(ev *poller.Event) {
	fd := int(ev.Fd)
	if fd >= len(w.byFd) || w.byFd[fd] == 0 {
		return
	}
	o := &w.owners[w.byFd[fd]-1]
	now := w.now()
	if o.state == stConnecting {
		if !ev.Writable && !ev.Hup {
			return
		}
		err := conn.Finish(o.fd)
		if err == conn.ErrWouldBlock {
			return
		}
		if err != nil {
			if msg, ok := conn.Exhausted(err); ok {
				w.clientFailure(msg)
			}
			w.setupFailed(o, now, err, conn.IsTimeout(err))
			return
		}
		if w.cfg.TLS != nil {
			w.startHandshake(o, now)
			return
		}
		if t := w.p.Transport(o.fd); t != nil {
			o.useTransport(t)
		} else {
			if o.plain == nil {
				o.plain = new(conn.Plain)
			}
			o.plain.Open(o.fd)
			o.useTransport(o.plain)
		}
		w.opened(o, now)
	}
	if o.tr == nil {
		return // a TLS handshake owns the socket until its result is back
	}
	if o.armEach || ev.Hup {
		o.tr.Arm(ev.Hup)
	}
	if o.state == stClosing {
		if ev.Readable {
			w.readClosing(o, now)
		}
		return
	}
	if o.state != stOpen && o.state != stGreeting {
		return
	}
	if ev.Readable {
		if !w.readAll(o, now) {
			return
		}
		now = w.now()
	}
	if ev.Writable {
		o.blocked = false
	}
	w.flush(o, now)
}

// useTransport makes t o's connection's transport and reads what it
// answers the same on every connection.
func (o *owner) useTransport(t conn.Transport) {
	o.tr = t
	tr := t.Traits()
	o.armEach, o.buffers, o.inPlace = tr.ArmsEachEvent, tr.Buffers, tr.InPlace
}

// readAll reads until the transport would block. It returns false when
// the connection was retired. Bytes an io_uring received are parsed in the
// buffer they landed in (conn.Chunker); others are read into the worker's.
// A read may bring bytes and the news that the socket is drained (a short
// read): they are parsed, and the loop ends without asking again.
func (w *worker) readAll(o *owner, now int64) bool {
	for {
		var b []byte
		var err error
		if o.inPlace {
			b, err = o.tr.(conn.Chunker).Chunk()
		} else {
			var n int
			rb := w.readBuf()
			n, err = o.tr.Read(rb)
			b = rb[:n]
		}
		n := len(b)
		drained := err == conn.ErrWouldBlock
		if drained && n == 0 {
			return true
		}
		if err != nil && !drained {
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
			w.rec.FirstByte()
			if w.cfg.TLS == nil && looksLikeTLS(b) {
				w.setupRejected(o, now, errTLSAnswer)
				return false
			}
			w.proved(o)
		}
		w.rec.BytesRead += uint64(n)
		o.silent = false
		if !w.consume(o, b, w.now()) {
			return false
		}
		if drained {
			return true
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
		if err == exchange.ErrClosedIdle {
			w.closedIdle(o, now)
			return false
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
		if !o.live.Ready {
			return true
		}
		w.established(o, now) // admits
	} else if o.streams != nil {
		// What a multiplexed session read (its peer's SETTINGS) may have
		// changed the stream limit and raised its capacity. A pipeline's
		// capacity never changes: each response admitted its follower.
		w.limitCheck(o, now)
		w.admit(o, now)
	}
	return !w.drained(o, now)
}

// drained ends a connection the session finished with (HTTP/2: after the
// peer's GOAWAY, nothing it may still answer is outstanding): what the
// session still has to say is written, the connection closed, and what
// was not processed replayed. It reports whether the connection ended.
func (w *worker) drained(o *owner, now int64) bool {
	if o.state != stOpen || !o.live.Drained {
		return false
	}
	w.flush(o, now)
	if o.state == stOpen {
		w.closeFollowers(o, now)
	}
	return true
}

// flush writes the session's output until it is empty or the socket is
// full, then flushes what the transport buffered.
func (w *worker) flush(o *owner, now int64) {
	if o.blocked {
		return
	}
	for more := true; more; {
		out := o.sess.Output()
		if len(out) == 0 {
			break
		}
		n, err := o.tr.Write(out)
		if n > 0 {
			var written int
			written, more = o.sess.Wrote(n)
			if written > 0 {
				w.wrote(o, written, now)
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
	if !o.buffers {
		return
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
