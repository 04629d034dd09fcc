package brk

import (
	"github.com/brk-bench/brk/metrics"
	"github.com/brk-bench/brk/sched"
)

// Evidence is a judged phase's evidence (docs/search.md): margins
// [{term, bad, total, allowed, margin}], binding, stall {at_ns, span_ns,
// failures, requests, of}, too_close, busy.
type Evidence = sched.Evidence

// OtherCPU is the box's other load over a phase: mean and peak cores used
// by other processes, in how many of its 100 ms windows they used more
// than a quarter of a core.
type OtherCPU = metrics.OtherCPU

// CoolDown is one wait before a re-run or a bisection probe until the
// server answered a request within twice the lowest p50 of an accepted
// phase (docs/search.md).
type CoolDown = sched.CoolDown
