package sched

import (
	"testing"
	"time"

	"github.com/brk-bench/brk/internal/judge"
)

// A connection's floor is the highest limit it stayed at or above for all
// but judge.MaxLimitShare of its time; time with no limit set holds nothing
// down, and a fifth distinct limit folds the highest under the one below.
func TestLimitSpansFloor(t *testing.T) {
	ms := int64(time.Millisecond)
	type span struct{ limit, ns int64 }
	for _, c := range []struct {
		name  string
		spans []span
		lived int64
		want  int64
	}{
		{"no limit set", []span{{-1, 1000 * ms}}, 1000 * ms, -1},
		{"one limit all along", []span{{100, 1000 * ms}}, 1000 * ms, 100},
		{"a 3 ms dip does not lower it", []span{{100, 500 * ms}, {2, 3 * ms}, {1000, 497 * ms}}, 1000 * ms, 100},
		{"a dip of exactly 1 % does not lower it", []span{{100, 990 * ms}, {2, 10 * ms}}, 1000 * ms, 100},
		{"a dip of 2 % does", []span{{100, 980 * ms}, {2, 20 * ms}}, 1000 * ms, 2},
		{"a brief raise does not lift it", []span{{100, 995 * ms}, {1000, 5 * ms}}, 1000 * ms, 100},
		{"a limit set after 99.5 % of the time", []span{{-1, 995 * ms}, {8, 5 * ms}}, 1000 * ms, -1},
		{"the same limit twice adds up", []span{{2, 6 * ms}, {100, 988 * ms}, {2, 6 * ms}}, 1000 * ms, 2},
		{"a fifth limit folds the highest two", []span{{10, 2 * ms}, {20, 2 * ms}, {30, 2 * ms}, {40, 900 * ms}, {50, 94 * ms}}, 1000 * ms, 30},
		{"a fifth, lowest limit", []span{{20, 100 * ms}, {30, 300 * ms}, {40, 300 * ms}, {50, 298 * ms}, {1, 2 * ms}}, 1000 * ms, 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			var s limitSpans
			for _, sp := range c.spans {
				s.add(sp.limit, sp.ns)
			}
			if got := s.floor(c.lived, judge.MaxLimitShare); got != c.want {
				t.Fatalf("floor %d, want %d (%+v)", got, c.want, s)
			}
		})
	}
}
