package judge

import (
	"time"

	"github.com/brk-bench/brk/internal/metrics"
)

// Measurement is what one phase measured: the merged counters, time
// integrals and histograms, the CPU readings and how the phase ended. It
// is one serialisable value (encoding/json) that merges with another
// phase's of the same level, measured on another load box, and the verdict
// is computed from it alone (Judge).
type Measurement struct {
	Stats       *metrics.Phase `json:"stats"`
	Active      time.Duration  `json:"active_ns"`  // admission window actually run
	Elapsed     time.Duration  `json:"elapsed_ns"` // admission plus drain
	Interrupted bool           `json:"interrupted"`
	// SetupFailed is FailFast's trigger: no setup succeeded.
	SetupFailed bool               `json:"setup_failed"`
	ClientError string             `json:"client_error,omitempty"` // the client ran out of a local resource
	CPU         metrics.ProcessCPU `json:"cpu"`
	// SpeaksTLS is the probe's answer when phase 0 over plain TCP heard
	// not a byte from any connection: the port answered a TLS ClientHello
	// with TLS (Engine.RunPhase; outside the counts).
	SpeaksTLS bool `json:"speaks_tls,omitempty"`
	// Machine is the machine's busy % over the loaded window, when
	// MachineOK (the busiest box's, after a merge).
	Machine   float64 `json:"machine_busy_pct"`
	MachineOK bool    `json:"machine_ok"`
	// WorkerBusy is the mean share of wall time the worker threads were
	// running or runnable (waiting for a CPU), when WorkerBusyOK.
	WorkerBusy   float64 `json:"worker_busy"`
	WorkerBusyOK bool    `json:"worker_busy_ok"`
	// ProcessWait is the p99 of the waits of this process's goroutines
	// for a P over the phase (machine.SchedWaits: a worker back from its
	// poller waits too when other goroutines hold every P), when
	// ProcessWaitOK; the longest box's after a merge.
	ProcessWait   time.Duration `json:"process_wait_p99_ns,omitempty"`
	ProcessWaitOK bool          `json:"process_wait_ok,omitempty"`
	// Other is the box's other load over the admission window: CPU used
	// by processes other than brk and the server (the busiest box's,
	// after a merge).
	Other metrics.OtherCPU `json:"other_cpu"`
	// Boxes is the number of load boxes merged into this measurement.
	Boxes int `json:"boxes"`
	// Behind names, in a sharded rate test's merge (shard.Merge), the
	// shards whose own client fell behind their share of the schedule by
	// more than MaxShortfall; the unfulfilled rule names them.
	Behind []Behind `json:"behind,omitempty"`
}

// Behind is one shard whose client fell behind its schedule.
type Behind struct {
	Shard     int     `json:"shard"`
	Shortfall float64 `json:"shortfall"`
}

// Merge adds q, the same phase measured on another load box: counts,
// integrals, histograms and CPU add up; the phase lasted as long as the
// longest; an interrupt or a client failure on either box marks the
// merge; FailFast and the TLS probe's answer hold only if they held on
// every box. Behind is the sharded merge's (shard.Merge), not added here.
func (m *Measurement) Merge(q *Measurement) {
	if m.Boxes == 0 {
		*m = *q
		stats := metrics.NewPhase()
		stats.Add(q.Stats)
		m.Stats = stats
		return
	}
	workers, qWorkers := m.Stats.Workers, q.Stats.Workers
	m.Stats.Add(q.Stats)
	m.Active = max(m.Active, q.Active)
	m.Elapsed = max(m.Elapsed, q.Elapsed)
	m.Interrupted = m.Interrupted || q.Interrupted
	m.SetupFailed = m.SetupFailed && q.SetupFailed
	m.SpeaksTLS = m.SpeaksTLS && q.SpeaksTLS
	if m.ClientError == "" {
		m.ClientError = q.ClientError
	}
	m.CPU.User += q.CPU.User
	m.CPU.System += q.CPU.System
	switch {
	case q.MachineOK && (!m.MachineOK || q.Machine > m.Machine):
		m.Machine, m.MachineOK = q.Machine, true
	}
	if q.Other.OK && (!m.Other.OK || q.Other.BusyShare() > m.Other.BusyShare()) {
		m.Other = q.Other
	}
	if m.WorkerBusyOK && q.WorkerBusyOK && workers+qWorkers > 0 {
		m.WorkerBusy = (m.WorkerBusy*float64(workers) + q.WorkerBusy*float64(qWorkers)) / float64(workers+qWorkers)
	} else {
		m.WorkerBusyOK = false
	}
	if q.ProcessWaitOK && (!m.ProcessWaitOK || q.ProcessWait > m.ProcessWait) {
		m.ProcessWait, m.ProcessWaitOK = q.ProcessWait, true
	}
	m.Boxes += q.Boxes
}
