package sched

import (
	"errors"

	"github.com/brk-bench/brk/internal/metrics"
)

// Every run is a request mix on the request path, of one target or
// more: each admitted request takes its target from the worker's
// MixCursor (the rate test's arrivals by their global index, Mix.At), the
// target travels with the request in its ring slot, the session writes
// that target's bytes (Session.Queue), and the response's status check
// and replay rule are that target's. A run without Config.Mix is a mix of
// one target, its status check Config.StatusOK and its replay rule
// Config.Replay. Outcomes per target are recorded only for a Config.Mix
// (metrics.Recorder.EnableTargets): one target's are the totals.

// MixConfig is a request mix's engine side (Config.Mix): its order and,
// per target in mix order, the accepted status codes and whether a
// written request may be replayed after the server closed (GET, HEAD).
type MixConfig struct {
	Order *Mix
	// StatusOK per target; a nil entry (or a short list) is
	// Config.StatusOK.
	StatusOK []func(code int) bool
	Replay   []bool
}

// Targets is the number of targets in the mix.
func (m *MixConfig) Targets() int { return m.Order.Targets() }

// Targets is the number of targets the mix takes (plan time: it reads
// the period).
func (m *Mix) Targets() int {
	n := 0
	for _, i := range m.seq {
		n = max(n, int(i)+1)
	}
	return n
}

// validateMix checks a mix's configuration (nil: one target): an order,
// and at most one status check and replay rule per target.
func (c *Config) validateMix() error {
	m := c.Mix
	if m == nil {
		return nil
	}
	if m.Order == nil {
		return errors.New("sched: a mix needs its order")
	}
	if n := m.Targets(); len(m.StatusOK) > n || len(m.Replay) > n {
		return errors.New("sched: more status checks or replay rules than the mix has targets")
	}
	return nil
}

// workerMix is one worker's mix state: the order and, per target, its
// status table and replay rule.
type workerMix struct {
	cursor MixCursor
	order  *Mix
	status []*[600]bool
	replay []bool
	// next is the rate test's target for the arrival being admitted, set
	// by its policy (-1: take the cursor's).
	next int
}

// oneTarget is the order of a run without a request mix.
var oneTarget = &Mix{seq: []uint8{0}}

// initMix gives w the run's mix: Config.Mix, or one target.
func (w *worker) initMix() {
	m := w.cfg.Mix
	if m == nil {
		m = &MixConfig{Order: oneTarget}
	}
	n := m.Targets()
	x := &workerMix{cursor: m.Order.Cursor(), order: m.Order, status: make([]*[600]bool, n), replay: make([]bool, n), next: -1}
	for i := range x.status {
		f, replay := w.cfg.StatusOK, w.cfg.Replay
		if i < len(m.StatusOK) && m.StatusOK[i] != nil {
			f = m.StatusOK[i]
		}
		if w.cfg.Mix != nil {
			replay = i < len(m.Replay) && m.Replay[i]
		}
		x.status[i], x.replay[i] = statusTable(f), replay
	}
	w.mix = x
}

// targetRecorder gives r a histogram per target when the run has a
// request mix.
func (w *worker) targetRecorder(r *metrics.Recorder) *metrics.Recorder {
	if w.cfg.Mix != nil {
		r.EnableTargets(w.cfg.Mix.Targets())
	}
	return r
}

// pickTarget is the target of the request being admitted.
func (w *worker) pickTarget() uint8 {
	x := w.mix
	if x.next >= 0 {
		t := x.next
		x.next = -1
		return uint8(t)
	}
	return uint8(x.cursor.Next())
}

// queue hands the request at token k to o's session.
func (o *owner) queue(k uint32, s *slot) { o.sess.Queue(k, int(s.target), s.last) }

// statusFor is the accepted-status table of s's target.
func (w *worker) statusFor(s *slot) *[600]bool { return w.mix.status[s.target] }

// replayFor reports whether a written request of s's target may be
// replayed after the server closed.
func (w *worker) replayFor(s *slot) bool { return w.mix.replay[s.target] }

// failSlot records one failure of s's request.
func (w *worker) failSlot(s *slot, cat metrics.Category) {
	w.rec.Fail(cat, 1)
	w.rec.TargetFail(int(s.target), cat, 1)
}

// failTarget records one failure of target t (a waiting arrival) per
// target (the totals are the caller's).
func (w *worker) failTarget(t uint8, cat metrics.Category) { w.rec.TargetFail(int(t), cat, 1) }

// failUnresolved records, per target, a failure of every unresolved
// request of o (the totals are the caller's).
func (w *worker) failUnresolved(o *owner, cat metrics.Category) {
	if w.rec.Targets == nil {
		return
	}
	for k := o.head; k != o.tail; k++ {
		if s := o.slot(k); s.state != slotDone {
			w.rec.TargetFail(int(s.target), cat, 1)
		}
	}
}

// arrivalTarget is the target of the rate test's arrival k of the phase's
// schedule.
func (w *worker) arrivalTarget(k uint64) uint8 { return uint8(w.mix.order.At(k)) }
