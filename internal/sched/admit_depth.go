package sched

import "github.com/brk-bench/brk/internal/judge"

// depthPolicy is the requests test's admission: every owner keeps its
// connection across phases and holds its share of the phase's level in
// outstanding requests (DepthOf: ⌈level/conns⌉ on level mod conns of the
// run's connections, one fewer on the others), admitting a replacement as
// soon as a response frees a slot.
type depthPolicy struct{}

func (depthPolicy) start(w *worker, level int) {
	conns := w.cfg.levelConns()
	for i := range w.owners {
		o := &w.owners[i]
		o.depth = uint32(judge.DepthOf(level, conns, w.base+i))
		if uint32(len(o.ring)) < o.depth {
			o.resize(o.depth)
		}
	}
}

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

func (depthPolicy) clocked() bool { return false }

func (depthPolicy) followsLimit() bool { return true }
