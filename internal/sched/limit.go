package sched

import "github.com/brk-bench/brk/internal/judge"

// The peer's stream limit against the target (HTTP/2, requests test): how
// long each connection's limit in force stayed below its depth, out of
// its time in the phase's admission window. judge.Judge's rule reads the worst
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
	if f := o.limSpans.floor(now-o.limSince, judge.MaxLimitShare); f >= 0 {
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
