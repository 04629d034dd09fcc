package sched

import (
	"crypto/tls"
	"errors"
	"runtime"
	"sync/atomic"
	"time"

	"brk/conn"
	"brk/metrics"
	"brk/poller"
)

// Owner states.
const (
	stIdle        = iota // no connection; reconnects when it has work
	stConnecting         // nonblocking connect in progress
	stOpen               // connected
	stBackoff            // waiting one tick before reconnecting after a failed setup
	stHandshaking        // TLS handshake running on the setup path (a goroutine)
	stClosing            // connections test: last response read, waiting for the server to close
)

// slot is one admitted request on its owner's ring.
type slot struct {
	admit    int64 // admission instant (ns since the engine's epoch)
	deadline int64 // admit + timeout (connect start for a first request)
	start    int64 // latency start: admission, or end of setup for requests admitted before it
	last     bool  // connections test: the connection's last request (Connection: close)
}

// owner is a connection owner: it holds at most one connection at a time and
// replaces it when it closes. Its ring holds the admitted requests in order:
// [head, written) are written and await responses, [written, tail) are
// admitted but not yet (fully) written; partial bytes of ring[written] are
// already on the wire.
type owner struct {
	idx     int32
	state   uint8
	fd      int
	tr      conn.Plain
	tl      *conn.TLS   // the TLS transport once the handshake is done
	tlsCfg  *tls.Config // this owner's TLS config: its own session cache (one returning visitor)
	gen     uint32      // connection generation, to match handshake results
	parser  Parser
	ring    []slot
	mask    uint32
	head    uint32
	written uint32
	tail    uint32
	partial int // bytes of request `written` already written
	blocked bool

	connStart int64
	sent      uint32 // connections test: requests admitted on the current connection
	atTarget  bool
	reached   uint32 // phase number+1 in which the target was first reached
	retire    bool   // queued for reconnect after the current event batch
}

func (o *owner) outstanding() uint32 { return o.written - o.head }
func (o *owner) pending() uint32     { return o.tail - o.head }

// command is a controller → worker instruction.
type command struct {
	kind  int
	depth int
	phase uint32
	rec   *metrics.Recorder // the recorder handed back for reuse
}

const (
	cmdStart = iota // start admitting at depth for phase
	cmdStop         // stop admission, then report when drained
	cmdQuit         // close everything and exit
)

// worker runs on one locked OS thread.
type worker struct {
	id     int
	cfg    *Config
	epoch  time.Time
	p      *poller.Poller
	dialer *conn.Dialer
	owners []owner
	byFd   []int32 // fd → owner index + 1
	events []poller.Event
	rbuf   []byte
	wbuf   []byte // the request repeated, for batched writes
	reqLen int
	cbuf   []byte // connections test: the last request of a connection (Connection: close)
	active int    // connections test: owners of this worker active in the phase
	wheel  *Wheel
	fireFn func(int32, int64)
	status *[600]bool
	tmo    int64

	rec         *metrics.Recorder
	spare       *metrics.Recorder // returned by the controller; current after the next hand-over
	live        metrics.Live
	admitting   bool
	stopping    bool
	depth       uint32
	phase       uint32
	activeStart int64
	outTotal    uint64 // outstanding integral of the phases handed over
	pending     int64  // admitted and unresolved requests on this worker

	// time integrals over the admission window
	last     int64
	outN     int64 // written, unanswered requests
	atTarget int64 // owners at full depth

	retired []int32 // owners to reconnect after the event batch

	hs         chan hsResult // handshake results from the setup path
	hsInFlight int
	lastTLS    metrics.TLSInfo // the latest negotiation on this worker
	tlsSeen    bool            // a setup of this phase has set rec.TLS

	cmds    chan command
	reports chan<- report
	fatal   atomic.Pointer[string]
	tid     atomic.Int32
}

// report is a worker → controller message.
type report struct {
	worker int
	rec    *metrics.Recorder // non-nil: the drained phase's recorder
	err    error             // the worker could not start or failed
}

// hsResult is a finished TLS handshake.
type hsResult struct {
	owner int32
	gen   uint32
	t     *conn.TLS
	err   error
}

func newWorker(id int, cfg *Config, epoch time.Time, owners int, reports chan<- report) *worker {
	w := &worker{
		id:      id,
		cfg:     cfg,
		epoch:   epoch,
		dialer:  conn.NewDialer(cfg.Addr),
		owners:  make([]owner, owners),
		events:  make([]poller.Event, 256),
		rbuf:    make([]byte, 64<<10),
		reqLen:  len(cfg.Request),
		status:  statusTable(cfg.StatusOK),
		tmo:     int64(cfg.Timeout),
		cmds:    make(chan command, 4),
		reports: reports,
	}
	copies := (64 << 10) / len(cfg.Request)
	if copies < 2 {
		copies = 2
	}
	w.wbuf = make([]byte, 0, copies*len(cfg.Request))
	for i := 0; i < copies; i++ {
		w.wbuf = append(w.wbuf, cfg.Request...)
	}
	for i := range w.owners {
		w.initOwner(i)
	}
	w.cbuf = cfg.CloseRequest
	w.hs = make(chan hsResult, max(owners, 1024))
	w.rec = metrics.NewRecorder(&w.live)
	w.wheel = NewWheel(owners, 12, 0)
	w.fireFn = w.fire
	return w
}

func (w *worker) initOwner(i int) {
	o := &w.owners[i]
	o.idx = int32(i)
	o.fd = -1
	o.parser = w.cfg.NewParser()
	o.parser.SetExpectBody(w.cfg.ExpectBody, w.cfg.CheckBody)
	o.parser.Reset(w.cfg.Head)
	o.ring = make([]slot, 1)
	if w.cfg.TLS != nil {
		o.tlsCfg = w.cfg.TLS.Clone()
		if !w.cfg.NoResume {
			o.tlsCfg.ClientSessionCache = tls.NewLRUClientSessionCache(1)
		}
	}
}

// ensureOwners grows the owner set to n (connections test: a phase may ask
// for more concurrent connections than any before). It runs at phase start,
// never on the request path.
func (w *worker) ensureOwners(n int) {
	if n <= len(w.owners) {
		return
	}
	old := len(w.owners)
	w.owners = append(w.owners, make([]owner, n-old)...)
	for i := old; i < n; i++ {
		w.initOwner(i)
	}
	w.wheel.Grow(n)
}

func (w *worker) now() int64 { return int64(time.Since(w.epoch)) }

// run is the worker's loop. It locks its OS thread first.
func (w *worker) run(ready chan<- error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	w.tid.Store(int32(gettid()))
	p, err := poller.New()
	if err != nil {
		ready <- err
		return
	}
	w.p = p
	now := w.now()
	w.wheel.next = now / w.wheel.tick
	w.last = now
	ready <- nil
	defer w.shutdown()
	for {
		timeout := w.wheel.Timeout(w.now())
		n, err := w.p.Wait(w.events, timeout)
		if err != nil {
			msg := "poller: " + err.Error()
			w.fatal.Store(&msg)
			w.reports <- report{worker: w.id, err: err}
			return
		}
		// Control first: a start or stop applies to this batch.
		for {
			select {
			case c := <-w.cmds:
				if c.kind == cmdQuit {
					return
				}
				w.command(c)
				continue
			default:
			}
			break
		}
		for i := 0; i < n; i++ {
			w.event(&w.events[i])
		}
		for w.hsInFlight > 0 {
			select {
			case r := <-w.hs:
				w.hsInFlight--
				w.handshakeDone(r)
				continue
			default:
			}
			break
		}
		w.wheel.Advance(w.now(), w.fireFn)
		w.reconnect()
		w.live.OutstandingNs.Store(w.outTotal + w.rec.OutstandingNs)
		if w.stopping && w.pending == 0 {
			w.stopping = false
			w.handOver()
		}
	}
}

func (w *worker) command(c command) {
	now := w.now()
	switch c.kind {
	case cmdStart:
		if c.rec != nil {
			w.spare = c.rec
		}
		w.rec.Reset()
		w.rec.TLS = w.lastTLS
		w.tlsSeen = false
		w.phase = c.phase
		if w.cfg.Connections {
			w.active = c.depth
			w.ensureOwners(c.depth)
			c.depth = 1
		}
		w.setDepth(uint32(c.depth))
		w.last = now
		w.activeStart = now
		w.admitting = true
		w.stopping = false
		for i := range w.owners {
			o := &w.owners[i]
			if w.cfg.Connections && i >= w.active {
				break
			}
			w.updateTarget(o, now)
			switch o.state {
			case stIdle:
				w.connect(o, now)
			case stOpen:
				w.admit(o, now)
				w.flush(o, now)
			case stConnecting, stHandshaking:
				w.admit(o, now) // written once the setup ends
			}
		}
	case cmdStop:
		w.integrate(now)
		w.rec.ActiveNs = uint64(now - w.activeStart)
		w.admitting = false
		w.stopping = true
	}
}

// handOver gives the drained phase's recorder to the controller.
func (w *worker) handOver() {
	done := w.rec
	w.outTotal += done.OutstandingNs
	if w.spare != nil {
		w.rec = w.spare
		w.spare = nil
	} else {
		w.rec = metrics.NewRecorder(&w.live)
	}
	w.rec.Reset()
	w.reports <- report{worker: w.id, rec: done}
}

func (w *worker) setDepth(d uint32) {
	w.depth = d
	for i := range w.owners {
		o := &w.owners[i]
		if uint32(len(o.ring)) >= d {
			continue
		}
		size := uint32(1)
		for size < d {
			size <<= 1
		}
		ring := make([]slot, size)
		for k := o.head; k != o.tail; k++ {
			ring[k&(size-1)] = o.ring[k&o.mask]
		}
		o.ring = ring
		o.mask = size - 1
	}
}

// integrate advances the load integrals to now.
func (w *worker) integrate(now int64) {
	if w.admitting {
		dt := now - w.last
		if dt > 0 {
			w.rec.OutstandingNs += uint64(w.outN * dt)
			w.rec.AtTargetNs += uint64(w.atTarget * dt)
		}
	}
	w.last = now
}

// updateTarget re-evaluates whether o holds its full depth.
func (w *worker) updateTarget(o *owner, now int64) {
	at := o.outstanding() >= w.depth && w.depth > 0
	if at == o.atTarget {
		return
	}
	w.integrate(now)
	o.atTarget = at
	if at {
		w.atTarget++
		if w.admitting && o.reached != w.phase+1 {
			o.reached = w.phase + 1
			w.rec.ReachedOnce++
			w.live.Reached.Add(1)
		}
	} else {
		w.atTarget--
	}
}

// admit fills o's ring up to the depth with new requests.
func (w *worker) admit(o *owner, now int64) {
	for w.admitting && o.pending() < w.depth {
		last := false
		if w.cfg.Connections {
			// One request at a time, written as soon as it is admitted,
			// --requests of them per connection, the last one closing.
			if o.state != stOpen || o.sent >= uint32(w.cfg.PerConn) || int(o.idx) >= w.active {
				break
			}
			o.sent++
			last = o.sent == uint32(w.cfg.PerConn)
		}
		s := &o.ring[o.tail&o.mask]
		s.last = last
		s.admit = now
		s.deadline = now + w.tmo
		s.start = now
		if o.state != stOpen {
			s.start = -1 // set when the setup ends
		}
		o.tail++
		w.pending++
	}
	w.armTimer(o)
}

// armTimer points o's timer at its oldest unresolved request.
func (w *worker) armTimer(o *owner) {
	if o.state == stBackoff {
		return
	}
	if o.state == stClosing {
		return // its close-wait timer is set by awaitClose
	}
	if o.pending() > 0 {
		w.wheel.Schedule(o.idx, o.ring[o.head&o.mask].deadline)
	} else if o.state == stConnecting || o.state == stHandshaking {
		w.wheel.Schedule(o.idx, o.connStart+w.tmo)
	} else {
		w.wheel.Cancel(o.idx)
	}
}

// connect starts a new connection for o, admitting its requests at the
// connect start so that setup counts against the first request's deadline.
func (w *worker) connect(o *owner, now int64) {
	if !w.admitting && o.pending() == 0 || w.cfg.Connections && int(o.idx) >= w.active {
		o.state = stIdle
		w.wheel.Cancel(o.idx)
		return
	}
	o.connStart = now
	o.state = stConnecting
	o.sent = 0
	o.written = o.head
	o.partial = 0
	o.blocked = false
	o.parser.Reset(w.cfg.Head)
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
	o.tr.Fd = fd
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

// resolveHead drops the oldest request with a failure category.
func (w *worker) resolveHead(o *owner, cat metrics.Category) {
	if o.head == o.written && o.written != o.tail {
		o.written++ // never written: keep the ring invariant
		o.partial = 0
	} else if o.head != o.written {
		w.outN--
	}
	o.head++
	w.pending--
	w.rec.Fail(cat, 1)
}

// failAll resolves every unresolved request of o with cat.
func (w *worker) failAll(o *owner, cat metrics.Category) {
	n := o.pending()
	if n == 0 {
		return
	}
	w.outN -= int64(o.outstanding())
	w.pending -= int64(n)
	w.rec.Fail(cat, uint64(n))
	o.head = o.tail
	o.written = o.tail
	o.partial = 0
}

func (w *worker) closeFd(o *owner, reset bool) {
	if o.fd < 0 {
		return
	}
	if o.fd < len(w.byFd) {
		w.byFd[o.fd] = 0
	}
	if reset {
		conn.Reset(o.fd)
	} else {
		conn.Close(o.fd)
	}
	o.fd = -1
	o.tr.Fd = -1
	o.tl = nil
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
	w.outN -= int64(o.outstanding())
	o.written = o.head
	o.partial = 0
	if !o.retire {
		o.retire = true
		w.retired = append(w.retired, o.idx)
	}
	w.armTimer(o)
}

func (w *worker) reconnect() {
	if len(w.retired) == 0 {
		return
	}
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
		w.established(o, now)
	}
	if o.tl != nil {
		o.tl.Arm(ev.Hup)
	}
	if o.state == stClosing {
		if ev.Readable {
			w.readClosing(o, now)
		}
		return
	}
	if o.state != stOpen {
		return
	}
	if ev.Readable {
		if !w.readAll(o, now, ev.Hup) {
			return
		}
		now = w.now()
	}
	if ev.Writable {
		o.blocked = false
	}
	w.flush(o, now)
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
	o.tl = r.t
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
	o.tl.Arm(false)
	if !w.readAll(o, now, false) {
		return
	}
	w.flush(o, w.now())
}

func (w *worker) established(o *owner, now int64) {
	o.state = stOpen
	w.rec.SetupDone(true, false, now-o.connStart)
	for k := o.head; k != o.tail; k++ {
		if s := &o.ring[k&o.mask]; s.start < 0 {
			s.start = now
		}
	}
	if w.cfg.Connections {
		w.admit(o, now)
	}
}

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
		n, done, err := o.parser.Parse(b)
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
	switch code := o.parser.Status(); {
	case now > s.deadline:
		w.rec.Fail(metrics.Timeout, 1)
	case code < 0 || code >= len(w.status) || !w.status[code]:
		w.rec.Fail(metrics.Status, 1)
	case !o.parser.BodyOK():
		w.rec.Fail(metrics.Body, 1)
	default:
		w.rec.Success()
	}
	w.integrate(now)
	o.head++
	w.outN--
	w.pending--
	closing := o.parser.Close()
	o.parser.Reset(w.cfg.Head)
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
		done, err := o.parser.EOF()
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

// fire handles an owner's due timer.
func (w *worker) fire(i int32, at int64) {
	o := &w.owners[i]
	now := w.now()
	if late := now - at; late > w.rec.MaxLatenessNs {
		w.rec.MaxLatenessNs = late
	}
	switch o.state {
	case stBackoff:
		o.state = stIdle
		w.connect(o, now)
	case stConnecting:
		w.setupFailed(o, now, errSetupTimeout, true)
	case stHandshaking:
		// The setup path has the same deadline and reports the timeout.
	case stClosing:
		// The server did not close in time: close with a reset.
		w.retireConn(o, now, true)
	case stOpen:
		if o.pending() == 0 {
			return
		}
		if o.ring[o.head&o.mask].deadline > now {
			w.armTimer(o) // a stale timer: the head changed
			return
		}
		// The oldest request missed its deadline: it and every other
		// expired one count as timeout, unexpired followers as abandoned,
		// and the connection is retired.
		w.integrate(now)
		for o.pending() > 0 && o.ring[o.head&o.mask].deadline <= now {
			w.resolveHead(o, metrics.Timeout)
		}
		w.failAll(o, metrics.Abandoned)
		w.retireConn(o, now, true)
	case stIdle:
		// Requests waiting for a replay connection that never came.
		for o.pending() > 0 && o.ring[o.head&o.mask].deadline <= now {
			w.resolveHead(o, metrics.Timeout)
		}
		w.armTimer(o)
	}
}

var errSetupTimeout = errors.New("connect timed out")

// shutdown closes every connection and the poller.
func (w *worker) shutdown() {
	// A socket in a handshake belongs to the setup path until its result
	// is back (bounded by the setup deadline).
	for ; w.hsInFlight > 0; w.hsInFlight-- {
		<-w.hs
	}
	for i := range w.owners {
		w.closeFd(&w.owners[i], true)
	}
	if w.p != nil {
		w.p.Close()
	}
}
