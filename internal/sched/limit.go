package sched

import (
	"fmt"
	"math"

	"github.com/brk-bench/brk/internal/metrics"
)

// The peer's stream limit against the target (HTTP/2, requests test): how
// long each connection's limit in force stayed below its depth, out of
// its time in the phase's admission window. Judge's rule reads the worst
// connection (StreamLimitShare); a limit below the level only briefly,
// or reached once before it was lowered, does not hide it.

// limitStart begins o's connection's time in the phase: it is open and
// the phase admits.
func (w *worker) limitStart(o *owner, now int64) {
	if !w.pol.followsLimit() || !w.admitting || o.state != stOpen || o.counters() == nil {
		return
	}
	o.limCounting, o.limSince, o.limBelowAt, o.limBelowNs, o.limKnown = true, now, -1, 0, false
	o.limSpans = limitSpans{}
	o.limCur, o.limAt = o.counters().MaxStreams, now
	w.limitCheck(o, now)
}

// limitCheck follows the limit in force on o's connection: the session's
// Counters().MaxStreams, which its SETTINGS change.
func (w *worker) limitCheck(o *owner, now int64) {
	if !o.limCounting {
		return
	}
	m := o.counters().MaxStreams
	if m != o.limCur {
		o.limSpans.add(o.limCur, now-o.limAt)
		o.limCur, o.limAt = m, now
	}
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
	o.limSpans.add(o.limCur, now-o.limAt)
	if f := o.limSpans.floor(now-o.limSince, MaxLimitShare); f >= 0 {
		w.rec.StreamLimit.ConnFloor(f)
	}
}

// limitSpans is a connection's time under each stream limit it had in
// force in a phase, for its floor: up to len(limit) distinct limits in
// ascending order. One more folds the highest into the one below it, so
// that the floor can err low, never high. Time with no limit set is not
// kept: no limit held a level down then.
type limitSpans struct {
	limit [4]int64
	ns    [4]int64
	n     int
}

// add counts ns under limit (-1: none set).
func (s *limitSpans) add(limit, ns int64) {
	if limit < 0 || ns <= 0 {
		return
	}
	i := 0
	for i < s.n && s.limit[i] < limit {
		i++
	}
	if i < s.n && s.limit[i] == limit {
		s.ns[i] += ns
		return
	}
	if s.n == len(s.limit) {
		s.n--
		s.ns[s.n-1] += s.ns[s.n]
		i = min(i, s.n)
	}
	copy(s.limit[i+1:s.n+1], s.limit[i:s.n])
	copy(s.ns[i+1:s.n+1], s.ns[i:s.n])
	s.limit[i], s.ns[i] = limit, ns
	s.n++
}

// floor is the highest limit L such that the connection's limit in force
// stayed below L for at most share of its livedNs: the most streams it
// admitted for all but that share of its time. -1 when no limit was in
// force for more than that share.
func (s *limitSpans) floor(livedNs int64, share float64) int64 {
	allowed := share * float64(livedNs)
	var below int64
	for i := range s.n {
		if below += s.ns[i]; float64(below) > allowed {
			return s.limit[i]
		}
	}
	return -1
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

// StreamCap is the highest level the server's stream limit admits in the
// requests test, read from the judged phases: the connections × the lowest
// limit a phase's connection had in force for all but MaxLimitShare of
// its time (metrics.StreamLimit.Floor), so that a dip of a few
// milliseconds caps nothing. ok is false in the other tests and while no
// phase knew a limit.
func StreamCap(p Plan, judged []*Judged) (limit int, ok bool) {
	if !p.Mode.spec().perConnPlan {
		return 0, false
	}
	for _, j := range judged {
		if j.Run == nil || j.Run.Stats == nil || !j.Run.Stats.StreamLimit.FloorKnown {
			continue
		}
		c := int(min(j.Run.Stats.StreamLimit.Floor, math.MaxInt32)) * max(p.Conns, 1)
		if !ok || c < limit {
			limit, ok = c, true
		}
	}
	return limit, ok
}

// maxLevel is the search's cap: Levels.Max, or StreamCap when it is lower, with
// the reason a run that held it ends done.
func (s *levelState) maxLevel(b Bracket) (int, string) {
	m := s.p.Levels.Max
	c, ok := StreamCap(s.p, s.judged)
	if !ok || c < 1 || m > 0 && m <= c {
		return m, s.doneReason(b)
	}
	conns := max(s.p.Conns, 1)
	return c, fmt.Sprintf("%s completed and accepted: the server's stream limit capped the search at %d (SETTINGS_MAX_CONCURRENT_STREAMS %d × %d connections); more %s goes further",
		s.p.levelText(b.Held), c, c/conns, conns, s.p.Names.Filled().Conns)
}
