package sched

// admit fills o's ring with new requests up to the depth, the session's
// capacity and what the test mode's policy allows (admission stops with
// the phase's admission window in the policy's own terms).
func (w *worker) admit(o *owner, now int64) {
	limit := w.depth
	if c := o.sess.Capacity(); c >= 0 && uint32(c) < limit {
		limit = uint32(c)
	}
	for o.unresolved < limit {
		at, ok, last := w.pol.next(w, o, now)
		if !ok {
			break
		}
		s := w.push(o)
		s.last = last
		s.admit = at
		s.deadline = at + w.tmo
		s.start = at
		if o.state != stOpen {
			s.start = -1 // set when the setup ends
		}
		o.sess.Queue(o.tail-1, last)
	}
	w.armTimer(o)
}
