package machine

import (
	"math"
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"
)

func TestWaitQuantile(t *testing.T) {
	buckets := []float64{0, 1e-4, 1e-3, 1e-2, 1e-1, math.Inf(1)}
	h := func(c ...uint64) *metrics.Float64Histogram {
		return &metrics.Float64Histogram{Counts: c, Buckets: buckets}
	}
	for _, c := range []struct {
		name  string
		a, b  *metrics.Float64Histogram
		q     float64
		want  time.Duration
		wantN uint64
	}{
		{"no waits between", h(5, 0, 0, 0, 0), h(5, 0, 0, 0, 0), 0.99, 0, 0},
		{"all short", h(0, 0, 0, 0, 0), h(100, 0, 0, 0, 0), 0.99, 100 * time.Microsecond, 100},
		{"the earlier counts are not the interval's", h(0, 0, 0, 50, 0), h(100, 0, 0, 50, 0), 0.99, 100 * time.Microsecond, 100},
		{"p99 in the tail", h(0, 0, 0, 0, 0), h(98, 0, 0, 2, 0), 0.99, 100 * time.Millisecond, 100},
		{"one in a hundred is not above p99", h(0, 0, 0, 0, 0), h(99, 0, 0, 1, 0), 0.99, 100 * time.Microsecond, 100},
		{"the open bucket reads as its lower bound", h(0, 0, 0, 0, 0), h(1, 0, 0, 0, 9), 0.5, 100 * time.Millisecond, 10},
		{"mismatched readings", h(0, 0), h(1, 0, 0, 0, 0), 0.99, 0, 0},
		{"no reading", nil, h(1, 0, 0, 0, 0), 0.99, 0, 0},
	} {
		got, n := waitQuantile(c.a, c.b, c.q)
		if got != c.want || n != c.wantN {
			t.Errorf("%s: %v over %d, want %v over %d", c.name, got, n, c.want, c.wantN)
		}
	}
}

// TestSchedWaitSeesSpinners: goroutines that hold every P make the
// process's p99 wait grow past 5 ms. Four spinners per P: a
// goroutine woken from a sleep waits behind them for the runtime's
// preemption, a 10 ms time slice each.
func TestSchedWaitSeesSpinners(t *testing.T) {
	start := ReadSchedWaits()
	var stop atomic.Bool
	spin := func() {
		for !stop.Load() {
		}
	}
	for range 4 * runtime.GOMAXPROCS(0) {
		go spin()
	}
	// Sleepers that wake every millisecond wait for a P behind the spinners.
	done := make(chan struct{})
	go func() {
		for range 20 {
			time.Sleep(time.Millisecond)
		}
		close(done)
	}()
	<-done
	stop.Store(true)
	if p99, n := ReadSchedWaits().P99Since(start); p99 < 5*time.Millisecond || n == 0 {
		t.Fatalf("p99 wait %v over %d with 4 spinners per P, want at least 5ms", p99, n)
	}
}
