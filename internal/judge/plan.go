package judge

import "time"

// MaxLevel bounds a level: requests per connection in the requests test
// (each outstanding request has a ring slot per connection), concurrent
// connections in the connections test. A run without --max that gets
// there ends inconclusive instead of allocating without bound.
const MaxLevel = 1 << 16

// MaxOutstanding bounds the requests test's total level (connections ×
// requests per connection): the rings hold one slot per outstanding
// request.
const MaxOutstanding = 1 << 22

// MaxRate bounds the rate test's level (requests/s).
const MaxRate = 10_000_000

// Plan is a run's phase schedule and what its phases are judged against.
type Plan struct {
	Mode  Mode
	Conns int // connections of the requests test (of the whole run, over every shard)
	// Levels chooses each phase's level (a total).
	Levels    Levels
	Phase     time.Duration
	Timeout   time.Duration // the request budget
	Accept    Accept
	Addr      string // the dialed address, named in setup failures
	RateDepth int    // rate test: outstanding requests per connection at most
	// MaxP99 and MaxP999, when set, reject a phase whose latency
	// percentile exceeds them.
	MaxP99, MaxP999 time.Duration
	// Repeat runs each bisection probe this many times (a probe is
	// accepted only if every repetition is).
	Repeat int
	// Budget, when set, bounds the time of the run's phases: no phase
	// starts that could end past it. PhaseCost is the most a phase may
	// take (admission and drain); with Slotted, phases run on absolute
	// slots of PhaseCost (a sharded run), and the time spent is the
	// number of phases × PhaseCost rather than a clock's reading.
	Budget    time.Duration
	PhaseCost time.Duration
	Slotted   bool
	// Unjudged runs every phase of a plan whose levels do not depend on
	// verdicts (a linear ramp to its max) without judging it: a shard
	// without a coordinator, whose phases a merge judges later. Only an
	// interrupt stops it early.
	Unjudged bool
	// Names name the settings the reasons suggest changing (zero: the
	// library's field names, LibraryNames).
	Names Names
}

// Judged is one finished phase with its judgement.
type Judged struct {
	Judgement
	Index  int
	Depth  int  // the most requests a connection held (requests test), the rate test's depth, or 1
	Target int  // the level
	Owners int  // the connections that carry it (of the whole run)
	Role   Role // what the phase did in the choice of levels
	Probe  bool // a bisection probe or its repetition
	Run    *Measurement
	// Evidence is what the phase says beside its verdict (evidence.go).
	Evidence Evidence
	// ClientStarved: the phase's client had no slack, its workers
	// saturated or kept waiting for a CPU by the rest of their process
	// (verdict.go): its throughput describes the client.
	ClientStarved bool
}
