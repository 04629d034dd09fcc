// Package brk finds the HTTP load at which a service breaks its SLA.
//
// A run raises load phase by phase and judges every phase by outcomes: a
// success is a complete, valid response with an accepted status within the
// timeout. Run returns the verdict and every phase's stats; an Observer is
// called between phases on the caller's goroutine, never per request (a
// ProgressObserver also gets a live reading once a second). Package
// brk/report presents a Result as text or HTML; its JSON form is the report.
//
// The engine behind it (package sched) is a fixed set of OS-thread-locked
// workers, each owning a readiness poller and many nonblocking sockets.
package brk

import "time"

// Plan is the load schedule and the SLA.
type Plan struct {
	Conns   int           // connections, opened once (default 64)
	Start   int           // outstanding requests per connection in phase 0 (default = Pace)
	Pace    int           // added per connection each phase (default 1)
	Max     int           // per-connection ceiling; 0 = until a phase is rejected
	Phase   time.Duration // admission time per phase (default 10s)
	Timeout time.Duration // request budget (default 1s)
	// Accept is the minimum success percentage as decimal text, e.g.
	// "99.99" (default). It is parsed once into an exact fraction.
	Accept  string
	Threads int // worker threads; 0 = CPUs usable by the process, never more than Conns
	// Baseline observes the machine for one idle Phase before the load.
	Baseline bool
	// Requests is the connections test's requests per connection (default 1).
	Requests int
	// The rate test (RunRate): Start, Pace and Max are requests/s.
	// RateDepth is the most outstanding requests a connection carries
	// (default 1 over HTTP/1.1: no pipelining unless asked). Arrivals is
	// "uniform" (default: arrival k due at phase start + k/rate) or
	// "poisson" (exponential gaps drawn from Seed; 0 picks a seed, which
	// the result reports).
	RateDepth int
	Arrivals  string
	Seed      uint64
}

// Header is one request header.
type Header struct{ Name, Value string }

// Target is what every request asks and what every response must be.
type Target struct {
	URL     string   // http://host[:port]/path
	Connect string   // dial this host:port instead of the URL's host (Host header stays)
	Method  string   // "" = GET, or POST when Body is set
	Headers []Header // extra request headers
	Body    []byte   // request body (POST, application/octet-stream); nil = none
	// ExpectStatus lists accepted status codes; empty = any 2xx.
	ExpectStatus []int
	// ExpectBody, when non-nil, is the exact body every response must have.
	ExpectBody []byte
	// ExpectEcho requires every response body to equal Body.
	ExpectEcho bool
	// TLS configures https:// targets.
	TLS TLSOptions
}

// Phase identifies a phase as it starts.
type Phase struct {
	Index  int // 0-based
	Depth  int // outstanding requests per connection
	Target int // Conns × Depth: the level
}

// Observer is called on the caller's goroutine between phases.
type Observer interface {
	WorkersStarted(threads int)
	PhaseStarted(p Phase)
	PhaseFinished(s *PhaseStats)
}

// Verdict names how a run ended.
type Verdict string

// The verdicts of SPEC §5.
const (
	VerdictDone         Verdict = "done"
	VerdictBroken       Verdict = "broken"
	VerdictInconclusive Verdict = "inconclusive"
	VerdictInterrupted  Verdict = "interrupted"
)

// ExitCode maps a verdict to the CLI's exit status.
func (v Verdict) ExitCode() int {
	switch v {
	case VerdictDone:
		return 0
	case VerdictBroken:
		return 1
	case VerdictInterrupted:
		return 130
	}
	return 3
}

// Result is a run's verdict and every phase's stats. Its JSON form is the
// report of SPEC §6, schema 1.
type Result struct {
	Schema        int           `json:"schema"`
	Test          Mode          `json:"test"`
	URL           string        `json:"url"`
	Protocol      string        `json:"protocol"`
	TLS           bool          `json:"tls"`
	Verdict       Verdict       `json:"verdict"`
	Reason        string        `json:"reason"`
	LastAccepted  *int          `json:"last_accepted"`
	FirstRejected *int          `json:"first_rejected"`
	Threads       int           `json:"threads"`
	Conns         int           `json:"conns,omitempty"`
	Requests      int           `json:"requests_per_connection,omitempty"`
	RateDepth     int           `json:"rate_depth,omitempty"` // rate test: outstanding per connection at most
	Arrivals      string        `json:"arrivals,omitempty"`   // rate test: uniform or poisson
	Seed          uint64        `json:"seed,omitempty"`       // rate test, poisson: the seed that repeats the run
	TimeoutMs     float64       `json:"timeout_ms"`
	Accept        string        `json:"accept_pct"`
	Baseline      *Baseline     `json:"baseline,omitempty"`
	Phases        []*PhaseStats `json:"phases"`
}

// Baseline is the idle observation made before the load (--baseline). It
// is shown beside the loaded phases, never subtracted from them.
type Baseline struct {
	DurationS     float64   `json:"duration_s"`
	MachineCPUPct *float64  `json:"machine_cpu_pct"` // null where unavailable
	ClientCPU     ClientCPU `json:"client_cpu"`
}

// Counts are a phase's outcomes. Attempted = Succeeded + every failure.
type Counts struct {
	Attempted      uint64 `json:"attempted"`
	Succeeded      uint64 `json:"succeeded"`
	Timeout        uint64 `json:"timeout"`
	Transport      uint64 `json:"transport"`
	Abandoned      uint64 `json:"abandoned"`
	Connect        uint64 `json:"connect"`
	ConnectTimeout uint64 `json:"connect_timeout"`
	Status         uint64 `json:"status"`
	Body           uint64 `json:"body"`
	Protocol       uint64 `json:"protocol"`
}

// Latency summarises complete responses, in milliseconds.
type Latency struct {
	Count uint64  `json:"count"`
	Mean  float64 `json:"mean"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P99   float64 `json:"p99"`
	P999  float64 `json:"p999"`
	Max   float64 `json:"max"`
}

// Setups counts connection setups.
type Setups struct {
	Attempted   uint64 `json:"attempted"`
	Established uint64 `json:"established"`
	Failed      uint64 `json:"failed"`
	TimedOut    uint64 `json:"timed_out"`
	Resumed     uint64 `json:"resumed"`
}

// TLSStats is what the phase's TLS setups negotiated (one of them) and how
// many resumed a session.
type TLSStats struct {
	Version string `json:"version"`
	Cipher  string `json:"cipher"`
	Group   string `json:"group"`
	Resumed uint64 `json:"resumed"`
}

// ClientCPU is the client process's CPU over a phase.
type ClientCPU struct {
	UserS         float64 `json:"user_s"`
	SystemS       float64 `json:"system_s"`
	UsPerResponse float64 `json:"us_per_response"`
}

// PhaseStats is what one phase measured.
type PhaseStats struct {
	Index          int     `json:"index"`
	Level          int     `json:"level"` // Conns × Depth
	Depth          int     `json:"depth"`
	Accepted       bool    `json:"accepted"`
	Interrupted    bool    `json:"interrupted"`
	Inconclusive   bool    `json:"inconclusive"` // the phase ended the run inconclusive (no server verdict)
	Reason         string  `json:"reason,omitempty"`
	DurationS      float64 `json:"duration_s"` // admission plus drain
	ActiveS        float64 `json:"active_s"`   // admission window
	Counts         Counts  `json:"counts"`
	SuccessPct     float64 `json:"success_pct"`
	RequestsPerSec float64 `json:"requests_per_sec"` // successes ÷ duration (drain included)
	LatencyMs      Latency `json:"latency_ms"`
	// LatencyHdr is the phase's merged latency histogram (µs, 1..60e6, 3
	// digits) in HdrHistogram's base64 V2 compressed encoding, so reports
	// from several load boxes can be merged (hdrhistogram.Decode).
	LatencyHdr        string    `json:"latency_hdr"`
	SetupLatencyMs    Latency   `json:"setup_latency_ms"`
	MeanOutstanding   float64   `json:"mean_outstanding"`
	TargetCoveragePct float64   `json:"target_coverage_pct"`
	TargetReachedOnce uint64    `json:"target_reached_once"` // connections that held the full depth at least once
	TimeAtTargetPct   float64   `json:"conn_time_at_target_pct"`
	BlockedWrites     uint64    `json:"blocked_writes"`
	MaxSendDelayMs    float64   `json:"max_send_delay_ms"`
	MaxLatenessMs     float64   `json:"max_deadline_lateness_ms"`
	Setups            Setups    `json:"setups"`
	TLS               *TLSStats `json:"tls,omitempty"`
	ClientCPU         ClientCPU `json:"client_cpu"`
	MachineCPUPct     *float64  `json:"machine_cpu_pct"`
	WorkerBusyPct     *float64  `json:"worker_busy_pct"`
	ClientBound       bool      `json:"client_bound"`
	ProtocolFault     string    `json:"protocol_fault,omitempty"`
	SetupError        string    `json:"setup_error,omitempty"`
	// SetupsPerSec is established setups ÷ duration (connections test).
	SetupsPerSec float64 `json:"setups_per_sec"`
	// Rate is the rate test's schedule accounting (nil in the other
	// tests). There latency_ms counts from each request's scheduled
	// instant: backlog is latency.
	Rate *RateStats `json:"rate,omitempty"`
}

// RateStats is what a rate test phase offered and how the client kept its
// schedule. Scheduled = Written + ExpiredUnsent when no connection is lost
// with requests not yet written.
type RateStats struct {
	Scheduled     uint64 `json:"scheduled"`      // arrivals due in the admission window
	Written       uint64 `json:"written"`        // requests completely written
	ExpiredUnsent uint64 `json:"expired_unsent"` // deadline passed before written (also counted as timeout)
	// OfferedPerSec is scheduled ÷ admission window; AchievedPerSec
	// successes ÷ phase duration (drain included).
	OfferedPerSec  float64 `json:"offered_per_sec"`
	AchievedPerSec float64 `json:"achieved_per_sec"`
	// SendLagMs: scheduled → completely written. ServiceMs: written →
	// response complete. ClientLagMs: scheduled → taken up by its worker
	// (the send lag no slot wait explains: CPU, timer lateness).
	SendLagMs   Latency `json:"send_lag_ms"`
	ServiceMs   Latency `json:"service_ms"`
	ClientLagMs Latency `json:"client_lag_ms"`
	// ShortfallPct is how far the offered rate fell short of the schedule
	// because the client was late; above 1 % the phase is unfulfilled.
	ShortfallPct float64 `json:"shortfall_pct"`
}
