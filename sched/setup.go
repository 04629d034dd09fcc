package sched

import (
	"crypto/tls"
	"errors"
	"time"

	"brk/conn"
	"brk/metrics"
)

// Connection setup: nonblocking connect, the TLS handshake on the setup
// path, and what a failed setup counts.

// connect starts a new connection for o, admitting its requests at the
// connect start so that setup counts against the first request's deadline.
func (w *worker) connect(o *owner, now int64) {
	if !w.admitting && o.pending() == 0 || !w.pol.inUse(w, o) {
		o.state = stIdle
		w.wheel.Cancel(o.idx)
		return
	}
	w.dial(o, now)
}

// dial starts o's connection setup.
func (w *worker) dial(o *owner, now int64) {
	o.connStart = now
	o.state = stConnecting
	o.sent = 0
	o.blocked = false
	// A new connection: what is still in the ring (replays) is queued
	// again from its first byte, then the admission fills up.
	w.requeue(o)
	o.sess.Reset()
	for k := o.head; k != o.tail; k++ {
		if s := o.slot(k); s.state != slotDone {
			o.sess.Queue(k, s.last)
		}
	}
	w.admit(o, now)
	fd, err := w.dialer.Dial()
	if err != nil {
		if msg, ok := conn.Exhausted(err); ok {
			w.clientFailure(msg)
			o.state = stIdle
			w.failAll(o, metrics.Abandoned)
			return
		}
		w.setupFailed(o, now, err, false)
		return
	}
	if err := w.p.Add(fd); err != nil {
		conn.Close(fd)
		w.clientFailure("poller: " + err.Error())
		o.state = stIdle
		w.failAll(o, metrics.Abandoned)
		return
	}
	o.fd = fd
	w.mapFd(fd, o.idx)
	w.armTimer(o)
}

func (w *worker) mapFd(fd int, idx int32) {
	for fd >= len(w.byFd) {
		w.byFd = append(w.byFd, make([]int32, len(w.byFd)+64)...)
	}
	w.byFd[fd] = idx + 1
}

func (w *worker) clientFailure(msg string) {
	if w.rec.ClientError == "" {
		w.rec.ClientError = msg
	}
	w.fatal.CompareAndSwap(nil, &msg)
}

// setupFailed ends a failed connect: the first request counts as connect
// (or connect_timeout), the others queued behind it as abandoned — one
// incident. The owner retries after one tick.
func (w *worker) setupFailed(o *owner, now int64, err error, timedOut bool) {
	w.rec.SetupDone(false, timedOut, now-o.connStart)
	if w.rec.SetupError == "" && err != nil {
		w.rec.SetupError = err.Error()
	}
	w.closeFd(o, false)
	cat := metrics.Connect
	if timedOut {
		cat = metrics.ConnectTimeout
	}
	if o.pending() > 0 {
		w.resolveHead(o, cat)
	}
	w.failAll(o, metrics.Abandoned)
	o.state = stBackoff
	w.wheel.Schedule(o.idx, now+wheelTick)
}

// startHandshake hands the connected socket to the setup path. The
// worker ignores the socket's events until the result comes back.
func (w *worker) startHandshake(o *owner, now int64) {
	o.state = stHandshaking
	o.gen++
	w.hsInFlight++
	deadline := w.epoch.Add(time.Duration(o.connStart + w.tmo))
	if o.pending() > 0 {
		if d := o.ring[o.head&o.mask].deadline; d < o.connStart+w.tmo {
			deadline = w.epoch.Add(time.Duration(d))
		}
	}
	go func(idx int32, gen uint32, fd int, cfg *tls.Config) {
		t, err := conn.Handshake(fd, cfg, deadline)
		w.hs <- hsResult{owner: idx, gen: gen, t: t, err: err}
		w.p.Wake()
	}(o.idx, o.gen, o.fd, o.tlsCfg)
}

// handshakeDone continues a connection after its TLS handshake.
func (w *worker) handshakeDone(r hsResult) {
	o := &w.owners[r.owner]
	now := w.now()
	if o.state != stHandshaking || o.gen != r.gen {
		return
	}
	if r.err != nil {
		w.setupFailed(o, now, r.err, r.err == conn.ErrHandshakeTimeout)
		return
	}
	o.tr = r.t
	if r.t.Info.Resumed {
		w.rec.Setups.Resumed++
	}
	i := r.t.Info
	w.lastTLS = metrics.TLSInfo{Version: i.Version, CipherSuite: i.CipherSuite, Group: uint16(i.Group), Resumed: i.Resumed}
	if !w.tlsSeen {
		// The phase reports a negotiation of its own setups when it has
		// some, else the one its connections carry over.
		w.rec.TLS = w.lastTLS
		w.tlsSeen = true
	}
	w.established(o, now)
	w.armTimer(o)
	// Edges that came during the handshake were not served: read and
	// write as if both were reported.
	o.tr.Arm(false)
	if !w.readAll(o, now) {
		return
	}
	w.flush(o, w.now())
}

// established opens the connection for requests: those admitted during
// the setup start their latency now, and the admission fills up (a test
// mode may admit only on an open connection).
func (w *worker) established(o *owner, now int64) {
	o.state = stOpen
	w.rec.SetupDone(true, false, now-o.connStart)
	for k := o.head; k != o.tail; k++ {
		if s := o.slot(k); s.start < 0 {
			s.start = now
		}
	}
	w.admit(o, now)
}

var errSetupTimeout = errors.New("connect timed out")
