package sched

// admit fills o's ring with new requests up to the depth, the session's
// capacity and what the test mode's policy allows.
func (w *worker) admit(o *owner, now int64) {
	if w.admitting {
		limit := w.depth
		if c := o.sess.Capacity(); c >= 0 && uint32(c) < limit {
			limit = uint32(c)
		}
		for o.unresolved < limit {
			ok, last := w.pol.next(w, o)
			if !ok {
				break
			}
			s := w.push(o)
			s.last = last
			s.admit = now
			s.deadline = now + w.tmo
			s.start = now
			if o.state != stOpen {
				s.start = -1 // set when the setup ends
			}
			o.sess.Queue(o.tail-1, last)
		}
	}
	w.armTimer(o)
}
