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
type connsPolicy struct {
	perConn uint32
	active  int // owners of this worker in use in the phase
}

func (p *connsPolicy) start(w *worker, share int) {
	p.active = share
	w.ensureOwners(share)
	w.setDepth(1)
}

func (p *connsPolicy) inUse(_ *worker, o *owner) bool { return int(o.idx) < p.active }

func (p *connsPolicy) next(w *worker, o *owner, now int64) (at int64, ok, last bool) {
	if !w.admitting && !o.committed || o.state != stOpen || o.sent >= p.perConn || int(o.idx) >= p.active {
		return 0, false, false
	}
	o.sent++
	return now, true, o.sent == p.perConn
}

func (p *connsPolicy) answered(w *worker, o *owner, closing bool, now int64) bool {
	switch {
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
