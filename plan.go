package brk

import (
	"time"

	"brk/sched"
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
	if m == ModeConnections {
		p.Conns, p.Threads = 1, 0
	}
	switch {
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
	switch {
	case p.MaxP99 < 0 || p.MaxP999 < 0:
		return sched.Accept{}, usage("--max-p99 and --max-p999 must not be negative")
	case p.Repeat < 0:
		return sched.Accept{}, usage("--repeat must be at least 1")
	case p.Repeat > 1 && !p.Refine:
		return sched.Accept{}, usage("--repeat %d repeats --refine's probes: give --refine", p.Repeat)
	}
	if err := checkServerPIDs(p.ServerPIDs); err != nil {
		return sched.Accept{}, err
	}
	acc, err := sched.ParseAccept(p.Accept)
	if err != nil {
		return sched.Accept{}, usage("%v", err)
	}
	return acc, nil
}
