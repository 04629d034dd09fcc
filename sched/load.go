package sched

// The load integrals: written-but-unanswered requests and owners at full
// depth, integrated over the admission window (mean outstanding, target
// coverage, time at target), and the first attainment of the target.

// integrate advances the load integrals to now.
func (w *worker) integrate(now int64) {
	if w.admitting {
		dt := now - w.last
		if dt > 0 {
			w.rec.OutstandingNs += uint64(w.outN * dt)
			w.rec.AtTargetNs += uint64(w.atTarget * dt)
		}
	}
	w.last = now
}

// updateTarget re-evaluates whether o holds its full depth.
func (w *worker) updateTarget(o *owner, now int64) {
	at := o.outstanding() >= w.depth && w.depth > 0
	if at == o.atTarget {
		return
	}
	w.integrate(now)
	o.atTarget = at
	if at {
		w.atTarget++
		if w.admitting && o.reached != w.phase+1 {
			o.reached = w.phase + 1
			w.rec.ReachedOnce++
			w.live.Reached.Add(1)
		}
	} else {
		w.atTarget--
	}
}
