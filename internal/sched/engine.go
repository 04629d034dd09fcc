package sched

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/brk-bench/brk/internal/conn"
	"github.com/brk-bench/brk/internal/judge"
	"github.com/brk-bench/brk/internal/machine"
	"github.com/brk-bench/brk/internal/metrics"
)

// Engine owns the workers for one target. Workers are started once and
// keep their connections across phases.
type Engine struct {
	cfg     Config
	epoch   time.Time
	workers []*worker
	reports chan report
	wg      sync.WaitGroup
	recs    []*metrics.Recorder // recorders handed back to workers at the next start
	phase   uint32
	closed  bool
	other   *machine.OtherLoad // the box's other load, read during each phase
}

// Start validates cfg and starts cfg.Threads workers, each on its own
// locked OS thread with its own poller. Connection owners are spread over
// the workers as evenly as possible.
func Start(cfg Config) (*Engine, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	e := &Engine{
		cfg:     cfg,
		epoch:   time.Now(),
		reports: make(chan report, cfg.Threads*2),
		recs:    make([]*metrics.Recorder, cfg.Threads),
		other:   machine.NewOtherLoad(serverPIDs(cfg)),
	}
	e.workers = make([]*worker, cfg.Threads)
	base := cfg.ConnBase
	for i := range e.workers {
		n := cfg.Conns / cfg.Threads
		if i < cfg.Conns%cfg.Threads {
			n++
		}
		e.workers[i] = newWorker(i, &e.cfg, e.epoch, base, n, e.reports)
		base += n
	}
	ready := make(chan error, cfg.Threads)
	for _, w := range e.workers {
		e.wg.Add(1)
		go func(w *worker) {
			defer e.wg.Done()
			w.run(ready)
		}(w)
	}
	var firstErr error
	for range e.workers {
		if err := <-ready; err != nil && firstErr == nil {
			firstErr = err
		}
	}
	if firstErr != nil {
		e.Close()
		return nil, firstErr
	}
	return e, nil
}

// Connect sets up every connection before the first phase (the rate
// test's schedule should not start on connects) and waits until each
// setup has ended or d has passed. A failed setup is retried by the first
// phase, as if Connect had not run; these setups are counted in no phase.
func (e *Engine) Connect(ctx context.Context, d time.Duration) {
	if e.closed {
		return
	}
	base := e.Snapshot()
	for _, w := range e.workers {
		e.send(w, command{kind: cmdConnect})
	}
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		s := e.Snapshot()
		if s.Established-base.Established+s.SetupFailed-base.SetupFailed >= uint64(e.cfg.Conns) {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// Threads is the number of workers.
func (e *Engine) Threads() int { return len(e.workers) }

// Close stops every worker, closes their connections and pollers, and
// waits for their threads to finish.
func (e *Engine) Close() {
	if e.closed {
		return
	}
	e.closed = true
	for _, w := range e.workers {
		if w.p == nil {
			continue
		}
		e.send(w, command{kind: cmdQuit})
	}
	e.wg.Wait()
	e.other.Close()
}

var errEngineClosed = errors.New("sched: engine closed")

// interruptGrace is how long an interrupted phase's drain may run before
// its outstanding requests are abandoned.
const interruptGrace = time.Second

// RunPhase runs one phase: admission for the duration (or until ctx ends,
// a client failure, or FailFast), then the drain, and merges every
// worker's recorder into the phase's measurement.
func (e *Engine) RunPhase(ctx context.Context, spec judge.PhaseSpec) (*judge.Measurement, error) {
	if e.closed {
		return nil, errEngineClosed
	}
	m := &judge.Measurement{Boxes: 1}
	cpu0 := machine.ReadProcessCPU()
	threads0 := e.threadCPU()
	waits0 := machine.ReadSchedWaits()
	start := time.Now()
	// The live counters never reset: the base is read before any worker
	// starts the phase, so nothing of it is missed.
	live0 := e.Snapshot()
	e.other.Start()
	e.startPhase(spec.Level, spec.Duration)
	mach, mistaken := e.admission(ctx, spec, m, live0, start)
	m.Active = time.Since(start)
	m.Machine, m.MachineOK = mach.finish()
	m.Other = e.other.Finish()
	for _, w := range e.workers {
		e.send(w, command{kind: cmdStop})
		if mistaken {
			e.send(w, command{kind: cmdAbort})
		}
	}
	m.Stats = e.drain(ctx, m)
	m.Elapsed = time.Since(start)
	m.CPU = machine.ReadProcessCPU().Sub(cpu0)
	m.WorkerBusy, m.WorkerBusyOK = busyShare(threads0, e.threadCPU(), m.Elapsed)
	if waits := machine.ReadSchedWaits(); waits.OK() && waits0.OK() {
		m.ProcessWait, _ = waits.P99Since(waits0) // none sampled: 0
		m.ProcessWaitOK = true
	}
	if m.ClientError == "" {
		m.ClientError = m.Stats.ClientError
	}
	if spec.FailFast && e.probeWorthy(m) {
		// After the phase's clock and CPU: the probe is no part of
		// them, but its connection is counted.
		m.SpeaksTLS = conn.ProbeTLS(e.cfg.Addr, tlsProbeTimeout)
		m.Stats.TLSProbes++
	}
	return m, nil
}

// serverPIDs are the server's processes whose CPU is not the box's other
// load: the configured ones, and on a loopback target those listening on
// its port.
func serverPIDs(cfg Config) []int {
	pids := append([]int(nil), cfg.ServerPIDs...)
	if port, ok := cfg.Addr.Loopback(); ok {
		pids = append(pids, machine.LoopbackServers(port)...)
	}
	return pids
}

// MistakeAfter is when, after its start, a first phase is read for the
// user's mistake (judge.PhaseSpec.FailFast) beside its timeout: a second of
// responses, and the timeout for a request written then to be answered.
const MistakeAfter = time.Second

// probeWorthy reports whether a plain-TCP first phase is worth a TLS
// probe: not a byte from the server (silent), or every response 400 Bad
// Request, as a TLS server answers a plain request (Go's, nginx's).
func (e *Engine) probeWorthy(m *judge.Measurement) bool {
	return e.silent(m) || e.cfg.TLS == nil && judge.LookOf(m).Status == 400 && m.Stats.Counts.Succeeded == 0
}

// tlsProbeTimeout bounds the TLS probe (a loopback or LAN handshake
// answers in milliseconds).
const tlsProbeTimeout = time.Second

// silent reports whether a plain-TCP phase ended without any of its
// connections reading a byte from the server: the case where a TLS-only
// port (one that closes a plain connection without a byte, as h2o does)
// looks like a server hanging up on every request. A phase whose every
// setup timed out is not probed: its probe would time out too.
func (e *Engine) silent(m *judge.Measurement) bool {
	s := m.Stats
	return e.cfg.TLS == nil && !m.Interrupted && m.ClientError == "" &&
		s.Setups.Attempted > s.Setups.TimedOut && s.Heard == 0 && s.Counts.Succeeded == 0 && s.LatencyCount == 0
}

// startPhase tells every worker to start admitting at its share of level,
// for an admission window of d from now (the rate test's schedule starts
// at the same instant on every worker).
func (e *Engine) startPhase(level int, d time.Duration) {
	e.phase++
	at := int64(time.Since(e.epoch))
	for i, w := range e.workers {
		share := e.cfg.load().share(level, i, len(e.workers))
		e.send(w, command{kind: cmdStart, depth: share, phase: e.phase, rec: e.recs[i], at: at, until: at + int64(d)})
		e.recs[i] = nil
	}
}

func (e *Engine) send(w *worker, c command) {
	w.cmds <- c
	w.p.Wake()
}

// machineWindow reads machine CPU over the loaded window: from the moment
// every connection has reached its target once to the end of admission.
type machineWindow struct {
	start  machine.MachineCPU
	loaded bool
}

func (mw *machineWindow) finish() (float64, bool) {
	if !mw.loaded {
		return 0, false
	}
	return machine.ReadMachineCPU().BusyPct(mw.start)
}

// admission waits out the admission window: the duration, an interrupt, a
// client failure, or FailFast's triggers (mistaken: the user's mistake,
// from MistakeAfter + the timeout after start). It watches the live
// counters every 20 ms.
func (e *Engine) admission(ctx context.Context, spec judge.PhaseSpec, m *judge.Measurement, live0 Snapshot, start time.Time) (mw *machineWindow, mistaken bool) {
	owners := e.cfg.ownersInUse(spec.Level)
	mw = &machineWindow{}
	judgeAt := start.Add(MistakeAfter + e.cfg.Timeout)
	if e.cfg.load().Mode().Clocked() {
		// The schedule loads the machine from its first instant.
		mw.loaded, mw.start = true, machine.ReadMachineCPU()
	}
	timer := time.NewTimer(spec.Duration)
	defer timer.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-timer.C:
			return mw, false
		case <-ctx.Done():
			m.Interrupted = true
			return mw, false
		case r := <-e.reports:
			// A worker only reports mid-phase when it failed.
			if r.err != nil {
				m.ClientError = r.err.Error()
				return mw, false
			}
		case <-tick.C:
			e.other.Sample()
			if msg := e.fatal(); msg != "" {
				m.ClientError = msg
				return mw, false
			}
			now := e.Snapshot()
			if !mw.loaded && now.Reached-live0.Reached >= uint64(owners) {
				mw.loaded = true
				mw.start = machine.ReadMachineCPU()
			}
			// None succeeded: none in the run so far, for setups made
			// before phase 0 (Connect, the rate test) are counted in it.
			if spec.FailFast && now.Established == 0 &&
				now.SetupFailed-live0.SetupFailed >= uint64(owners) {
				m.SetupFailed = true
				return mw, false
			}
			if spec.FailFast && !time.Now().Before(judgeAt) && liveLook(live0, now).Mistake(judge.Names{}) != "" /* whether, not its words */ {
				return mw, true
			}
		}
	}
}

// drain waits for every worker's drained recorder and merges them. An
// interrupt lets the drain run for a grace period (so that a signal just
// after admission still reports a judged phase), then abandons what is
// outstanding: Ctrl-C never waits for a long --timeout.
func (e *Engine) drain(ctx context.Context, m *judge.Measurement) *metrics.Phase {
	merged := metrics.NewPhase()
	var grace <-chan time.Time
	interrupted := ctx.Done()
	if ctx.Err() != nil {
		grace, interrupted = time.After(interruptGrace), nil
	}
	for got := 0; got < len(e.workers); {
		var r report
		select {
		case r = <-e.reports:
		case <-interrupted:
			grace, interrupted = time.After(interruptGrace), nil
			continue
		case <-grace:
			grace = nil
			m.Interrupted = true // cut short: not judged
			for _, w := range e.workers {
				e.send(w, command{kind: cmdAbort})
			}
			continue
		}
		if r.err != nil {
			if m.ClientError == "" {
				m.ClientError = r.err.Error()
			}
			continue
		}
		merged.Merge(r.rec)
		e.recs[r.worker] = r.rec
		got++
	}
	return merged
}

// busyShare is the worker threads' mean share of wall time spent running
// or waiting for a CPU between two readings.
func busyShare(t0, t1 []machine.ThreadCPU, wall time.Duration) (float64, bool) {
	if len(t0) == 0 || wall <= 0 {
		return 0, false
	}
	var busy float64
	for i := range t0 {
		if !t0[i].OK || !t1[i].OK {
			return 0, false
		}
		busy += float64(t1[i].Run-t0[i].Run+t1[i].Wait-t0[i].Wait) / float64(wall)
	}
	return busy / float64(len(t0)), true
}

// Snapshot is a reading of the workers' live counters. They are never
// reset: a reader takes differences between snapshots.
type Snapshot struct {
	Succeeded     uint64
	Failed        [metrics.NumCategories]uint64
	OutstandingNs uint64 // integral of written, unanswered requests (request·ns)
	Reached       uint64 // connection×phase first attainments of the target
	Established   uint64
	SetupFailed   uint64
	Scheduled     uint64 // rate test: arrivals taken up
	Written       uint64 // requests completely written (first time)
	Dialed        uint64 // setups started
	Heard         uint64 // connections that read a byte
	// Status is the code of every complete response of the run so far
	// (0: none yet; metrics.StatusMixed: not one code).
	Status uint32
}

// Snapshot sums the workers' live counters with atomic loads only; it is
// safe from any goroutine while phases run.
func (e *Engine) Snapshot() Snapshot {
	var s Snapshot
	for _, w := range e.workers {
		l := &w.live
		s.Succeeded += l.Succeeded.Load()
		for i := range s.Failed {
			s.Failed[i] += l.Failed[i].Load()
		}
		s.OutstandingNs += l.OutstandingNs.Load()
		s.Reached += l.Reached.Load()
		s.Established += l.Established.Load()
		s.SetupFailed += l.SetupFailed.Load()
		s.Scheduled += l.Scheduled.Load()
		s.Written += l.Written.Load()
		s.Dialed += l.Dialed.Load()
		s.Heard += l.Heard.Load()
		switch st := l.Status.Load(); {
		case s.Status == 0:
			s.Status = st
		case st != 0 && st != s.Status:
			s.Status = metrics.StatusMixed
		}
	}
	return s
}

// LiveLatency reads the workers' live latency counters (never reset: a
// reader takes differences, as with Snapshot) into dst.
func (e *Engine) LiveLatency(dst *[metrics.CoarseBuckets]uint64) {
	*dst = [metrics.CoarseBuckets]uint64{}
	for _, w := range e.workers {
		for i := range dst {
			dst[i] += w.live.Latency[i].Load()
		}
	}
}

// Conns is the number of connection owners.
func (e *Engine) Conns() int { return e.cfg.Conns }

func (e *Engine) fatal() string {
	for _, w := range e.workers {
		if p := w.fatal.Load(); p != nil {
			return *p
		}
	}
	return ""
}

func (e *Engine) threadCPU() []machine.ThreadCPU {
	out := make([]machine.ThreadCPU, len(e.workers))
	for i, w := range e.workers {
		out[i] = machine.ReadThreadCPU(int(w.tid.Load()))
	}
	return out
}
