package judge

import (
	"testing"
	"time"

	"github.com/brk-bench/brk/internal/metrics"
)

// connRun is a connections-test run at level: each of its ten 100 ms
// spans ended perSpan setups, failed[i] of them failed (timed out); the
// judge's totals add setups still in flight at the phase's end (counted
// not established).
func connRun(index, level int, perSpan uint64, failed []uint64, inFlight uint64) *Judged {
	tl := &metrics.Timeline{WidthNs: int64(100 * time.Millisecond), Spans: make([]metrics.Span, len(failed))}
	var bad uint64
	for i, f := range failed {
		tl.Spans[i].Succeeded, tl.Spans[i].Setups, tl.Spans[i].SetupsFailed = perSpan-f, perSpan, f
		bad += f
	}
	n := perSpan * uint64(len(failed))
	m := measured(n-bad, 0, 0, metrics.Setups{Attempted: n + inFlight, Established: n - bad, TimedOut: bad}, uint64(level))
	m.Stats.Timeline = tl
	jm := Judgement{Judged: true, Accepted: bad+inFlight == 0}
	if !jm.Accepted {
		jm.Verdict = Broken
	}
	j := &Judged{Judgement: jm, Index: index, Target: level, Run: m}
	j.Evidence = Examine(m, connsPlan, jm)
	return j
}

// The connections test's interval reads the setups span by span: a burst
// of setup timeouts in one span is one window of ten, so a resampling
// that misses it holds the level, and the interval reaches past it —
// where one window per run (the setups' totals) could never move. The
// windows sum to the judge's totals, in-flight setups included.
func TestSetupsWindows(t *testing.T) {
	burst := make([]uint64, 10)
	burst[4] = 60 // 60 of 1,000 setups timed out, all in one span
	clean := make([]uint64, 10)
	s := newLevelState(connsPlan)
	s.judged = []*Judged{
		connRun(0, 100, 100, clean, 0),
		connRun(1, 110, 100, burst, 0),
		connRun(2, 120, 100, burst, 3),
	}
	if b := s.judged[1].Evidence.Binding; b != TermSetups {
		t.Fatalf("binding %s, want setups", b)
	}
	r := runEvidence(s.judged[2], TermSetups, connsPlan)
	var sum Window
	for _, w := range r.Windows {
		sum.Total += w.Total
		sum.Bad += w.Bad
	}
	if len(r.Windows) != 11 || sum.Total != 1003 || sum.Bad != 63 {
		t.Fatalf("windows %+v (sum %+v): want the ten spans and one for the 3 in flight, summing to 1003 setups, 63 not established", r.Windows, sum)
	}
	f, term, ok := s.fit(Bracket{Held: 100, Broke: 110, HeldPhase: 0, BrokePhase: 1})
	if !ok || term != TermSetups {
		t.Fatalf("fit %v, term %s", ok, term)
	}
	if f.Low != 100 || f.High < 120 {
		t.Errorf("interval %d–%d: want 100 up to at least 120 (a resampling without the burst holds 110)", f.Low, f.High)
	}
	// One window per run: the interval cannot leave the pair.
	for _, j := range s.judged {
		j.Run.Stats.Timeline = nil
	}
	if f, _, _ := s.fit(Bracket{Held: 100, Broke: 110, HeldPhase: 0, BrokePhase: 1}); f.Low != 100 || f.High != 110 {
		t.Errorf("without timelines: interval %d–%d, want 100–110", f.Low, f.High)
	}
}
