package sched

import (
	"context"
	"errors"
	"sync"
	"time"

	"brk/metrics"
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
	}
	e.workers = make([]*worker, cfg.Threads)
	for i := range e.workers {
		n := cfg.Conns / cfg.Threads
		if i < cfg.Conns%cfg.Threads {
			n++
		}
		e.workers[i] = newWorker(i, &e.cfg, e.epoch, n, e.reports)
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
		w.cmds <- command{kind: cmdQuit}
		w.p.Wake()
	}
	e.wg.Wait()
}

// PhaseSpec is one phase to run.
type PhaseSpec struct {
	Depth    int           // outstanding requests per connection
	Duration time.Duration // admission window
	// FailFast ends the phase early when every connection owner failed
	// its setup and none succeeded (phase 0: nothing is listening).
	FailFast bool
}

// PhaseRun is what a phase measured.
type PhaseRun struct {
	Stats       *metrics.Phase
	Active      time.Duration // admission window actually run
	Elapsed     time.Duration // admission plus drain
	Interrupted bool          // ctx ended during the phase
	SetupFailed bool          // FailFast triggered: no setup succeeded
	ClientError string        // the client ran out of a local resource
	CPU         metrics.ProcessCPU
	Machine     float64 // machine busy %, when MachineOK
	MachineOK   bool
	// WorkerBusy is the mean share of wall time the worker threads were
	// running or runnable (waiting for a CPU), when WorkerBusyOK.
	WorkerBusy   float64
	WorkerBusyOK bool
}

var errEngineClosed = errors.New("sched: engine closed")

// interruptGrace is how long an interrupted phase's drain may run before
// its outstanding requests are abandoned.
const interruptGrace = time.Second

// RunPhase runs one phase: admission for the duration (or until ctx ends,
// a client failure, or FailFast), then the drain, and merges every
// worker's recorder.
func (e *Engine) RunPhase(ctx context.Context, spec PhaseSpec) (*PhaseRun, error) {
	if e.closed {
		return nil, errEngineClosed
	}
	run := &PhaseRun{}
	cpu0 := metrics.ReadProcessCPU()
	threads0 := e.threadCPU()
	start := time.Now()
	e.phase++
	conns := e.cfg.Conns
	if e.cfg.Connections {
		conns = spec.Depth // the level is the number of concurrent connections
	}
	// The live counters never reset: the base is read before any worker
	// starts the phase, so nothing of it is missed.
	live0 := e.Snapshot()
	for i, w := range e.workers {
		depth := spec.Depth
		if e.cfg.Connections {
			n := len(e.workers)
			depth = spec.Depth / n
			if i < spec.Depth%n {
				depth++
			}
		}
		w.cmds <- command{kind: cmdStart, depth: depth, phase: e.phase, rec: e.recs[i]}
		e.recs[i] = nil
		w.p.Wake()
	}
	// Machine CPU is read over the loaded window: from the moment every
	// connection has reached its target once to the end of admission.
	var mach0 metrics.MachineCPU
	loaded := false
	timer := time.NewTimer(spec.Duration)
	tick := time.NewTicker(20 * time.Millisecond)
wait:
	for {
		select {
		case <-timer.C:
			break wait
		case <-ctx.Done():
			run.Interrupted = true
			break wait
		case r := <-e.reports:
			// A worker only reports mid-phase when it failed.
			if r.err != nil {
				run.ClientError = r.err.Error()
				break wait
			}
		case <-tick.C:
			if msg := e.fatal(); msg != "" {
				run.ClientError = msg
				break wait
			}
			now := e.Snapshot()
			if !loaded && now.Reached-live0.Reached >= uint64(conns) {
				loaded = true
				mach0 = metrics.ReadMachineCPU()
			}
			if spec.FailFast && now.Established == live0.Established &&
				now.SetupFailed-live0.SetupFailed >= uint64(conns) {
				run.SetupFailed = true
				break wait
			}
		}
	}
	timer.Stop()
	tick.Stop()
	run.Active = time.Since(start)
	if loaded {
		run.Machine, run.MachineOK = metrics.ReadMachineCPU().BusyPct(mach0)
	}
	for _, w := range e.workers {
		w.cmds <- command{kind: cmdStop}
		w.p.Wake()
	}
	merged := metrics.NewPhase()
	// An interrupt lets the drain run for a grace period (so that a signal
	// just after admission still reports a judged phase), then abandons
	// what is outstanding: Ctrl-C never waits for a long --timeout.
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
			run.Interrupted = true // cut short: not judged
			for _, w := range e.workers {
				w.cmds <- command{kind: cmdAbort}
				w.p.Wake()
			}
			continue
		}
		if r.err != nil {
			if run.ClientError == "" {
				run.ClientError = r.err.Error()
			}
			continue
		}
		merged.Merge(r.rec)
		e.recs[r.worker] = r.rec
		got++
	}
	run.Elapsed = time.Since(start)
	run.CPU = metrics.ReadProcessCPU().Sub(cpu0)
	threads1 := e.threadCPU()
	var busy float64
	ok := len(threads0) > 0
	for i := range threads0 {
		if !threads0[i].OK || !threads1[i].OK {
			ok = false
			break
		}
		busy += float64(threads1[i].Run-threads0[i].Run+threads1[i].Wait-threads0[i].Wait) / float64(run.Elapsed)
	}
	if ok {
		run.WorkerBusy = busy / float64(len(threads0))
		run.WorkerBusyOK = true
	}
	if run.ClientError == "" {
		run.ClientError = merged.ClientError
	}
	run.Stats = merged
	return run, nil
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
	}
	return s
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

func (e *Engine) threadCPU() []metrics.ThreadCPU {
	out := make([]metrics.ThreadCPU, len(e.workers))
	for i, w := range e.workers {
		out[i] = metrics.ReadThreadCPU(int(w.tid.Load()))
	}
	return out
}
