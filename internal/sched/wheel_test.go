package sched

import (
	"testing"
)

func TestWheelFiresInOrderAndOnlyWhenDue(t *testing.T) {
	w := NewWheel(8, 4, 0) // 16 buckets of 1 ms: 16 ms span
	w.Schedule(0, 5_000_000)
	w.Schedule(1, 2_500_000)
	w.Schedule(2, 40_000_000) // beyond one revolution
	var fired []int32
	fire := func(i int32, at int64) { fired = append(fired, i) }

	w.Advance(2_000_000, fire)
	if len(fired) != 0 {
		t.Fatalf("fired %v before any deadline", fired)
	}
	w.Advance(3_000_000, fire)
	if len(fired) != 1 || fired[0] != 1 {
		t.Fatalf("fired %v, want [1]", fired)
	}
	w.Advance(20_000_000, fire)
	if len(fired) != 2 || fired[1] != 0 {
		t.Fatalf("fired %v, want [1 0]", fired)
	}
	if w.Len() != 1 {
		t.Fatalf("len %d, want 1 (the far timer)", w.Len())
	}
	w.Advance(39_999_999, fire)
	if len(fired) != 2 {
		t.Fatalf("far timer fired early: %v", fired)
	}
	w.Advance(40_000_000, fire)
	if len(fired) != 3 || fired[2] != 2 {
		t.Fatalf("fired %v, want [1 0 2]", fired)
	}
	if w.Len() != 0 {
		t.Fatalf("len %d after all fired", w.Len())
	}
}

func TestWheelRescheduleAndCancel(t *testing.T) {
	w := NewWheel(4, 6, 0)
	w.Schedule(0, 3_000_000)
	w.Schedule(0, 9_000_000) // replaces
	w.Schedule(1, 4_000_000)
	w.Cancel(1)
	w.Cancel(1) // idempotent
	var fired []int32
	fire := func(i int32, at int64) { fired = append(fired, i) }
	w.Advance(5_000_000, fire)
	if len(fired) != 0 {
		t.Fatalf("fired %v", fired)
	}
	if at, ok := w.Scheduled(0); !ok || at != 9_000_000 {
		t.Fatalf("owner 0 at %d %v", at, ok)
	}
	w.Advance(9_000_000, fire)
	if len(fired) != 1 || fired[0] != 0 {
		t.Fatalf("fired %v, want [0]", fired)
	}
}

func TestWheelFireMayReschedule(t *testing.T) {
	w := NewWheel(2, 4, 0)
	w.Schedule(0, 1_000_000)
	n := 0
	fire := func(i int32, at int64) {
		n++
		if n < 3 {
			w.Schedule(i, at+1_000_000)
		}
	}
	w.Advance(10_000_000, fire)
	if n != 3 {
		t.Fatalf("fired %d times, want 3", n)
	}
}

func TestWheelTimeout(t *testing.T) {
	w := NewWheel(1, 4, 0)
	if got := w.Timeout(0); got != -1 {
		t.Fatalf("empty wheel timeout %d, want -1", got)
	}
	w.Schedule(0, 50_000_000)
	w.Advance(0, func(int32, int64) {})
	if got := w.Timeout(500_000); got != 1 {
		t.Fatalf("timeout %d ms, want 1 (next tick)", got)
	}
}

func TestWheelLongIdleVisitsEveryBucketOnce(t *testing.T) {
	w := NewWheel(3, 3, 0) // 8 buckets
	w.Schedule(0, 1_000_000)
	w.Schedule(1, 7_000_000)
	w.Schedule(2, 1_000_000_000)
	count := 0
	w.Advance(500_000_000, func(int32, int64) { count++ })
	if count != 2 {
		t.Fatalf("fired %d, want 2", count)
	}
	if w.Len() != 1 {
		t.Fatalf("len %d, want 1", w.Len())
	}
}

func TestWheelZeroAllocs(t *testing.T) {
	w := NewWheel(64, 8, 0)
	fire := func(i int32, at int64) {}
	now := int64(0)
	allocs := testing.AllocsPerRun(1000, func() {
		for i := int32(0); i < 64; i++ {
			w.Schedule(i, now+int64(i)*100_000+2_000_000)
		}
		now += 1_000_000
		w.Advance(now, fire)
	})
	if allocs != 0 {
		t.Fatalf("%v allocs per round, want 0", allocs)
	}
}
