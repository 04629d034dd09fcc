package sched

// A pass over every owner — a phase's start, or the connects before the
// first phase — is done a slice at a time, with a poll between slices.
// Done at once, a pass made thousands of connects or writes before the
// worker heard any answer: 3,000 loopback connects took 150 ms, and with
// a 100 ms timeout every one of them fired as a connect timeout before
// the poll that held their completions, a break the server never had.
// Each slice stamps what it starts with the clock of its own start, so
// that a request's deadline runs from when the client offered it.

// bulkSlice is how long one loop turn may spend starting owners and
// setups before it polls again: a few loopback connects' worth, far
// below any timeout worth a run.
const bulkSlice = int64(1_000_000) // 1 ms

// sweepOwners begins a pass: start (the phase's start, every owner in
// use) or not (connect every idle owner). The loop runs it (sweep).
func (w *worker) sweepOwners(start bool) {
	w.sweeping, w.sweepStart, w.sweepAt = true, start, 0
}

// sweep runs the pass's next slice.
func (w *worker) sweep() {
	for w.sweepAt < len(w.owners) {
		now := w.now()
		if !w.bulk(now) {
			return
		}
		o := &w.owners[w.sweepAt]
		w.sweepAt++
		if w.sweepStart {
			w.startOwner(o, now)
		} else if o.state == stIdle {
			w.dial(o, now)
		}
	}
	w.sweeping = false
}

// bulk reports whether the loop turn may start one more owner or setup
// at now: a turn spends at most bulkSlice on them, counted from the
// first, so each turn makes progress and none goes long without a poll.
func (w *worker) bulk(now int64) bool {
	if w.bulkFrom < 0 {
		w.bulkFrom = now
		return true
	}
	return now-w.bulkFrom < bulkSlice
}

// startOwner starts o's share of the phase at now.
func (w *worker) startOwner(o *owner, now int64) {
	if !w.pol.inUse(w, o) {
		return
	}
	w.updateTarget(o, now)
	switch o.state {
	case stIdle:
		w.connect(o, now)
	case stOpen:
		w.limitStart(o, now)
		w.admit(o, now)
		w.flush(o, now)
	case stConnecting, stHandshaking, stGreeting:
		w.admit(o, now) // written once the setup ends
	}
}
