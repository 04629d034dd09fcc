package sched

import (
	"crypto/tls"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/brk-bench/brk/internal/conn"
	"github.com/brk-bench/brk/internal/exchange"
	"github.com/brk-bench/brk/internal/metrics"
	"github.com/brk-bench/brk/internal/poller"
)

// Owner states.
const (
	stIdle        = iota // no connection; reconnects when it has work
	stConnecting         // nonblocking connect in progress
	stOpen               // connected
	stBackoff            // waiting one tick before reconnecting after a failed setup
	stHandshaking        // TLS handshake running on the setup path (a goroutine)
	stClosing            // connections test: last response read, waiting for the server to close
	stGreeting           // transport up, waiting for the session to be ready (HTTP/2: the peer's SETTINGS)
)

// owner is a connection owner: it holds at most one connection at a time
// and replaces it when it closes. Its ring holds the admitted requests in
// admission order, which is also their deadline order (ring.go).
type owner struct {
	idx   int32
	state uint8
	fd    int
	tr    conn.Transport // the connection's transport, chosen at setup (useTransport)
	plain *conn.Plain    // this owner's plain transport on epoll, made once and reused per connection
	// What tr answers the same on every connection (conn.Traits), read
	// once at setup: whether it needs Arm on every event, keeps written
	// bytes for Flush, and hands received bytes out in place.
	armEach, buffers, inPlace bool
	tlsCfg                    *tls.Config // this owner's TLS config: its own session cache (one returning visitor)
	gen                       uint32      // connection generation, to match handshake results
	sess                      Session
	streams                   Streams         // sess, when it is multiplexed (session.go)
	live                      *exchange.State // the session's live state (session.go)
	ring                      []slot
	mask                      uint32
	head                      uint32 // oldest unresolved request (tail when none)
	tail                      uint32 // next token
	wpos                      uint32 // next request the session reports written on this connection
	// unresolved counts requests in [head, tail) not yet resolved;
	// inflight those of them written and awaiting a response.
	unresolved uint32
	inflight   uint32
	blocked    bool

	connStart int64
	sent      uint32 // connections test: requests admitted on the current connection
	committed bool   // connections test: set up during admission, so it carries all its requests
	depth     uint32 // requests this owner holds outstanding in the phase (0: none, idle)
	atTarget  bool
	reached   uint32 // phase number+1 in which the target was first reached
	retire    bool   // queued for reconnect after the current event batch

	// The peer's stream limit on this connection in this phase (limit.go;
	// nil for a pipeline, which has none).
	lim *streamLimit

	fresh       bool  // established, and nothing read from it yet
	reused      bool  // a response completed on this connection
	silent      bool  // nothing read since a request was written on it idle (ends.go: raced)
	setupNs     int64 // how long the current connection's setup took
	hsAbandoned bool  // an interrupt gave up the handshake in flight
}

// readBuf is the buffer transports that copy read into, made on first use.
func (w *worker) readBuf() []byte {
	if w.rbuf == nil {
		w.rbuf = make([]byte, 64<<10)
	}
	return w.rbuf
}

func (o *owner) outstanding() uint32 { return o.inflight }

func (o *owner) pending() uint32 { return o.unresolved }

// command is a controller → worker instruction.
type command struct {
	kind  int
	depth int
	phase uint32
	rec   *metrics.Recorder // the recorder handed back for reuse
	// at and until bound the phase's admission window on the engine's
	// clock (ns since its epoch): the rate test's schedule starts at at
	// and schedules nothing from until on.
	at, until int64
}

const (
	cmdStart   = iota // start admitting at depth for phase
	cmdStop           // stop admission, then report when drained
	cmdQuit           // close everything and exit
	cmdAbort          // interrupted: abandon what is outstanding, then report
	cmdConnect        // set up every idle owner's connection before any phase
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
	rbuf   []byte       // bytes read by copy (readBuf); an io_uring's plain connections are read in place
	pol    admission    // the test mode's admission policy
	comps  []Completion // completions of one Parse call
	wheel  *Wheel
	fireFn func(int32, int64)
	mix    *workerMix // the run's targets (mix_engine.go)
	tmo    int64

	rec         *metrics.Recorder
	spare       *metrics.Recorder // returned by the controller; current after the next hand-over
	live        metrics.Live
	admitting   bool
	stopping    bool
	base        int // the index among the run's connections of this worker's first owner (requests test)
	phase       uint32
	schedStart  int64 // the phase's admission window on the engine's clock
	schedEnd    int64
	activeStart int64
	outTotal    uint64 // outstanding integral of the phases handed over
	pending     int64  // admitted and unresolved requests on this worker, and arrivals waiting for a slot (rate test)
	setups      int    // setups in progress (connect or handshake)

	// time integrals over the admission window
	last     int64
	outN     int64 // written, unanswered requests
	atTarget int64 // owners at full depth

	retired []int32 // owners to reconnect after the event batch

	// A pass over every owner (a phase's start, the connects before the
	// first phase), done a slice at a time between polls (sweep.go).
	sweeping   bool
	sweepStart bool  // the pass starts the phase; else it connects idle owners
	sweepAt    int   // the next owner the pass visits
	bulkFrom   int64 // when this loop turn's first bulk setup or start began (-1: none yet)

	hs         chan hsResult // handshake results from the setup path
	hsInFlight int
	lastTLS    metrics.TLSInfo // the latest negotiation on this worker
	tlsSeen    bool            // a setup of this phase has set rec.TLS

	// Cumulative session counts already handed over.
	resets, goaways uint64

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

func newWorker(id int, cfg *Config, epoch time.Time, base, owners int, reports chan<- report) *worker {
	w := &worker{
		id:      id,
		base:    base,
		cfg:     cfg,
		epoch:   epoch,
		dialer:  conn.NewDialer(cfg.Addr),
		owners:  make([]owner, owners),
		events:  make([]poller.Event, 256),
		tmo:     int64(cfg.Timeout),
		cmds:    make(chan command, 4),
		reports: reports,
		pol:     cfg.load().policy(cfg, id),
		comps:   make([]Completion, 0, 16),
	}
	w.initMix()
	for i := range w.owners {
		w.initOwner(i)
	}
	if cfg.TLS != nil {
		// Room for every owner's handshake at once: a handshake's
		// goroutine never waits to report. Without TLS there are none
		// (nil: never received from, hsInFlight stays 0).
		w.hs = make(chan hsResult, max(owners, 1024))
	}
	w.rec = w.newRecorder()
	w.wheel = NewWheel(owners, 12, 0)
	w.fireFn = w.fire
	return w
}

// newRecorder makes a recorder with what the test mode measures.
func (w *worker) newRecorder() *metrics.Recorder {
	r := metrics.NewRecorder(&w.live)
	r.SetLatencyLimits(w.cfg.MaxP99, w.cfg.MaxP999)
	if w.pol.clocked() {
		r.EnableRate()
	}
	return w.targetRecorder(r)
}

func (w *worker) initOwner(i int) {
	o := &w.owners[i]
	o.idx = int32(i)
	o.fd = -1
	o.sess = w.cfg.NewSession()
	o.streams, _ = o.sess.(Streams)
	if o.streams != nil {
		o.live = o.streams.State()
		o.lim = new(streamLimit)
	} else {
		pipeline := exchange.PipelineState
		o.live = &pipeline
	}
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
// never on the request path. Owners hold no pointer into the slice.
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
	if w.pol.clocked() {
		preciseTimers()
	}
	newPoller := poller.New
	if w.cfg.IO == IOUring {
		newPoller = poller.NewUring
	}
	p, err := newPoller()
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
	next := int64(-1) // the policy's next instant (a due arrival)
	for {
		now = w.now()
		timeout := w.wheel.TimeoutNs(now)
		if next >= 0 {
			if d := max(next-now, 0); timeout < 0 || d < timeout {
				timeout = d
			}
		}
		// Only a clock-driven policy (the rate test) needs a wake-up to
		// the nanosecond; the wheel's 1 ms ticks wait in whole
		// milliseconds, which costs far fewer wake-ups on a busy CPU than
		// waking at each tick boundary exactly (measured: 30 % more CPU
		// per response at depth 8 on one shared CPU).
		var n int
		var err error
		switch {
		case w.sweeping: // the rest of the pass waits only for this poll
			n, err = w.p.WaitNs(w.events, 0)
		case next < 0:
			n, err = w.p.Wait(w.events, w.wheel.Timeout(now))
		default:
			n, err = w.p.WaitNs(w.events, timeout)
		}
		w.rec.Tick(w.now())
		w.bulkFrom = -1
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
		if w.sweeping {
			w.sweep()
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
		if len(w.retired) > 0 {
			w.reconnect()
		}
		next = w.pol.pump(w, w.now())
		w.live.OutstandingNs.Store(w.outTotal + w.rec.OutstandingNs)
		// The drain ends when every request and every setup started in
		// the phase has an outcome.
		if w.stopping && w.pending == 0 && w.setups == 0 {
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
		if c.phase == 1 {
			// Setups made before the first phase (Engine.Connect) are
			// counted in it, so that every setup belongs to a phase.
			w.rec.ResetKeepingSetups()
		} else {
			w.rec.Reset()
		}
		w.rec.StartTimeline(c.at, c.until-c.at, w.tmo)
		w.rec.Tick(now)
		w.rec.TLS = w.lastTLS
		w.tlsSeen = false
		w.phase = c.phase
		w.schedStart, w.schedEnd = c.at, c.until
		w.pol.start(w, c.depth)
		w.last = now
		w.activeStart = now
		w.admitting = true
		w.stopping = false
		w.sweepOwners(true)
	case cmdAbort:
		w.sweeping = false
		w.abort(now)
	case cmdConnect:
		if !w.sweeping {
			w.sweepOwners(false)
		}
	case cmdStop:
		w.sweeping = false // owners the start did not reach hold nothing
		w.pol.pump(w, now) // what came due up to the end is admitted
		w.integrate(now)
		for i := range w.owners {
			w.limitEnd(&w.owners[i], now)
		}
		w.rec.ActiveNs = uint64(now - w.activeStart)
		w.admitting = false
		w.stopping = true
	}
}

// abort ends an interrupted phase at once: every unresolved request counts
// as abandoned and its connection is reset. A socket in a TLS handshake is
// shut down so that the setup path returns now; its result is handled as
// usual when it comes.
func (w *worker) abort(now int64) {
	w.integrate(now)
	w.admitting = false
	w.stopping = true
	w.pol.abort(w)
	for i := range w.owners {
		o := &w.owners[i]
		w.failAll(o, metrics.Abandoned)
		switch o.state {
		case stHandshaking:
			if !o.hsAbandoned {
				o.hsAbandoned = true
				w.rec.SetupAbandoned()
				w.setups--
			}
			conn.Shutdown(o.fd)
		case stConnecting, stGreeting:
			w.rec.SetupAbandoned()
			w.setups--
			w.retireConn(o, now, true)
		case stOpen, stClosing:
			w.retireConn(o, now, true)
		default:
			o.state = stIdle
			w.wheel.Cancel(o.idx)
		}
	}
}

// handOver gives the drained phase's recorder to the controller.
func (w *worker) handOver() {
	w.protoCounts()
	done := w.rec
	w.outTotal += done.OutstandingNs
	if w.spare != nil {
		w.rec = w.spare
		w.spare = nil
	} else {
		w.rec = w.newRecorder()
	}
	w.rec.Reset()
	w.reports <- report{worker: w.id, rec: done}
}

// shutdown closes every connection and the poller.
func (w *worker) shutdown() {
	// A socket in a handshake belongs to the setup path until its result
	// is back. Shutting the socket down (not closing it: its descriptor
	// must not be reused under the handshake) ends the handshake at once
	// instead of at its deadline.
	for i := range w.owners {
		if o := &w.owners[i]; o.state == stHandshaking && o.fd >= 0 {
			conn.Shutdown(o.fd)
		}
	}
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

// protoCounts adds the sessions' protocol counts since the last hand-over
// to the phase's recorder, with the lowest stream limit its peers set.
func (w *worker) protoCounts() {
	var resets, goaways uint64
	for i := range w.owners {
		c := &w.owners[i].live.Counters
		resets += c.Resets
		goaways += c.GoAways
		if l := c.LowestMaxStreams; l >= 0 && (!w.rec.PeerMaxKnown || l < w.rec.PeerMaxStreams) {
			w.rec.PeerMaxStreams, w.rec.PeerMaxKnown = l, true
		}
		c.LowestMaxStreams = c.MaxStreams // in force as the next phase begins
	}
	w.rec.ResetsSent += resets - w.resets
	w.rec.GoAwaysReceived += goaways - w.goaways
	w.resets, w.goaways = resets, goaways
}
