package sched

import (
	"errors"

	"github.com/brk-bench/brk/metrics"
)

// A request mix on the request path: each admitted request takes its
// target from the worker's MixCursor (the rate test's arrivals by their
// global index, Mix.At), the target travels with the request in its ring
// slot, the session writes that target's bytes (MixSession.QueueTarget),
// and the response's status check, its outcome and its latency are that
// target's. Without a mix (Config.Mix nil) none of this runs.

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

// validateMix checks a mix's configuration (nil: none): an order, at most
// one status check and replay rule per target, and sessions that take a
// target per request.
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
	if _, ok := c.NewSession().(MixSession); !ok {
		return errors.New("sched: a mix needs sessions that queue a target per request (MixSession)")
	}
	return nil
}

// MixSession is a protocol session that sends a request mix: each queued
// request names its target (0-based, in mix order). The sessions of a
// mixed run must implement it (h1.MixSession, h2.Session).
type MixSession interface {
	Session
	QueueTarget(token uint32, target int, last bool)
}

// workerMix is one worker's mix state.
type workerMix struct {
	cursor MixCursor
	order  *Mix
	status []*[600]bool
	replay []bool
	// next is the rate test's target for the arrival being admitted, set
	// by its policy (-1: take the cursor's).
	next int
}

// initMix gives w the mix's state (a no-op without a mix).
func (w *worker) initMix() {
	m := w.cfg.Mix
	if m == nil {
		return
	}
	n := m.Targets()
	x := &workerMix{cursor: m.Order.Cursor(), order: m.Order, status: make([]*[600]bool, n), replay: make([]bool, n), next: -1}
	for i := range x.status {
		f := w.cfg.StatusOK
		if i < len(m.StatusOK) && m.StatusOK[i] != nil {
			f = m.StatusOK[i]
		}
		x.status[i] = statusTable(f)
		x.replay[i] = i < len(m.Replay) && m.Replay[i]
	}
	w.mix = x
}

// mixRecorder gives r a histogram per target when the run has a mix.
func (w *worker) mixRecorder(r *metrics.Recorder) *metrics.Recorder {
	if w.cfg.Mix != nil {
		r.EnableTargets(w.cfg.Mix.Targets())
	}
	return r
}

// mixOwner binds o's session as a mix session.
func (w *worker) mixOwner(o *owner) {
	if w.cfg.Mix != nil {
		o.mix, _ = o.sess.(MixSession)
	}
}

// pickTarget is the target of the request being admitted.
func (w *worker) pickTarget() uint8 {
	x := w.mix
	if x == nil {
		return 0
	}
	if x.next >= 0 {
		t := x.next
		x.next = -1
		return uint8(t)
	}
	return uint8(x.cursor.Next())
}

// queue hands the request at token k to o's session.
func (o *owner) queue(k uint32, s *slot) {
	if o.mix != nil {
		o.mix.QueueTarget(k, int(s.target), s.last)
		return
	}
	o.sess.Queue(k, s.last)
}

// statusFor is the accepted-status table of s's target.
func (w *worker) statusFor(s *slot) *[600]bool {
	if w.mix != nil {
		return w.mix.status[s.target]
	}
	return w.status
}

// replayFor reports whether a written request of s's target may be
// replayed after the server closed.
func (w *worker) replayFor(s *slot) bool {
	if w.mix != nil {
		return w.mix.replay[s.target]
	}
	return w.cfg.Replay
}

// failSlot records one failure of s's request.
func (w *worker) failSlot(s *slot, cat metrics.Category) {
	w.rec.Fail(cat, 1)
	if w.mix != nil {
		w.rec.TargetFail(int(s.target), cat, 1)
	}
}

// failTarget records one failure of target t (a waiting arrival).
func (w *worker) failTarget(t uint8, cat metrics.Category) {
	if w.mix != nil {
		w.rec.TargetFail(int(t), cat, 1)
	}
}

// failUnresolved records, per target, a failure of every unresolved
// request of o (the totals are the caller's).
func (w *worker) failUnresolved(o *owner, cat metrics.Category) {
	if w.mix == nil {
		return
	}
	for k := o.head; k != o.tail; k++ {
		if s := o.slot(k); s.state != slotDone {
			w.rec.TargetFail(int(s.target), cat, 1)
		}
	}
}

// responded records a complete response of s's request per target.
func (w *worker) responded(s *slot, latencyNs int64, code int) {
	if w.mix != nil {
		w.rec.TargetResponse(int(s.target), latencyNs, code)
	}
}

// succeeded records s's request as a success.
func (w *worker) succeeded(s *slot) {
	w.rec.Success()
	if w.mix != nil {
		w.rec.TargetSuccess(int(s.target))
	}
}

// arrivalTarget is the target of the rate test's arrival k of the phase's
// schedule.
func (w *worker) arrivalTarget(k uint64) uint8 {
	if w.mix == nil {
		return 0
	}
	return uint8(w.mix.order.At(k))
}
