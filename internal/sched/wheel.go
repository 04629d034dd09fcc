package sched

// Wheel is a hashed timer wheel over connection-owner indices. Each owner
// has at most one timer (the deadline of its oldest unresolved request, of
// its setup or reconnect back-off, or of the wait for the server's close),
// kept in the wheel's own per-owner links (a doubly linked list per
// bucket, indexed by owner), so scheduling and cancelling allocate nothing
// and cost O(1).
//
// The tick is 1 ms. A timer fires when the worker processes the bucket of
// its tick at or after its instant, so a deadline is observed at most one
// tick plus one event batch late; the observed lateness is measured and
// reported per phase (max_deadline_lateness_ms). Timers further away than
// the wheel's span stay in their bucket and are skipped until their turn.
type Wheel struct {
	tick    int64   // ns per tick
	buckets []int32 // first owner per bucket, -1 when empty
	mask    int64
	next    int64 // next tick to process
	count   int
	links   []timerLink
}

type timerLink struct {
	next, prev int32
	bucket     int32 // -1 when not scheduled
	at         int64
}

const wheelTick = int64(1_000_000) // 1 ms

// NewWheel creates a wheel for n owners with 2^bits buckets.
func NewWheel(n int, bits uint, now int64) *Wheel {
	w := &Wheel{tick: wheelTick, buckets: make([]int32, 1<<bits), mask: 1<<bits - 1, links: make([]timerLink, n)}
	for i := range w.buckets {
		w.buckets[i] = -1
	}
	for i := range w.links {
		w.links[i].bucket = -1
	}
	w.next = now / w.tick
	return w
}

// Grow makes room for n owners.
func (w *Wheel) Grow(n int) {
	for len(w.links) < n {
		w.links = append(w.links, timerLink{bucket: -1, next: -1, prev: -1})
	}
}

// Schedule sets owner i's timer to fire at instant at (ns), replacing any
// timer it had.
func (w *Wheel) Schedule(i int32, at int64) {
	l := &w.links[i]
	if l.bucket >= 0 {
		if l.at == at {
			return
		}
		w.unlink(i)
	}
	t := at / w.tick
	if t < w.next {
		t = w.next
	}
	b := int32(t & w.mask)
	l.at = at
	l.bucket = b
	l.prev = -1
	l.next = w.buckets[b]
	if l.next >= 0 {
		w.links[l.next].prev = i
	}
	w.buckets[b] = i
	w.count++
}

// Cancel removes owner i's timer if it has one.
func (w *Wheel) Cancel(i int32) {
	if w.links[i].bucket >= 0 {
		w.unlink(i)
	}
}

// Scheduled reports owner i's timer instant.
func (w *Wheel) Scheduled(i int32) (int64, bool) {
	l := &w.links[i]
	return l.at, l.bucket >= 0
}

func (w *Wheel) unlink(i int32) {
	l := &w.links[i]
	if l.prev >= 0 {
		w.links[l.prev].next = l.next
	} else {
		w.buckets[l.bucket] = l.next
	}
	if l.next >= 0 {
		w.links[l.next].prev = l.prev
	}
	l.bucket = -1
	l.next, l.prev = -1, -1
	w.count--
}

// Len is the number of scheduled timers.
func (w *Wheel) Len() int { return w.count }

// Advance fires every timer due at or before now, calling fire(i, at) with
// the timer already removed. fire may schedule timers again. Buckets of
// ticks before now's are finished; now's own bucket is visited again at the
// next call, since it may hold timers later in the same tick.
func (w *Wheel) Advance(now int64, fire func(i int32, at int64)) {
	last := now / w.tick
	if w.count == 0 {
		w.next = last
		return
	}
	steps := last - w.next + 1
	if steps > int64(len(w.buckets)) {
		// Idle for more than a revolution: visit every bucket once.
		steps = int64(len(w.buckets))
		w.next = last - steps + 1
	}
	for ; steps > 0; steps-- {
		b := w.next & w.mask
		for i := w.buckets[b]; i >= 0; {
			l := &w.links[i]
			nxt := l.next
			if l.at <= now {
				at := l.at
				w.unlink(i)
				fire(i, at)
			}
			i = nxt
		}
		w.next++
	}
	w.next = last
}

// Timeout returns how long a poll may block (ms): until the next tick
// boundary when a timer is scheduled, -1 when none is.
func (w *Wheel) Timeout(now int64) int {
	d := w.TimeoutNs(now)
	if d < 0 {
		return -1
	}
	return int((d + 999_999) / 1_000_000)
}

// TimeoutNs is Timeout in nanoseconds: the time to the next tick, -1 when
// no timer is armed.
func (w *Wheel) TimeoutNs(now int64) int64 {
	if w.count == 0 {
		return -1
	}
	return (now/w.tick+1)*w.tick - now
}
