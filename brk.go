// Package brk finds the HTTP load at which a service breaks its SLA.
//
// A run raises load phase by phase and judges every phase by outcomes: a
// success is a complete, valid response with an accepted status within the
// timeout. Run returns the verdict and every phase's stats; an Observer is
// called between phases on the caller's goroutine, never per request, and
// gets a live reading once a second from the engine's reporter goroutine;
// a nil Observer is fine. A bad Plan or Target is refused before any traffic
// with a *PlanError, which names the refused fields (Plan.Conns,
// Target.URL, ...). Package brk/report presents a Result as text or HTML;
// its JSON form is the report.
//
// The engine behind it (internal/sched) is a fixed set of OS-thread-locked
// workers, each owning a readiness poller and many nonblocking sockets;
// the verdicts are internal/judge's, pure functions of what it measured.
package brk

import (
	"encoding/json"
	"time"

	"github.com/brk-bench/brk/internal/exchange"
	"github.com/brk-bench/brk/internal/judge"
	"github.com/brk-bench/brk/internal/metrics"
)

// Plan is the load schedule and the SLA.
//
// Levels come from a linear ramp (Search nil: Start, Start + Pace, …) or
// an adaptive search (Search set: Start, ×Growth per phase until the
// first rejection, then bisection to the resolution). In the requests
// test Start, Pace and Max count per connection, as the ramp always has:
// a level is Conns × Start, Conns × (Start + n × Pace), capped at Conns ×
// Max; the search's levels in between, and Search.Resolution, are totals.
//
// A run records the plan it ran, defaults filled in, as Result.Plan (with
// its test and protocol: Mode, Protocol) and, sharded, ShardInfo.Plan;
// their JSON forms are the report's "plan" and "shard.plan" objects
// (planjson.go).
type Plan struct {
	// Load is the test and its own settings: Requests, Connections or
	// Rate (load.go). Nil is the requests test over Conns connections.
	Load Load
	// Conns is the older form of Requests.Conns and Rate.Conns:
	// connections, opened once (default 64).
	Conns int
	Start int // outstanding requests per connection in phase 0 (default = Pace; the search: 1)
	Max   int // per-connection ceiling; 0 = until a phase is rejected
	// Ramp is how the levels are chosen: Linear or Search (ramp.go). Nil
	// is the linear ramp of Pace and Refine, or the search of Search.
	Ramp Ramp
	// Pace is the older form of Linear.Pace: the linear ramp's step per
	// connection each phase (default 1; 0 with Search).
	Pace int
	// Search is the older form of Plan.Ramp = Search{...}: when set, it
	// finds the break by growth and bisection instead of the linear ramp
	// (a nil Search keeps the linear ramp: the library never switches by
	// itself).
	Search *Search
	// Budget, when set, bounds the time of the run's phases: no phase
	// starts that could end past it (its admission, then a drain of at
	// most Timeout); the run then ends with the bracket found so far.
	Budget  time.Duration
	Phase   time.Duration // admission time per phase (default 10s)
	Timeout time.Duration // request budget (default 1s)
	// Accept is the minimum success percentage of a phase, e.g. 99.99;
	// 0 means DefaultAccept (99.99) and AcceptAny a threshold of 0 %.
	// A number, not text: it is read once as the exact decimal fraction
	// that its shortest form spells (strconv.FormatFloat(v, 'f', -1,
	// 64): 99.99 → 9999/10000), so that no float rounding decides a
	// verdict. It must be within 0..100 with at most 9 decimals; a
	// negative value other than AcceptAny, NaN, ±Inf, a value above 100
	// or one with more decimals is refused (a *PlanError), never rounded.
	Accept  float64
	Threads int // worker threads; 0 = CPUs usable by the process, never more than Conns
	// IO is how the workers move bytes on this box: IOAuto (""), IOEpoll
	// or IOUring. The environment variable BRK_IO, when set to one of
	// them, takes its place (a test runs a suite on either). A box's
	// choice: not part of a shard's plan.
	IO string
	// Baseline observes the machine for one idle Phase before the load.
	Baseline bool
	// Requests is the older form of Connections.Requests: the
	// connections test's requests per connection (default 1).
	Requests int
	// KeepAlive is the older form of Connections.KeepAlive: it keeps each
	// connection open, carrying requests one at a time until the phase's
	// admission ends, instead of Requests each: a level of N connections
	// is N requests in flight at depth 1, what most HTTP/1.1 clients do.
	// Each phase opens its own connections and closes each once its last
	// response is in (a connection set up in the window whose setup ends
	// after it carries one request, asking Connection: close). Not with
	// Requests above 1.
	KeepAlive bool
	// MaxP99 and MaxP999, when set, reject a phase whose latency p99
	// (p99.9) exceeds them, beside the success share.
	MaxP99, MaxP999 time.Duration
	// Refine is the older form of Linear.Refine: it bisects, after the
	// first rejected phase, between the last accepted and the first
	// rejected level until they are adjacent.
	Refine bool
	// Repeat is the most runs of one level (default DefaultRepeat, 3):
	// a level whose verdict must be confirmed (a noisy phase, the first
	// rejection before any level held, a conflict, an end of the final
	// pair) runs again until a majority of Repeat runs agrees
	// (docs/search.md). 1 confirms nothing: one phase decides a level.
	Repeat int
	// ServerPIDs are server processes whose CPU and RSS each phase reports
	// (Linux).
	ServerPIDs []int
	// Shard, when set, makes this run one shard of the plan run on several
	// load boxes (shard.go).
	Shard *Sharding
	// The rate test (Rate; RunRate): Start, Pace and Max are requests/s.
	// RateDepth, Arrivals and Seed are the older form of Rate.Depth,
	// Rate.Arrivals and Rate.Seed.
	// RateDepth is the most outstanding requests a connection carries
	// (default 1 over HTTP/1.1: no pipelining unless asked). Arrivals is
	// "uniform" (default: arrival k due at phase start + k/rate) or
	// "poisson" (exponential gaps drawn from Seed; 0 picks a seed, which
	// the result reports). Seed is at most MaxSeed.
	RateDepth int
	Arrivals  string
	Seed      uint64
	// Names name the settings that a reason (Result.Reason,
	// PhaseStats.Reason, PhaseStats.SetupError) suggests changing. The
	// zero value names them as this package's fields ("is below
	// Plan.Accept 99.99%", "give Plan.Max"); a program that took the
	// values from elsewhere gives its own names (the brk command: its
	// flags, "is below --accept 99.99%"). Words only: neither a verdict
	// nor a report's plan depends on them.
	Names Names `json:"-"`

	// What a recorded plan (Result.Plan, ShardInfo.Plan, or one read from
	// a report) holds beside the asked: its test and protocol (Mode,
	// Protocol), and a shard's dialled address (ShardInfo.Plan).
	mode     Mode
	protocol string
	addr     string
}

// Names are the names the reasons give the settings they suggest
// changing (Plan.Names): the judge's type (judge.Names), whose empty
// fields name their settings as this package's Go fields
// (judge.LibraryNames: "Plan.Accept", "Target.TLS.CACert", …).
type Names = judge.Names

// Search is the adaptive search for the break (Plan.Ramp; Plan.Search
// the older form): from
// Plan.Start each phase multiplies the level by Growth until a phase is
// rejected, then bisects between the highest accepted and the lowest
// rejected level until they are within the resolution. A first level
// that is rejected is halved until a level holds (down to 1). A level
// whose verdict may be noise is run again (Plan.Repeat).
type Search struct {
	// Growth is the factor per phase while no phase was rejected
	// (default 2; more than 1).
	Growth float64 `json:"growth"`
	// Resolution ends the bisection when the bracket is at most this
	// many (a total: concurrent requests, connections, requests/s);
	// 0: ResolutionPct of the highest accepted level (default 1 %), and
	// never less than 1.
	Resolution    int     `json:"resolution,omitempty"`
	ResolutionPct float64 `json:"resolution_pct,omitempty"`
}

// DefaultSearchStart is the search's first level when Plan.Start is 0:
// per connection in the requests test (Conns × 1 concurrent requests),
// concurrent connections, or requests/s.
func DefaultSearchStart(m Mode) int { return m.DefaultSearchStart() }

// MaxSeed is the largest Plan.Seed, 2^53−1, and every seed the library
// picks is in 1..MaxSeed: the JSON report writes the seed as a number,
// and a reader that holds JSON numbers as doubles (jq, JavaScript) reads
// every integer up to 2^53 exactly, so `jq .seed` replays the run.
const MaxSeed = 1<<53 - 1

// DefaultAccept is Plan.Accept's default, in percent.
const DefaultAccept = 99.99

// AcceptAny is the Plan.Accept that accepts every phase with attempts,
// whatever its share of successes: a threshold of 0 %, which Accept's zero
// value (the default) cannot say.
const AcceptAny = -1.0

// Header is one request header: exchange.Header, the protocols' own, defined
// once where the encoders read it.
type Header = exchange.Header

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
	// Protocol is the protocol every request is sent over: HTTP1 (the
	// zero value) or HTTP2 (protocol.go). Target.Proto is the protocol
	// the target speaks, with the deprecated HTTP2 below.
	Protocol Protocol
	// HTTP2, when set, speaks HTTP/2 whatever Protocol says.
	//
	// Deprecated: use Protocol: HTTP2 (brk.HTTP2). Kept for one release;
	// Target.Proto resolves the two.
	HTTP2 bool
	// Mix, when set, is a request mix: each admitted request is the next
	// of these in a smooth weighted round-robin, and URL, Method, Body
	// are left empty (the origin is the mix's). At most MaxTargets.
	Mix []Request
}

// PhaseStart identifies a phase as it starts (Observer.PhaseStarted).
type PhaseStart struct {
	Index int    // 0-based
	Level int    // the phase's level (PhaseStats.Level)
	Depth int    // the most outstanding requests a connection holds (⌈Level/Conns⌉)
	Role  string // what the phase does: ramp, grow, down, bisect or repeat
	// Target is Level.
	//
	// Deprecated: use Level; brk sets both. It named the level the word a
	// request's target (Target, Request) means elsewhere.
	Target int
	// Held and Broke are the bracket so far: the highest level that held
	// below the lowest that broke (0: none yet).
	Held, Broke int
	// BudgetLeft is at most how much of Plan.Budget is left as the phase
	// starts (0: no budget).
	BudgetLeft time.Duration
}

// Observer follows a run. WorkersStarted, PhaseStarted and PhaseFinished
// are called on the caller's goroutine between phases. Progress is a live
// reading of the running phase once a second, called from the engine's
// reporter goroutine; it reads the workers' atomics only, so nothing on
// the request path is locked for it. A nil Observer is fine: the run is
// then observed by nothing. Embed NopObserver in an observer that wants
// only some of the calls.
type Observer interface {
	WorkersStarted(threads int)
	PhaseStarted(p PhaseStart)
	PhaseFinished(s *PhaseStats)
	Progress(p Progress)
}

// NopObserver observes nothing. Embedded in an observer, it answers the
// calls that observer does not want.
type NopObserver struct{}

// WorkersStarted does nothing.
func (NopObserver) WorkersStarted(int) {}

// PhaseStarted does nothing.
func (NopObserver) PhaseStarted(PhaseStart) {}

// PhaseFinished does nothing.
func (NopObserver) PhaseFinished(*PhaseStats) {}

// Progress does nothing.
func (NopObserver) Progress(Progress) {}

// Result is a run's verdict and every phase's stats. Its JSON form is the
// JSON report, schema 1 (docs/reports.md; schema/report-1.schema.json).
type Result struct {
	Schema        int     `json:"schema"`
	Test          Mode    `json:"test"`
	URL           string  `json:"url"`
	Protocol      string  `json:"protocol"`
	TLS           bool    `json:"tls"`
	Verdict       Verdict `json:"verdict"`
	Reason        string  `json:"reason"`
	LastAccepted  *int    `json:"last_accepted"`
	FirstRejected *int    `json:"first_rejected"`
	// FinalPair names the phases behind LastAccepted and FirstRejected
	// (a search visits levels out of order: the break is this pair, not
	// the first rejected phase in run order).
	FinalPair *FinalPair `json:"final_pair,omitempty"`
	// Peak is the phase with the highest throughput of successful
	// responses, whatever its verdict; PeakAccepted the accepted phase
	// with the highest, when that is another phase; Knee the lowest
	// level past which twice the load added little but latency (the
	// server's: client-bound phases are not counted).
	Peak         *Peak     `json:"peak,omitempty"`
	PeakAccepted *Peak     `json:"peak_accepted,omitempty"`
	Knee         *Knee     `json:"knee,omitempty"`
	Threads      int       `json:"threads"`
	IO           string    `json:"io,omitempty"` // "uring" when the workers moved bytes through io_uring; else the readiness poller
	Conns        int       `json:"conns,omitempty"`
	Requests     int       `json:"requests_per_connection,omitempty"`
	KeepAlive    bool      `json:"keep_alive,omitempty"` // connections test: Plan.KeepAlive
	TimeoutMs    float64   `json:"timeout_ms"`
	RateDepth    int       `json:"rate_depth,omitempty"` // rate test: outstanding per connection at most
	Arrivals     string    `json:"arrivals,omitempty"`   // rate test: uniform or poisson
	Seed         uint64    `json:"seed,omitempty"`       // rate test, poisson: the seed that repeats the run
	Accept       string    `json:"accept_pct"`
	Baseline     *Baseline `json:"baseline,omitempty"`
	// Plan is the plan as run, defaults filled in, so that a script can
	// reproduce the run. Its JSON form is the report's "plan" (phase in
	// seconds, timeout and limits in milliseconds; Plan.MarshalJSON).
	Plan Plan `json:"plan"`
	// Version is brk's version as the Go toolchain recorded it.
	Version string `json:"version"`
	// Command is the command line that ran the test (set by the CLI).
	Command string `json:"command,omitempty"`
	// StartedAt is when the run started (RFC 3339, UTC).
	StartedAt string        `json:"started_at"`
	Phases    []*PhaseStats `json:"phases"`
	// UnphasedSetups counts the connections to the target set up before
	// a run that ended without any phase to count them in: a shard of a
	// rate test sets its connections up, then waits for its partners, and
	// its join may fail (docs/shards.md).
	UnphasedSetups uint64 `json:"unphased_setups,omitempty"`
	// Shard is this shard's part of a sharded run (Plan.Shard); Shards lists
	// every shard of a merged or coordinated report.
	Shard  *ShardInfo     `json:"shard,omitempty"`
	Shards []ShardSummary `json:"shards,omitempty"`
	// RunID names the run, the same on every shard of a sharded run (set
	// by the CLI; docs/prometheus.md): the run_id label of its Prometheus
	// series.
	RunID string `json:"run_id,omitempty"`
	// CoolDowns are the waits before re-runs and bisection probes, with
	// the requests they sent (counted in no phase).
	CoolDowns []CoolDown `json:"cool_downs,omitempty"`
	// Prometheus is what the CLI's --prometheus-remote-write push sent
	// and dropped (nil: no push).
	Prometheus *PushStats `json:"prometheus,omitempty"`
	// HMAC authenticates a shard's report under the shared token
	// (Result.Sign, VerifyReport); brk merge with BRK_TOKEN checks it.
	HMAC string `json:"hmac,omitempty"`
}

// PushStats counts the samples a run pushed to a Prometheus remote-write
// receiver: accepted by it (Sent) and dropped unsent (Dropped: a full
// queue, a failed request, or still queued when the flush at exit ended).
type PushStats struct {
	Sent    uint64 `json:"sent"`
	Dropped uint64 `json:"dropped"`
	// Error is the last send error ("" when none).
	Error string `json:"error,omitempty"`
}

// FinalPair is a run's last accepted and lowest rejected level with the
// phases that decided them (indexes into Phases; nil: none) and, for a
// level run more than once, its runs: the held level was accepted
// HeldRuns times of HeldOf runs; the broken one rejected BrokeRun times of
// BrokeOf.
type FinalPair struct {
	HeldPhase  *int `json:"held_phase"`
	BrokePhase *int `json:"broke_phase"`
	HeldRuns   int  `json:"held_runs,omitempty"`
	HeldOf     int  `json:"held_of,omitempty"`
	BrokeRun   int  `json:"broke_run,omitempty"`
	BrokeOf    int  `json:"broke_of,omitempty"`
	// Interval is where the break lies, in levels, at Confidence (a
	// share, 0.95): the final pair widened by the noise the runs showed
	// (docs/search.md). Nil when the run bracketed no break.
	Interval   *Interval `json:"interval,omitempty"`
	Confidence float64   `json:"confidence,omitempty"`
	// Boundary is "cliff" or "gradual": how sharply the binding term's
	// margin falls across the break.
	Boundary string `json:"boundary,omitempty"`
	// Binding names the SLA term that decided the break ("success ratio
	// (timeouts)", "p99", "setups").
	Binding string `json:"binding,omitempty"`
	// Stalls are the runs whose failures came in one short span while
	// the rest of the phase held; Conflicts the levels rejected below a
	// level that held, after their re-runs (docs/search.md).
	Stalls    []PhaseStall `json:"stalls,omitempty"`
	Conflicts []Conflict   `json:"conflicts,omitempty"`
}

// Interval is a closed range of levels: the break lies above Low and at
// or below High.
type Interval struct {
	Low  int `json:"low"`
	High int `json:"high"`
}

// Baseline is the idle observation made before the load (Plan.Baseline). It
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

// LatencyPoint is one point of a latency distribution.
type LatencyPoint struct {
	Percentile float64 `json:"percentile"`
	Ms         float64 `json:"value_ms"` // the latency at Percentile
	Count      uint64  `json:"count"`    // responses at or below Ms (its histogram bucket)
}

// Setups counts connection setups: the engine's own counts
// (metrics.Setups), defined once where they are counted.
type Setups = metrics.Setups

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
	Index int    `json:"index"`
	Role  string `json:"role"`            // ramp, grow, down, bisect or repeat
	Probe bool   `json:"probe,omitempty"` // a bisection probe (role bisect or repeat)
	Level int    `json:"level"`           // the total: concurrent requests, connections or requests/s
	// Depth is the most outstanding requests a connection held: ⌈Level ÷
	// conns⌉ (on Level mod conns connections; the others one fewer).
	Depth       int  `json:"depth"`
	Accepted    bool `json:"accepted"`
	Interrupted bool `json:"interrupted"`
	// Inconclusive: the phase has no server verdict. It ended the run, or
	// (a search's phase the client could not drive, ClientBound) capped
	// the levels the search bisects below.
	Inconclusive bool `json:"inconclusive"`
	// NotJudged: the phase ran but has no verdict (a shard without a
	// coordinator; in brk merge, a phase past the merged run's end).
	NotJudged bool    `json:"not_judged,omitempty"`
	Reason    string  `json:"reason,omitempty"`
	DurationS float64 `json:"duration_s"` // admission plus drain
	ActiveS   float64 `json:"active_s"`   // admission window
	Counts    Counts  `json:"counts"`
	// StatusCodes counts complete responses by status code ("other" for
	// a code outside 100..599), whatever their outcome.
	StatusCodes map[string]uint64 `json:"status_codes"`
	// BodySamples are the first bytes (at most 64) of the first few
	// bodies that failed Target.ExpectBody or Target.ExpectEcho.
	BodySamples    []string `json:"body_samples,omitempty"`
	SuccessPct     float64  `json:"success_pct"`
	RequestsPerSec float64  `json:"requests_per_sec"` // successes ÷ duration (drain included)
	LatencyMs      Latency  `json:"latency_ms"`
	// LatencyHdr is the phase's merged latency histogram (µs, 1..60e6, 3
	// digits) in HdrHistogram's base64 V2 compressed encoding, so reports
	// from several load boxes can be merged (hdrhistogram.Decode).
	LatencyHdr string `json:"latency_hdr"`
	// LatencyDistribution is that histogram's percentile distribution
	// (empty when the phase had no responses): the latency at each of 169
	// percentiles from p0 to p99.999, 10 per half distance to 100 % (0, 5,
	// …, 50, 52.5, …, 75, 76.25, …), as HdrHistogram's percentile output
	// ticks them, each with the count of responses at or below it.
	LatencyDistribution []LatencyPoint `json:"latency_distribution"`
	SetupLatencyMs      Latency        `json:"setup_latency_ms"`
	MeanOutstanding     float64        `json:"mean_outstanding"`
	TargetCoveragePct   float64        `json:"target_coverage_pct"`
	TargetReachedOnce   uint64         `json:"target_reached_once"` // connections that held the full depth at least once
	TimeAtTargetPct     float64        `json:"conn_time_at_target_pct"`
	BlockedWrites       uint64         `json:"blocked_writes"`
	MaxSendDelayMs      float64        `json:"max_send_delay_ms"`
	MaxLatenessMs       float64        `json:"max_deadline_lateness_ms"`
	Setups              Setups         `json:"setups"`
	TLSProbes           uint64         `json:"tls_probes,omitempty"` // connections the TLS probe opened after the phase, beside Setups (docs/semantics.md)
	TLS                 *TLSStats      `json:"tls,omitempty"`
	ClientCPU           ClientCPU      `json:"client_cpu"`
	MachineCPUPct       *float64       `json:"machine_cpu_pct"`
	WorkerBusyPct       *float64       `json:"worker_busy_pct"`
	// ProcessWaitP99Ms is the p99 of the waits of brk's process's
	// goroutines for a CPU over the phase (Go's scheduler latency; absent
	// where unavailable). The workers wait too when other work in the
	// process holds every CPU the runtime may use; from half of the
	// timeout (at least 5 ms) the client counts as starved (ClientBound).
	ProcessWaitP99Ms *float64 `json:"process_wait_p99_ms,omitempty"`
	ClientBound      bool     `json:"client_bound"`
	ProtocolFault    string   `json:"protocol_fault,omitempty"`
	SetupError       string   `json:"setup_error,omitempty"`
	// HTTP/2 (absent over HTTP/1.1, except streams_replayed): streams
	// the client reset after their deadline (RST_STREAM CANCEL), GOAWAY
	// frames received, written requests replayed on a new connection
	// (HTTP/2: above a GOAWAY's last stream id or refused; HTTP/1.1:
	// idempotent followers of a close), and the lowest
	// SETTINGS_MAX_CONCURRENT_STREAMS a server set.
	ResetsSent      uint64 `json:"resets_sent,omitempty"`
	GoAwaysReceived uint64 `json:"goaways_received,omitempty"`
	StreamsReplayed uint64 `json:"streams_replayed,omitempty"`
	PeerMaxStreams  *int64 `json:"peer_max_streams,omitempty"`
	// IdleCloses counts connections the server ended while nothing was
	// outstanding on them, announcing it with a response that answered no
	// request (HTTP/1.1: an idle timeout's 408 Request Timeout with
	// Connection: close, as haproxy sends), with a 408 that crossed the
	// request just written on the idle connection, or (HTTP/1.1) with a
	// reset or close before a byte of the response to a GET or HEAD
	// written on it idle after an earlier response (that request was
	// replayed once). Each connection was replaced; no request failed for
	// it. Absent when none.
	IdleCloses uint64 `json:"idle_closes,omitempty"`
	// BytesReceived counts the bytes read from the server in the phase
	// (responses, their headers and framing; after TLS decryption).
	BytesReceived uint64 `json:"bytes_received"`
	// SetupsPerSec is established setups ÷ duration (connections test).
	SetupsPerSec float64 `json:"setups_per_sec"`
	// Server is the CPU and memory of each Plan.ServerPIDs process over the
	// phase.
	Server []ServerCPU `json:"server,omitempty"`
	// Raw is this load box's own measurement of the phase in a sharded
	// run (counts, integrals, encoded histograms, CPU), in the engine's
	// JSON form: what brk merge merges and judges again. It is opaque to a
	// library user: its fields are the engine's, not the API's.
	Raw json.RawMessage `json:"raw,omitempty"`
	// Rate is the rate test's schedule accounting (nil in the other
	// tests). There latency_ms counts from each request's scheduled
	// instant: backlog is latency.
	Rate *RateStats `json:"rate,omitempty"`
	// Timeline is the phase's outcomes over time (nil when the phase
	// measured nothing).
	Timeline *Timeline `json:"timeline,omitempty"`
	// Scatter is a uniform sample of the phase's complete responses (at
	// most 2,000), each with its arrival and latency: the HTML report's
	// latency-over-time plot. Not in the JSON: a report read back from
	// JSON, or merged from shards' reports, has none.
	Scatter []ScatterPoint `json:"-"`
	// Targets is each target's share of the phase in a request mix
	// (Target.Mix), in mix order; absent without a mix.
	Targets []TargetStats `json:"targets,omitempty"`
	// Evidence is what the phase says beside its verdict: each SLA
	// term's margin and the binding one, a stall, too close to call, a
	// busy box (docs/search.md). Nil for a phase not judged.
	Evidence *Evidence `json:"evidence,omitempty"`
	// OtherCPU is the box's other load over the phase: CPU used by
	// processes other than brk and the server (nil where unreadable).
	OtherCPU *OtherCPU `json:"other_cpu,omitempty"`
}

// Timeline is one phase's outcomes span by span, from the phase's start
// through its drain: one point per 100 ms, or per WidthS seconds in a
// phase so long that 100 ms points would exceed MaxTimelinePoints.
// Outcomes are counted when they were decided (a response's arrival, a
// deadline's expiry), so warm-up and stalls show.
type Timeline struct {
	StartS float64         `json:"start_s"` // the phase's start, seconds after the run's start
	WidthS float64         `json:"width_s"` // each point's span; the last point may be cut short by the phase's end
	Points []TimelinePoint `json:"points"`
}

// ScatterPoint is one sampled response of a phase: it arrived AtS
// seconds after the run's start (the timeline's clock) and took Ms
// milliseconds from its admission.
type ScatterPoint struct {
	AtS, Ms float64
}

// TimelinePoint is one span of a Timeline.
type TimelinePoint struct {
	Succeeded uint64 `json:"succeeded"`
	Failed    uint64 `json:"failed"` // every category
	// P99Ms is the 99th percentile latency of the complete responses
	// that arrived in the span (0: none), from a coarse histogram: the
	// upper edge of its bucket, at most 12.5 % above the true value. In a
	// report merged from several load boxes it is the highest of theirs.
	P99Ms float64 `json:"p99_ms"`
	// Statuses counts the complete responses that arrived in the span by
	// status class, whatever their outcome (absent: none).
	Statuses StatusClasses `json:"statuses,omitzero"`
	// SlowP99 and SlowP999 count the span's complete responses slower
	// than Plan.MaxP99 and Plan.MaxP999 (absent: none, or no limit).
	SlowP99  uint64 `json:"slow_p99,omitempty"`
	SlowP999 uint64 `json:"slow_p999,omitempty"`
	// Setups counts the connection setups that ended in the span, and
	// SetupsFailed those of them that failed or timed out (absent: none).
	Setups       uint64 `json:"setups,omitempty"`
	SetupsFailed uint64 `json:"setups_failed,omitempty"`
}

// StatusClasses counts responses by status class; Other counts codes
// outside 100..599.
type StatusClasses struct {
	S1xx  uint64 `json:"1xx,omitempty"`
	S2xx  uint64 `json:"2xx,omitempty"`
	S3xx  uint64 `json:"3xx,omitempty"`
	S4xx  uint64 `json:"4xx,omitempty"`
	S5xx  uint64 `json:"5xx,omitempty"`
	Other uint64 `json:"other,omitempty"`
}

// MaxTimelinePoints bounds a phase's Timeline whatever the phase's length.
const MaxTimelinePoints = 128

// The bound is the engine's: this does not compile when they differ.
const _ = uint(MaxTimelinePoints-metrics.TimelineSpans) + uint(metrics.TimelineSpans-MaxTimelinePoints)

// ServerCPU is one server process's CPU and memory over a phase, read from
// /proc/PID/stat at the phase's start and end (Linux).
type ServerCPU struct {
	PID           int     `json:"pid"`
	UserS         float64 `json:"user_s"`
	SystemS       float64 `json:"system_s"`
	UsPerResponse float64 `json:"us_per_response"` // per successful response
	RSSBytes      uint64  `json:"rss_bytes"`       // at the phase's end
	// Gone is set when the process could not be read at the phase's end
	// (it exited); its figures are then zero.
	Gone bool `json:"gone,omitempty"`
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
