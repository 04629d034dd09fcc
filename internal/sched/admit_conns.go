package sched

// connsPolicy is the connections test's admission: a phase's share of
// concurrent connections is the number of owners in use; each connection
// carries perConn requests one at a time, written as soon as admitted on
// the open connection, the last asking the server to close; then it waits
// for the server's close and its owner opens the next connection.
//
// Admission gates setups, not the requests of a connection set up: one
// dialed during the admission window (committed) carries all its perConn
// requests, even when the window ends during its setup or between its
// requests (the drain waits for them), and no setup starts after the
// window — so no connection is set up to carry nothing, or cut short.
//
// With keepAlive a connection carries requests one at a time for as long
// as the window admits (perConn is not used): the window's end, not a
// count, makes a request its connection's last, so no request can ask
// for the close in advance; once the response to the one in flight at
// the window's end is in, the client closes the connection (as the
// requests test's connections end). A committed connection whose setup
// ends after the window carries one request, asking Connection: close,
// so that none is set up to carry nothing. A connection the server
// closes is replaced while the window admits, as without keepAlive. So a
// phase of N connections holds N requests in flight, one on each, over
// connections opened in that phase.
type connsPolicy struct {
	perConn   uint32
	keepAlive bool
	active    int // owners of this worker in use in the phase
}

func (p *connsPolicy) start(w *worker, share int) {
	p.active = share
	w.ensureOwners(share)
	w.setDepth(1)
}

func (p *connsPolicy) inUse(_ *worker, o *owner) bool { return int(o.idx) < p.active }

func (p *connsPolicy) next(w *worker, o *owner, now int64) (at int64, ok, last bool) {
	if o.state != stOpen || int(o.idx) >= p.active {
		return 0, false, false
	}
	if p.keepAlive {
		if !w.admitting && (!o.committed || o.sent > 0) {
			return 0, false, false
		}
		o.sent++
		return now, true, !w.admitting
	}
	if !w.admitting && !o.committed || o.sent >= p.perConn {
		return 0, false, false
	}
	o.sent++
	return now, true, o.sent == p.perConn
}

func (p *connsPolicy) answered(w *worker, o *owner, closing bool, now int64) bool {
	switch {
	case p.keepAlive && closing:
		w.awaitClose(o, now)
		return false
	case p.keepAlive && !w.admitting:
		// The window's end made this the connection's last response.
		w.retireConn(o, now, false)
		return false
	case p.keepAlive:
		return true
	case closing || o.sent >= p.perConn:
		// The connection's last response (or the server ends it):
		// ending the connection is the server's work.
		w.awaitClose(o, now)
		return false
	case !w.admitting && !o.committed:
		w.retireConn(o, now, false)
		return false
	}
	return true
}

func (*connsPolicy) pump(*worker, int64) int64 { return -1 }

func (*connsPolicy) abort(*worker) {}

func (*connsPolicy) clocked() bool { return false }

func (*connsPolicy) followsLimit() bool { return false }
