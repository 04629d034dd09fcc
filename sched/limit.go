package sched

import (
	"fmt"

	"github.com/brk-bench/brk/metrics"
)

// The peer's stream limit against the target (HTTP/2, requests test): how
// long each connection's limit in force stayed below its depth, out of
// its time in the phase's admission window. Judge's rule reads the worst
// connection (StreamLimitShare); a limit below the level only briefly,
// or reached once before it was lowered, does not hide it.

// limitStart begins o's connection's time in the phase: it is open and
// the phase admits.
func (w *worker) limitStart(o *owner, now int64) {
	if !w.pol.followsLimit() || !w.admitting || o.state != stOpen || o.sess.Counters() == nil {
		return
	}
	o.limCounting, o.limSince, o.limBelowAt, o.limBelowNs, o.limKnown = true, now, -1, 0, false
	w.limitCheck(o, now)
}

// limitCheck follows the limit in force on o's connection: the session's
// Counters().MaxStreams, which its SETTINGS change.
func (w *worker) limitCheck(o *owner, now int64) {
	if !o.limCounting {
		return
	}
	m := o.sess.Counters().MaxStreams
	below := m >= 0 && m < int64(o.depth)
	switch {
	case below && o.limBelowAt < 0:
		o.limBelowAt = now
	case !below && o.limBelowAt >= 0:
		o.limBelowNs += now - o.limBelowAt
		o.limBelowAt = -1
	}
	if below && (!o.limKnown || m < o.limLowest) {
		o.limLowest, o.limKnown = m, true
	}
}

// limitEnd ends o's connection's time in the phase (the connection or the
// admission ended) and adds it to the phase's recorder.
func (w *worker) limitEnd(o *owner, now int64) {
	if !o.limCounting {
		return
	}
	o.limCounting = false
	if o.limBelowAt >= 0 {
		o.limBelowNs += now - o.limBelowAt
		o.limBelowAt = -1
	}
	w.rec.StreamLimit.Conn(o.limBelowNs, now-o.limSince, o.limLowest)
}

// MaxLimitShare is the share of a connection's time in a phase that the
// peer's stream limit may stay below the target before the phase is
// unfulfilled.
const MaxLimitShare = 0.01

// streamLimitRule names why a requests-test phase is unfulfilled by the
// peer's stream limit: some connection's limit in force stayed below its
// target for more than MaxLimitShare of its time in the phase. "" when
// none did.
func streamLimitRule(s *metrics.Phase, plan Plan, level int) string {
	l := &s.StreamLimit
	if !plan.Mode.spec().perConnPlan || !l.Known || l.Share() <= MaxLimitShare {
		return ""
	}
	return fmt.Sprintf("target unfulfilled: a connection's stream limit stayed below %d for %.3g %% of its time in the phase (the server's SETTINGS_MAX_CONCURRENT_STREAMS fell to %d)",
		plan.depth(level), 100*l.Share(), l.Lowest)
}
