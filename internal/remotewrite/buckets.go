package remotewrite

import (
	"slices"
	"time"
)

// defaultTop is the largest edge Buckets generates when no timeout bounds
// it.
const defaultTop = 10 * time.Second

// Buckets returns classic histogram edges in seconds: the 1-2-5 series
// from 100 µs up to timeout (or 10 s when timeout is 0), plus timeout and
// maxP99 themselves (when positive), so that both the SLA timeout and the
// --max-p99 bound are bucket edges and a quantile query can tell which
// side of them a run is on.
func Buckets(timeout, maxP99 time.Duration) []float64 {
	top := timeout
	if top <= 0 {
		top = defaultTop
	}
	if maxP99 > top {
		top = maxP99
	}
	var edges []float64
	for decade := 100 * time.Microsecond; decade <= top; decade *= 10 {
		for _, m := range []time.Duration{1, 2, 5} {
			if d := decade * m; d <= top {
				edges = append(edges, d.Seconds())
			}
		}
	}
	for _, d := range []time.Duration{timeout, maxP99} {
		if d > 0 {
			edges = append(edges, d.Seconds())
		}
	}
	slices.Sort(edges)
	return slices.Compact(edges)
}
