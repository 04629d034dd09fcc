package sched

// depthPolicy is the requests test's admission: every owner keeps its
// connection across phases and holds the phase's depth of outstanding
// requests, admitting a replacement as soon as a response frees a slot.
type depthPolicy struct{}

func (depthPolicy) start(w *worker, share int) { w.setDepth(uint32(share)) }

func (depthPolicy) inUse(*worker, *owner) bool { return true }

func (depthPolicy) next(w *worker, _ *owner, now int64) (at int64, ok, last bool) {
	return now, w.admitting, false
}

func (depthPolicy) answered(w *worker, o *owner, closing bool, now int64) bool {
	if closing {
		w.closeFollowers(o, now)
		return false
	}
	return true
}

func (depthPolicy) pump(*worker, int64) int64 { return -1 }

func (depthPolicy) abort(*worker) {}
