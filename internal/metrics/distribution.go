package metrics

import (
	"math"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// DistributionTicks is how many percentiles a Distribution has per half
// distance to 100 %: 0, 5, …, 50, then 52.5, …, 75, then 76.25, … (as
// HdrHistogram's percentile output counts its ticks).
const DistributionTicks = 10

// DistributionTop is the highest percentile of a Distribution.
const DistributionTop = 99.999

// DistPoint is one point of a latency distribution: the value (µs) at a
// percentile and the count of values at or below it (through the bucket
// that holds it).
type DistPoint struct {
	Percentile float64
	ValueUs    int64
	Count      int64
}

// DistributionPercentiles are a Distribution's percentiles, ascending:
// DistributionTicks per half distance from 0 to DistributionTop, which
// ends it (169 of them).
func DistributionPercentiles() []float64 {
	var out []float64
	for half := 0; ; half++ {
		lo := 100 * (1 - math.Pow(2, -float64(half)))
		hi := 100 * (1 - math.Pow(2, -float64(half+1)))
		step := (hi - lo) / DistributionTicks
		if half == 0 {
			out = append(out, 0)
		}
		for i := 1; i <= DistributionTicks; i++ {
			p := lo + step*float64(i)
			if p >= DistributionTop {
				return append(out, DistributionTop)
			}
			out = append(out, p)
		}
	}
}

// Distribution is h's percentile distribution (nil when h is empty): the
// value at each of DistributionPercentiles, as h.ValueAtPercentile reads
// it, and the count of values through its bucket.
func Distribution(h *hdrhistogram.Histogram) []DistPoint {
	if h == nil || h.TotalCount() == 0 {
		return nil
	}
	bars := h.Distribution()
	ps := DistributionPercentiles()
	out := make([]DistPoint, len(ps))
	var seen int64
	b := 0
	for i, p := range ps {
		v := h.ValueAtPercentile(p)
		for b < len(bars) && bars[b].From <= v {
			seen += bars[b].Count
			b++
		}
		out[i] = DistPoint{Percentile: p, ValueUs: v, Count: seen}
	}
	return out
}
