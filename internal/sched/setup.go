package sched

import (
	"crypto/tls"
	"errors"
	"fmt"
	"time"

	"github.com/brk-bench/brk/internal/conn"
	"github.com/brk-bench/brk/internal/judge"
	"github.com/brk-bench/brk/internal/metrics"
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
	o.reused, o.silent = false, false
	o.committed = w.admitting
	o.blocked = false
	// A new connection: what is still in the ring (replays) is queued
	// again from its first byte, then the admission fills up.
	w.requeue(o)
	o.sess.Reset()
	for k := o.head; k != o.tail; k++ {
		if s := o.slot(k); s.state != slotDone {
			o.queue(k, s)
		}
	}
	w.admit(o, now)
	w.rec.SetupStarted()
	w.setups++
	fd, err := w.dialer.Dial()
	if err != nil {
		if msg, ok := conn.Exhausted(err); ok {
			w.clientSetupFailure(o, now, msg)
			return
		}
		w.setupFailed(o, now, err, false)
		return
	}
	if err := w.p.Add(fd); err != nil {
		conn.Close(fd)
		w.clientSetupFailure(o, now, "poller: "+err.Error())
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

// clientSetupFailure ends a setup the client itself could not make (out
// of descriptors or ports): the run ends inconclusive.
func (w *worker) clientSetupFailure(o *owner, now int64, msg string) {
	w.clientFailure(msg)
	w.rec.SetupDone(false, false, 0)
	w.setups--
	o.state = stIdle
	w.failAll(o, metrics.Abandoned)
}

func (w *worker) clientFailure(msg string) {
	if w.rec.ClientError == "" {
		w.rec.ClientError = msg
	}
	w.fatal.CompareAndSwap(nil, &msg)
}

// setupFailed ends a failed connect: the first request counts as connect
// (or connect_timeout), the others queued behind it as abandoned — one
// incident. A policy that admits only on an open connection (the rate
// test) charges the failure to what waits for one. The owner retries
// after one tick.
func (w *worker) setupFailed(o *owner, now int64, err error, timedOut bool) {
	w.rec.SetupDone(false, timedOut, now-o.connStart)
	w.setups--
	if w.rec.SetupError == "" && err != nil {
		w.rec.SetupError = judge.SetupErrorText(err, w.cfg.Names.Filled())
	}
	w.closeFd(o, false)
	cat := metrics.Connect
	if timedOut {
		cat = metrics.ConnectTimeout
	}
	if o.pending() > 0 {
		w.resolveHead(o, cat)
	} else if c, ok := w.pol.(setupCharger); ok {
		c.chargeSetup(w, cat, now) // the rate test: the arrival it would have carried
	}
	if timedOut {
		// The followers go with the connect's timeout: its doing
		// (clientSaturated attributes them).
		w.rec.ConnectTimeoutFollowers += uint64(o.pending())
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
	if o.hsAbandoned {
		// An interrupt gave this setup up (counted then): only the
		// descriptor is left to close.
		o.hsAbandoned = false
		w.closeFd(o, true)
		o.state = stIdle
		return
	}
	if r.err != nil {
		err := r.err
		if conn.IsPlainAnswer(err) {
			err = errPlainAnswer
		}
		w.setupFailed(o, now, err, r.err == conn.ErrHandshakeTimeout)
		return
	}
	if raw := w.p.Raw(o.fd); raw != nil {
		r.t.UseRaw(raw)
	}
	o.useTransport(r.t)
	if r.t.Info.Resumed {
		w.rec.Setups.Resumed++
	}
	w.lastTLS = r.t.Info
	if !w.tlsSeen {
		// The phase reports a negotiation of its own setups when it has
		// some, else the one its connections carry over.
		w.rec.TLS = w.lastTLS
		w.tlsSeen = true
	}
	if w.cfg.ALPN != "" && r.t.Info.ALPN != w.cfg.ALPN {
		w.setupFailed(o, now, fmt.Errorf("the server did not select %s in ALPN", w.cfg.ALPN), false)
		return
	}
	w.opened(o, now)
	w.armTimer(o)
	// Edges that came during the handshake were not served: read and
	// write as if both were reported.
	o.tr.Arm(false)
	if !w.readAll(o, now) {
		return
	}
	w.flush(o, w.now())
}

// opened continues a connection whose transport is up: it is established
// at once when the session is ready (HTTP/1.1), else once the session has
// read what it waits for (HTTP/2: the peer's SETTINGS), within the setup
// deadline; meanwhile the session writes its preface.
func (w *worker) opened(o *owner, now int64) {
	if o.live.Ready {
		w.established(o, now)
		return
	}
	o.state = stGreeting
	w.armTimer(o)
}

// established opens the connection for requests: those admitted during
// the setup start their latency now, and the admission fills up (a test
// mode may admit only on an open connection).
func (w *worker) established(o *owner, now int64) {
	o.state = stOpen
	o.setupNs = now - o.connStart
	// The server may still refuse the connection on its first read (a
	// TLS 1.3 alert; a TLS server answering http://): it is timed once it
	// has proved itself (proved).
	o.fresh = true
	w.rec.SetupDone(true, false, -1)
	w.setups--
	w.limitStart(o, now)
	for k := o.head; k != o.tail; k++ {
		if s := o.slot(k); s.start < 0 {
			s.start = now
		}
	}
	w.admit(o, now)
}

// setupRejected handles a server that refused a connection the client
// had counted as established: a TLS 1.3 server checks the client's
// certificate after the client's side of the handshake has ended, so its
// refusal (an alert) comes on the first read. It is a failed setup, as
// the same refusal is under TLS 1.2, never a request's transport failure.
func (w *worker) setupRejected(o *owner, now int64, err error) {
	w.integrate(now)
	o.fresh = false
	w.rec.SetupRejected()
	w.setups++ // setupFailed ends it again, as failed
	w.setupFailed(o, now, err, false)
	w.updateTarget(o, now)
}

// setupCharger is a policy whose requests wait outside the owners' rings
// until a connection is open: a failed setup with nothing admitted to it
// counts one of them as its first request.
type setupCharger interface {
	chargeSetup(w *worker, cat metrics.Category, now int64)
}

var (
	errSetupTimeout    = errors.New("connect timed out")
	errGreetingTimeout = errors.New("the server's HTTP/2 SETTINGS did not arrive in time")
	errTLSAnswer       = errors.New("the server answered with TLS: use https://")
	errPlainAnswer     = errors.New("the server answered plain HTTP, not TLS: use http://")
)

// looksLikeTLS reports whether b starts a TLS record (change_cipher_spec,
// alert, handshake or application_data, version 3.x): what a TLS server
// answers to bytes that are not TLS.
func looksLikeTLS(b []byte) bool {
	return len(b) >= 2 && b[0] >= 0x14 && b[0] <= 0x17 && b[1] == 0x03
}
