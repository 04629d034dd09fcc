package brk

import (
	"fmt"
	"time"

	"github.com/brk-bench/brk/sched"
)

// Defaults fills zero fields of p with the CLI's defaults.
func (p *Plan) Defaults() {
	if p.Conns == 0 {
		p.Conns = 64
	}
	if p.Pace == 0 {
		p.Pace = 1
	}
	if p.Start == 0 {
		p.Start = p.Pace
	}
	if p.Phase == 0 {
		p.Phase = 10 * time.Second
	}
	if p.Timeout == 0 {
		p.Timeout = time.Second
	}
	if p.Accept == "" {
		p.Accept = "99.99"
	}
}

// validatePlan checks a plan with its defaults filled in against the
// engine's bounds and parses its acceptance threshold. In the connections
// test the level is the connection count: --conn does not apply, and the
// threads are capped at the level.
func validatePlan(p Plan, m Mode) (sched.Accept, error) {
	if err := validateSharper(p); err != nil {
		return sched.Accept{}, err
	}
	if m == ModeRate {
		return validateRatePlan(p)
	}
	if m == ModeConnections {
		p.Conns, p.Threads = 1, 0
	}
	switch {
	case p.RateDepth != 0 || p.Arrivals != "" || p.Seed != 0:
		return sched.Accept{}, usage("--rate-depth, --arrivals and --seed apply to the rate test only")
	case p.Conns < 1:
		return sched.Accept{}, usage("--conn must be at least 1")
	case p.Start < 1 || p.Pace < 1:
		return sched.Accept{}, usage("--start and --pace must be at least 1")
	case p.Max < 0:
		return sched.Accept{}, usage("--max must not be negative")
	case p.Max > 0 && p.Start > p.Max:
		return sched.Accept{}, usage("--start (%d) is above --max (%d)", p.Start, p.Max)
	case p.Phase < time.Millisecond:
		return sched.Accept{}, usage("--phase must be at least 1ms")
	case p.Timeout < time.Millisecond:
		return sched.Accept{}, usage("--timeout must be at least 1ms")
	case p.Threads < 0:
		return sched.Accept{}, usage("--threads must not be negative")
	case p.Threads > p.Conns:
		return sched.Accept{}, usage("--threads (%d) is more than --conn (%d): a thread needs a connection", p.Threads, p.Conns)
	case p.Max > sched.MaxLevel || p.Start > sched.MaxLevel:
		return sched.Accept{}, usage("--start/--max above %d are not supported", sched.MaxLevel)
	case p.Conns > sched.MaxLevel:
		return sched.Accept{}, usage("--conn above %d is not supported", sched.MaxLevel)
	case p.Conns*max(p.Start, p.Max) > sched.MaxOutstanding:
		return sched.Accept{}, usage("--conn × --start/--max above %d outstanding requests is not supported", sched.MaxOutstanding)
	}
	return parseAccept(p.Accept)
}

// validateSharper checks what every test shares: the latency limits,
// --refine's repetitions and the --server-pid processes.
func validateSharper(p Plan) error {
	switch {
	case p.MaxP99 < 0 || p.MaxP999 < 0:
		return usage("--max-p99 and --max-p999 must not be negative")
	case p.Repeat < 0:
		return usage("--repeat must be at least 1")
	case p.Repeat > 1 && !p.Refine:
		return usage("--repeat %d repeats --refine's probes: give --refine", p.Repeat)
	}
	return checkServerPIDs(p.ServerPIDs)
}

func parseAccept(s string) (sched.Accept, error) {
	acc, err := sched.ParseAccept(s)
	if err != nil {
		return sched.Accept{}, usage("%v", err)
	}
	return acc, nil
}

// validateRatePlan is validatePlan for the rate test: Start, Pace and Max
// are requests/s.
func validateRatePlan(p Plan) (sched.Accept, error) {
	switch {
	case p.Conns < 1:
		return sched.Accept{}, usage("--conn must be at least 1")
	case p.Start < 1 || p.Pace < 1:
		return sched.Accept{}, usage("--start and --pace must be at least 1 (requests/s)")
	case p.Max < 0:
		return sched.Accept{}, usage("--max must not be negative")
	case p.Max > 0 && p.Start > p.Max:
		return sched.Accept{}, usage("--start (%d) is above --max (%d)", p.Start, p.Max)
	case p.Max > sched.MaxRate || p.Start > sched.MaxRate:
		return sched.Accept{}, usage("--start/--max above %d requests/s are not supported", sched.MaxRate)
	case p.Phase < time.Millisecond:
		return sched.Accept{}, usage("--phase must be at least 1ms")
	case p.Timeout < time.Millisecond:
		return sched.Accept{}, usage("--timeout must be at least 1ms")
	case p.Threads < 0:
		return sched.Accept{}, usage("--threads must not be negative")
	case p.Threads > p.Conns:
		return sched.Accept{}, usage("--threads (%d) is more than --conn (%d): a thread needs a connection", p.Threads, p.Conns)
	case p.Conns > sched.MaxLevel:
		return sched.Accept{}, usage("--conn above %d is not supported", sched.MaxLevel)
	case p.RateDepth < 1:
		return sched.Accept{}, usage("--rate-depth must be at least 1")
	case p.RateDepth > sched.MaxLevel || p.Conns*p.RateDepth > sched.MaxOutstanding:
		return sched.Accept{}, usage("--conn × --rate-depth above %d outstanding requests is not supported", sched.MaxOutstanding)
	case p.Arrivals != "uniform" && p.Arrivals != "poisson":
		return sched.Accept{}, usage("--arrivals %q: want uniform or poisson", p.Arrivals)
	case p.Requests != 0:
		return sched.Accept{}, usage("--requests applies to the connections test")
	}
	return parseAccept(p.Accept)
}

// DefaultRateDepth is the rate test's most outstanding requests per
// connection when Plan.RateDepth is 0: 1 over HTTP/1.1 (no pipelining
// unless asked); over HTTP/2 128 streams, and never more than the peer's
// SETTINGS_MAX_CONCURRENT_STREAMS, which admission honours whatever the
// depth.
func DefaultRateDepth(http2 bool) int {
	if http2 {
		return 128
	}
	return 1
}

// RateSlotWarning is the rate test's plan-time warning, or "": by Little's
// law the requests outstanding at once are rate × latency, so a run whose
// connections × depth slots are below its highest planned rate × timeout
// can fail from a lack of slots alone (arrivals waiting past their
// deadline) before the server is at fault.
func RateSlotWarning(p Plan) string {
	p.Defaults()
	if p.RateDepth == 0 {
		p.RateDepth = 1
	}
	rate, which := p.Start, "--start"
	if p.Max > 0 {
		rate, which = p.Max, "--max"
	}
	slots := p.Conns * p.RateDepth
	need := float64(rate) * p.Timeout.Seconds()
	if float64(slots) >= need {
		return ""
	}
	return fmt.Sprintf("warning: --conn %d × --rate-depth %d = %d slots is below %s %d requests/s × --timeout %s = %.0f outstanding (Little's law): from %.0f requests/s on, a slow response can fail the run from a lack of slots alone",
		p.Conns, p.RateDepth, slots, which, rate, p.Timeout, need, float64(slots)/p.Timeout.Seconds())
}
