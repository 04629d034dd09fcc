package sched

import "github.com/brk-bench/brk/internal/judge"

// The peer's stream limit against the target (HTTP/2, requests test): how
// long each connection's limit in force stayed below its depth, out of
// its time in the phase's admission window. judge.Judge's rule reads the worst
// connection (StreamLimitShare); a limit below the level only briefly,
// or reached once before it was lowered, does not hide it.

// streamLimit is what an owner of a multiplexed session follows of its
// connection's stream limit in a phase (a pipeline's owner has none).
type streamLimit struct {
	counting bool
	known    bool
	since    int64
	belowAt  int64
	belowNs  int64
	lowest   int64
	cur      int64 // the limit in force since at (-1: none set)
	at       int64
	spans    limitSpans
}

// limitStart begins o's connection's time in the phase: it is open and
// the phase admits.
func (w *worker) limitStart(o *owner, now int64) {
	l := o.lim
	if l == nil || !w.pol.followsLimit() || !w.admitting || o.state != stOpen {
		return
	}
	*l = streamLimit{counting: true, since: now, belowAt: -1, cur: o.live.MaxStreams, at: now}
	w.limitCheck(o, now)
}

// limitCheck follows the limit in force on o's connection: the session's
// Counters().MaxStreams, which its SETTINGS change.
func (w *worker) limitCheck(o *owner, now int64) {
	l := o.lim
	if l == nil || !l.counting {
		return
	}
	m := o.live.MaxStreams
	if m != l.cur {
		l.spans.add(l.cur, now-l.at)
		l.cur, l.at = m, now
	}
	below := m >= 0 && m < int64(o.depth)
	switch {
	case below && l.belowAt < 0:
		l.belowAt = now
	case !below && l.belowAt >= 0:
		l.belowNs += now - l.belowAt
		l.belowAt = -1
	}
	if below && (!l.known || m < l.lowest) {
		l.lowest, l.known = m, true
	}
}

// limitEnd ends o's connection's time in the phase (the connection or the
// admission ended) and adds it to the phase's recorder.
func (w *worker) limitEnd(o *owner, now int64) {
	l := o.lim
	if l == nil || !l.counting {
		return
	}
	l.counting = false
	if l.belowAt >= 0 {
		l.belowNs += now - l.belowAt
		l.belowAt = -1
	}
	w.rec.StreamLimit.Conn(l.belowNs, now-l.since, l.lowest)
	l.spans.add(l.cur, now-l.at)
	if f := l.spans.floor(now-l.since, judge.MaxLimitShare); f >= 0 {
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
