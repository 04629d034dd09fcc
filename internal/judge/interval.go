package judge

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
)

// The interval: where a run's break lies, at 95 %, from every judged run
// of its levels (docs/search.md, "The interval"). A pure function of the
// runs and a seed, so that brk merge replays the same interval.

// Window is one window (100 ms, or coarser in a long phase) of a run's outcomes for the binding SLA term:
// Bad of Total were outside the term (failures for the success ratio; responses slower than the limit for a latency term).
type Window struct{ Total, Bad uint64 }

// RunEvidence is one judged run of a level, as the interval sees it.
type RunEvidence struct {
	Level   int
	Allowed float64  // the binding term's allowed share of bad outcomes: 1 − accept/100 for the success ratio, 0.01 for --max-p99, 0.001 for --max-p999
	Windows []Window // the run's windows (their sums are the run's totals)
}

// BreakFit is where the break lies: above Low and at or below High (the
// interval, in levels, at 95 %), the fitted margin's zero crossing, and
// how sharply the margin falls there.
type BreakFit struct {
	Low, High int     // the interval (levels)
	Crossing  float64 // the fit's zero crossing
	Boundary  string  // "cliff" | "gradual"
}

// The boundaries BreakFit.Boundary names.
const (
	BoundaryCliff   = "cliff"
	BoundaryGradual = "gradual"
)

const (
	// bootstrapRounds is how many resamplings of the windows the
	// interval's percentiles come from.
	bootstrapRounds = 400
	// slopeMargin bounds the slope: a fitted margin strictly between
	// −slopeMargin and +slopeMargin is neither clearly held nor clearly
	// broken.
	slopeMargin = 0.5
	// gradualShare and gradualLevels are the threshold between a cliff
	// and a gradual boundary: the levels on the slope span more than
	// gradualShare of the crossing and at least gradualLevels levels.
	gradualShare  = 0.10
	gradualLevels = 2
)

// Margin is a term's signed, normalised margin: (a − s)/(a + s) with s = bad/total and a = allowed, in [−1, 1]; +1 none bad, 0 exactly at the allowance, −1 all bad. A total of 0 gives 0.
// An allowance outside [0, 1] is clamped to it; none bad is +1 even where
// none is allowed; a share within a relative 1e-9 of the allowance is at
// it (0), so that the float error of 1 − accept/100 (1 − 99.9/100 is just
// under 0.001) never turns a phase the exact judge held at its allowance
// negative.
func Margin(bad, total uint64, allowed float64) float64 {
	if total == 0 {
		return 0
	}
	if bad == 0 {
		return 1
	}
	a := min(max(allowed, 0), 1)
	s := float64(min(bad, total)) / float64(total)
	if math.Abs(a-s) <= 1e-9*(a+s) {
		return 0
	}
	return (a - s) / (a + s)
}

// BreakInterval is the break's interval at 95 %: a monotone (non-increasing in level) fit of the margins of every run (isotonic regression, pool-adjacent-violators, weighted by each run's total), its zero crossing interpolated between levels, and a bootstrap over each run's windows (resample windows with replacement, B = 400 rounds, deterministic from seed via math/rand/v2 PCG) giving the 2.5 and 97.5 percentiles of the crossing; the result is widened to contain [held, broke] (the confirmed final pair; held may be 0 when none held) and rounded outward to whole levels.
//
// A level whose runs' mean margin is below zero lies inside the interval
// or above it, and one whose mean is at or above zero inside or below it
// once any level broke: a conflict that persists widens the interval.
// Without a level below zero nothing broke: the interval is [the highest
// level run or held, broke] (High 0 when broke is 0: no upper bound). No
// runs with outcomes give [held, broke] and its midpoint. Boundary is
// "gradual" when the fitted levels strictly between margins +0.5 and
// −0.5 span more than 10 % of the crossing and at least 2 levels, else
// "cliff": a gap between levels, however wide, is no evidence of a
// slope. A pooled block spans its levels whose own margins lie on the
// slope too, or counts once, at its mean level, where none does (a
// conflict between a clear hold and a clear break).
func BreakInterval(runs []RunEvidence, held, broke int, seed uint64) BreakFit {
	f := newFit(runs)
	for i, r := range runs {
		var t Window
		for _, w := range r.Windows {
			t.Total += w.Total
			t.Bad += w.Bad
		}
		f.add(i, t)
	}
	points := f.levelPoints()
	if len(points) == 0 {
		return BreakFit{Low: held, High: broke, Crossing: float64(held+broke) / 2, Boundary: BoundaryCliff}
	}
	lowestBroken, highestHeld := conflictBounds(points)
	blocks := f.pava(points)
	fit := BreakFit{Crossing: crossing(points, blocks), Boundary: boundary(points, blocks)}
	if lowestBroken == 0 { // nothing broke
		fit.Low = max(held, points[len(points)-1].level)
		if broke > fit.Low {
			fit.High = broke
		}
		return fit
	}
	// The bootstrap reuses f's scratch: points and blocks are spent.
	lo, hi := f.bootstrap(runs, seed, fit.Crossing)
	lo, hi = min(lo, fit.Crossing), max(hi, fit.Crossing)
	fit.Low, fit.High = int(math.Floor(lo)), int(math.Ceil(hi))
	if fit.High <= fit.Low { // a crossing on a level: that level held at its allowance
		fit.High = fit.Low + 1
	}
	fit.Low = min(fit.Low, held, lowestBroken-1)
	fit.High = max(fit.High, broke, highestHeld+1)
	return fit
}

// levelPoint is one level of the fit: its runs' margins averaged, each
// weighted by its total (weight: the sum of those totals).
type levelPoint struct {
	level          int
	margin, weight float64
}

// block is a run of adjacent levelPoints that the fit pools to one
// margin (their weighted mean), from first to last inclusive.
type block struct {
	first, last int
	sumWM, sumW float64
	sumWL       float64 // Σ weight × level: the block's mean level
}

func (b block) margin() float64 { return b.sumWM / b.sumW }

// fit is BreakInterval's scratch: the runs' distinct levels and, per
// level, the sums their runs add. Reused across bootstrap rounds.
type fit struct {
	levels   []int     // distinct levels, ascending
	runLevel []int     // each run's index into levels
	allowed  []float64 // each run's allowance
	sumWM    []float64 // per level: Σ total × margin
	sumW     []float64 // per level: Σ total
	points   []levelPoint
	blocks   []block
}

func newFit(runs []RunEvidence) *fit {
	f := &fit{runLevel: make([]int, len(runs)), allowed: make([]float64, len(runs))}
	for _, r := range runs {
		f.levels = append(f.levels, r.Level)
	}
	slices.Sort(f.levels)
	f.levels = slices.Compact(f.levels)
	for i, r := range runs {
		f.runLevel[i], _ = slices.BinarySearch(f.levels, r.Level)
		f.allowed[i] = r.Allowed
	}
	f.sumWM = make([]float64, len(f.levels))
	f.sumW = make([]float64, len(f.levels))
	f.points = make([]levelPoint, 0, len(f.levels))
	f.blocks = make([]block, 0, len(f.levels))
	return f
}

// add counts run i's outcomes t at its level.
func (f *fit) add(i int, t Window) {
	l := f.runLevel[i]
	w := float64(t.Total)
	f.sumWM[l] += w * Margin(t.Bad, t.Total, f.allowed[i])
	f.sumW[l] += w
}

// levelPoints returns the levels with outcomes and their mean margins,
// ascending, and clears the sums for the next round.
func (f *fit) levelPoints() []levelPoint {
	f.points = f.points[:0]
	for l, lv := range f.levels {
		if f.sumW[l] > 0 {
			f.points = append(f.points, levelPoint{level: lv, margin: f.sumWM[l] / f.sumW[l], weight: f.sumW[l]})
		}
		f.sumWM[l], f.sumW[l] = 0, 0
	}
	return f.points
}

// pava is the isotonic (non-increasing) fit of points by
// pool-adjacent-violators: adjacent levels whose margins rise with the
// level are pooled into one block until the blocks' margins never rise.
func (f *fit) pava(points []levelPoint) []block {
	bs := f.blocks[:0]
	for i, p := range points {
		bs = append(bs, block{first: i, last: i, sumWM: p.weight * p.margin, sumW: p.weight, sumWL: p.weight * float64(p.level)})
		for n := len(bs); n > 1 && bs[n-2].margin() < bs[n-1].margin(); n = len(bs) {
			top := bs[n-1]
			b := &bs[n-2]
			b.last = top.last
			b.sumWM += top.sumWM
			b.sumW += top.sumW
			b.sumWL += top.sumWL
			bs = bs[:n-1]
		}
	}
	f.blocks = bs
	return bs
}

// crossing is where the fitted margin reaches zero: interpolated between
// the highest level fitted at or above zero and the next; below the
// lowest level, from an anchor at level 0 with margin +1 (no load breaks
// nothing); the highest level when no fitted margin is below zero.
func crossing(points []levelPoint, blocks []block) float64 {
	prevLevel, prevMargin := 0.0, 1.0
	for _, b := range blocks {
		m := b.margin()
		if m < 0 {
			l := float64(points[b.first].level)
			return prevLevel + (l-prevLevel)*prevMargin/(prevMargin-m)
		}
		prevLevel, prevMargin = float64(points[b.last].level), m
	}
	return prevLevel
}

// boundary is "gradual" when the slope — the fitted blocks whose margin
// lies strictly between −slopeMargin and +slopeMargin — spans more than
// gradualShare of the crossing and at least gradualLevels levels; else
// "cliff". A slope block stands at the levels of its points whose own
// margin is on the slope too (levels each near the limit, pooled by
// their noise: a slope however the fit pools it), or, where none is, at
// its mean level once (levels clearly held and clearly broken pooled by
// a conflict: no evidence of a slope).
func boundary(points []levelPoint, blocks []block) string {
	lo, hi := math.Inf(1), math.Inf(-1)
	onSlope := func(m float64) bool { return m > -slopeMargin && m < slopeMargin }
	for _, b := range blocks {
		if !onSlope(b.margin()) {
			continue
		}
		own := false
		for _, p := range points[b.first : b.last+1] {
			if onSlope(p.margin) {
				lo, hi, own = min(lo, float64(p.level)), max(hi, float64(p.level)), true
			}
		}
		if !own {
			at := b.sumWL / b.sumW
			lo, hi = min(lo, at), max(hi, at)
		}
	}
	span := hi - lo
	if span >= gradualLevels && span > gradualShare*crossing(points, blocks) {
		return BoundaryGradual
	}
	return BoundaryCliff
}

// conflictBounds returns the lowest level whose mean margin is below zero
// (0: none; levels start at 1) and the highest level at or above zero
// that lies above it (0: none): levels the interval must keep.
func conflictBounds(points []levelPoint) (lowestBroken, highestHeld int) {
	for _, p := range points {
		switch {
		case p.margin < 0 && lowestBroken == 0:
			lowestBroken = p.level
		case p.margin >= 0 && lowestBroken != 0:
			highestHeld = p.level
		}
	}
	return lowestBroken, highestHeld
}

// bootstrap returns the 2.5 and 97.5 percentiles of the crossing over
// bootstrapRounds fits, each of every run's windows resampled with
// replacement (as many as it has), from a PCG seeded with seed. A round
// that drew no outcome at all counts as the point fit's crossing.
func (f *fit) bootstrap(runs []RunEvidence, seed uint64, point float64) (lo, hi float64) {
	rng := rand.NewPCG(seed, 0x627265616b) // "break"
	crossings := make([]float64, bootstrapRounds)
	for round := range crossings {
		for i, r := range runs {
			var t Window
			n := uint64(len(r.Windows))
			for range n {
				// A uniform index in [0, n): the high word of a 64-bit
				// draw times n (Lemire's method; its bias, under n/2⁶⁴, is
				// not worth a rejection).
				i, _ := bits.Mul64(rng.Uint64(), n)
				w := r.Windows[i]
				t.Total += w.Total
				t.Bad += w.Bad
			}
			f.add(i, t)
		}
		points := f.levelPoints()
		if len(points) == 0 {
			crossings[round] = point
			continue
		}
		crossings[round] = crossing(points, f.pava(points))
	}
	slices.Sort(crossings)
	return crossings[bootstrapRounds*25/1000], crossings[(bootstrapRounds*975+999)/1000-1]
}
