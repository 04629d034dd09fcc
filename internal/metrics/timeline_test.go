package metrics

import (
	"encoding/json"
	"testing"
	"time"
)

// Every latency falls in the bucket whose edges hold it, and an upper edge
// is at most 12.5 % above any value of its bucket.
func TestCoarseBuckets(t *testing.T) {
	prev := int64(-1)
	for i := range CoarseBuckets {
		up := CoarseUpper(i)
		if up <= prev {
			t.Fatalf("bucket %d: upper %d not above the previous %d", i, up, prev)
		}
		lo := prev + 1
		for _, us := range []int64{lo, (lo + up) / 2, up} {
			if got := CoarseIndex(us); got != i {
				t.Fatalf("CoarseIndex(%d) = %d, want %d", us, got, i)
			}
		}
		if lo >= 8 && float64(up) > 1.125*float64(lo) {
			t.Fatalf("bucket %d [%d, %d] wider than 12.5 %%", i, lo, up)
		}
		prev = up
	}
	if CoarseIndex(-5) != 0 || CoarseIndex(1<<40) != CoarseBuckets-1 {
		t.Fatal("out-of-range latencies not clamped to the end buckets")
	}
	if prev < int64(30*time.Minute/time.Microsecond) {
		t.Fatalf("the last bucket ends at %d µs, want at least 30 minutes", prev)
	}
}

// A phase has 100 ms spans, or wider ones (whole multiples of 100 ms) so
// that it never needs more than TimelineSpans.
func TestTimelineWidth(t *testing.T) {
	for _, c := range []struct {
		window, timeout time.Duration
		want            time.Duration
	}{
		{time.Second, 100 * time.Millisecond, 100 * time.Millisecond},
		{10 * time.Second, time.Second, 100 * time.Millisecond},
		{11 * time.Second, 1500 * time.Millisecond, 100 * time.Millisecond},
		{12 * time.Second, time.Second, 200 * time.Millisecond},
		{2 * time.Minute, time.Second, time.Second},
		{126 * time.Second, time.Second, 1100 * time.Millisecond},
		{time.Hour, 30 * time.Second, 28600 * time.Millisecond},
		{24 * time.Hour, time.Minute, 680800 * time.Millisecond},
	} {
		got := time.Duration(timelineWidth(int64(c.window), int64(c.timeout)))
		if got != c.want {
			t.Errorf("window %v timeout %v: width %v, want %v", c.window, c.timeout, got, c.want)
		}
		if spans := (c.window + c.timeout + got - 1) / got; spans > TimelineSpans-1 {
			t.Errorf("window %v timeout %v: %d spans", c.window, c.timeout, spans)
		}
	}
}

// Outcomes count in the span of the last Tick; the merge adds workers
// span by span and reads each span's p99 from the summed histograms.
func TestTimelineMerge(t *testing.T) {
	sec := int64(time.Second)
	start := 5 * sec
	a, b := NewRecorder(&Live{}), NewRecorder(&Live{})
	for _, r := range []*Recorder{a, b} {
		r.StartTimeline(start, 120*sec, sec) // one-second spans
	}
	// Second 0: a has 99 fast responses, b one slow one that fails.
	a.Tick(start + sec/2)
	for range 99 {
		a.Response(1000 * 1000) // 1 ms
		a.Success()
	}
	b.Tick(start)
	b.Response(200 * 1000 * 1000) // 200 ms
	b.Fail(Status, 1)
	// Second 2: a stall ends in timeouts only (no response).
	a.Tick(start + 2*sec + 1)
	a.Fail(Timeout, 7)
	// Late outcomes past the last span count in it.
	b.Tick(start + 1000*sec)
	b.Success()

	p := NewPhase()
	p.Merge(a)
	p.Merge(b)
	tl := p.Timeline
	if tl == nil || tl.StartNs != start || tl.WidthNs != sec || len(tl.Spans) != TimelineSpans {
		t.Fatalf("timeline %+v", tl)
	}
	s := tl.Spans
	if s[0].Succeeded != 99 || s[0].Failed != 1 || s[1] != (Span{}) || s[2].Failed != 7 || s[2].P99Us != 0 {
		t.Fatalf("spans %+v", s[:3])
	}
	// The p99 of 100 responses is the 99th: 1 ms, within 12.5 %.
	if s[0].P99Us < 1000 || s[0].P99Us > 1125 {
		t.Fatalf("p99 %d µs, want 1000..1125", s[0].P99Us)
	}
	if s[TimelineSpans-1].Succeeded != 1 {
		t.Fatalf("late success not in the last span: %+v", s[TimelineSpans-1])
	}
	if n := len(tl.Trimmed()); n != TimelineSpans {
		t.Fatalf("trimmed to %d", n)
	}

	// Another box's phase from JSON: counts add, p99 is the higher.
	q := NewPhase()
	q.Merge(b)
	buf, err := json.Marshal(q)
	if err != nil {
		t.Fatal(err)
	}
	var r Phase
	if err := json.Unmarshal(buf, &r); err != nil {
		t.Fatal(err)
	}
	p.Add(&r)
	if s := p.Timeline.Spans; s[0].Succeeded != 99 || s[0].Failed != 2 || s[0].P99Us < 200_000 {
		t.Fatalf("after adding a box: %+v", s[0])
	}
}

// Each span counts the responses slower than the latency limits, and the
// counts add across workers and boxes.
func TestTimelineSlow(t *testing.T) {
	r := NewRecorder(&Live{})
	r.SetLatencyLimits(10*time.Millisecond, 50*time.Millisecond)
	r.StartTimeline(0, int64(time.Second), int64(time.Second))
	r.Tick(0)
	for _, ms := range []int64{1, 10, 11, 49, 51, 200} {
		r.Response(ms * 1e6)
	}
	r.Reset() // the limits last across phases
	r.StartTimeline(0, int64(time.Second), int64(time.Second))
	r.Tick(int64(150 * time.Millisecond))
	r.Response(20e6)
	r.Response(60e6)
	p := NewPhase()
	p.Merge(r)
	p.Add(p)
	if s := p.Timeline.Spans[1]; s.SlowP99 != 4 || s.SlowP999 != 2 {
		t.Fatalf("span %+v: want 4 slower than 10 ms and 2 slower than 50 ms", s)
	}
	if s := p.Timeline.Spans[0]; s.SlowP99 != 0 {
		t.Fatalf("span 0 %+v: the reset phase's responses counted", s)
	}
}

// A reset recorder keeps its spans' memory and counts nothing until the
// next phase starts its timeline; recording allocates nothing.
func TestTimelineReuse(t *testing.T) {
	r := NewRecorder(&Live{})
	r.StartTimeline(0, int64(time.Second), int64(time.Second))
	r.Tick(0)
	r.Success()
	spans := &r.tl.spans[0]
	r.Reset()
	r.Success()
	r.Fail(Timeout, 1)
	r.StartTimeline(0, int64(time.Second), int64(time.Second))
	if &r.tl.spans[0] != spans || r.tl.spans[0] != (recSpan{}) {
		t.Fatal("spans reallocated or not cleared")
	}
	r.Tick(0)
	if n := testing.AllocsPerRun(1000, func() {
		r.Tick(5)
		r.Response(12345)
		r.Success()
		r.Status(503)
		r.Fail(Status, 1)
	}); n != 0 {
		t.Fatalf("%v allocations per outcome", n)
	}
}

// The live counters tell the p99 between two readings.
func TestLiveP99(t *testing.T) {
	l := &Live{}
	r := NewRecorder(l)
	var base, now [CoarseBuckets]uint64
	for range 1000 {
		r.Response(5e6) // 5 ms before the base reading
	}
	for i := range base {
		base[i] = l.Latency[i].Load()
	}
	for i := range 100 {
		r.Response(int64(i+1) * 1e6) // 1..100 ms
	}
	for i := range now {
		now[i] = l.Latency[i].Load()
	}
	if got := LiveP99Us(&now, &base); got < 99_000 || got > 99_000*9/8 {
		t.Fatalf("p99 %d µs, want 99 ms within 12.5 %%", got)
	}
	if got := LiveP99Us(&base, &base); got != 0 {
		t.Fatalf("p99 of nothing %d", got)
	}
}

// Each span counts its complete responses by status class (1xx..5xx, 0
// for a code outside 100..599) beside the phase's counts by code; the
// classes add across workers and across load boxes (from JSON).
func TestTimelineStatusClasses(t *testing.T) {
	sec := int64(time.Second)
	a, b := NewRecorder(&Live{}), NewRecorder(&Live{})
	for _, r := range []*Recorder{a, b} {
		r.StartTimeline(0, 120*sec, sec) // one-second spans
		r.Tick(0)
	}
	for _, code := range []int{200, 200, 204, 503, 404, 99, 700} {
		a.Status(code)
	}
	b.Tick(sec)
	b.Status(503)
	b.Status(301)
	b.Status(101)
	p := NewPhase()
	p.Merge(a)
	p.Merge(b)
	s := p.Timeline.Spans
	if want := [StatusClasses]uint64{2, 0, 3, 0, 1, 1}; s[0].Statuses != want {
		t.Errorf("span 0: %v, want %v", s[0].Statuses, want)
	}
	if want := [StatusClasses]uint64{0, 1, 0, 1, 0, 1}; s[1].Statuses != want {
		t.Errorf("span 1: %v, want %v", s[1].Statuses, want)
	}
	if p.Statuses[200] != 2 || p.Statuses[503] != 2 || p.Statuses[0] != 2 {
		t.Errorf("phase counts by code not kept: 200×%d 503×%d other×%d", p.Statuses[200], p.Statuses[503], p.Statuses[0])
	}
	buf, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var q Phase
	if err := json.Unmarshal(buf, &q); err != nil {
		t.Fatal(err)
	}
	p.Add(&q)
	if want := [StatusClasses]uint64{0, 2, 0, 2, 0, 2}; p.Timeline.Spans[1].Statuses != want {
		t.Errorf("two boxes, span 1: %v, want %v", p.Timeline.Spans[1].Statuses, want)
	}
}

// Setups count in the span they ended in: all of them and those that
// failed or timed out; a setup taken back (SetupRejected) and recorded
// again as failed moves from the first count to the second; two boxes'
// spans add.
func TestTimelineSetups(t *testing.T) {
	r := NewRecorder(&Live{})
	r.StartTimeline(0, int64(time.Second), int64(time.Second))
	r.Tick(0)
	r.SetupStarted()
	r.SetupDone(true, false, 1e6)
	r.SetupStarted()
	r.SetupDone(false, true, 0) // timed out
	r.Tick(int64(250 * time.Millisecond))
	r.SetupStarted()
	r.SetupDone(true, false, -1)
	r.SetupRejected()
	r.SetupDone(false, false, 0) // refused right after the handshake
	r.SetupStarted()
	r.SetupDone(true, false, 1e6)
	calls := uint64(0)
	if n := testing.AllocsPerRun(1000, func() { r.SetupDone(true, false, 1e6); calls++ }); n != 0 {
		t.Fatalf("%v allocations per setup", n)
	}
	p := NewPhase()
	p.Merge(r)
	s0, s2 := p.Timeline.Spans[0], p.Timeline.Spans[2]
	if s0.Setups != 2 || s0.SetupsFailed != 1 {
		t.Errorf("span 0 %+v: want 2 setups, 1 failed", s0)
	}
	if s2.Setups != 2+calls || s2.SetupsFailed != 1 {
		t.Errorf("span 2 %+v: want %d setups (the rejected one once), 1 failed", s2, 2+calls)
	}
	p.Add(p)
	if s := p.Timeline.Spans[0]; s.Setups != 4 || s.SetupsFailed != 2 {
		t.Errorf("two boxes' span 0 %+v: want 4 setups, 2 failed", s)
	}
}
