package judge

import (
	"math"
	"math/rand/v2"
	"testing"
)

// allowed9999 is the success ratio's allowance at --accept 99.99.
const allowed9999 = 1 - 0.9999

// capacityRun is one run of the capacity model at level (4 requests in
// service, 10 ms each: 400/s, 40 outcomes per 100 ms window, 10 windows;
// a request succeeds when answered within 100 ms): levels up to 32 lose
// none, from 33 almost all of each window are too slow (window i keeps i
// mod 3 of them).
func capacityRun(level int) RunEvidence {
	r := RunEvidence{Level: level, Allowed: allowed9999}
	for i := range 10 {
		w := Window{Total: 40}
		if level > 32 {
			w.Bad = 40 - uint64(i%3)
		}
		r.Windows = append(r.Windows, w)
	}
	return r
}

// searchLevels are the levels a search from 8 visits to the capacity
// model's break (×2 to 64, then bisection to 32/33).
var searchLevels = []int{8, 16, 32, 64, 48, 40, 36, 34, 33}

func capacityRuns(levels ...int) []RunEvidence {
	var runs []RunEvidence
	for _, l := range levels {
		runs = append(runs, capacityRun(l))
	}
	return runs
}

// gradualShare is the gradually degrading server's share of responses
// slower than its p99 limit at level: 0.2 % at level 10 rising smoothly
// (geometrically) to 20 % at level 80. It crosses the p99's 1 % at
// gradualTruth.
func gradualSlowShare(level int) float64 {
	return 0.002 * math.Pow(100, float64(level-10)/70)
}

var gradualTruth = 10 + 70*math.Log(5)/math.Log(100) // ≈ 34.46

// gradualRun is one run of the gradual server at level: 10 windows of
// 10 × level responses, each slower than the limit with
// gradualSlowShare(level), drawn from rng.
func gradualRun(level int, rng *rand.Rand) RunEvidence {
	r := RunEvidence{Level: level, Allowed: 0.01}
	s := gradualSlowShare(level)
	for range 10 {
		w := Window{Total: uint64(10 * level)}
		for range w.Total {
			if rng.Float64() < s {
				w.Bad++
			}
		}
		r.Windows = append(r.Windows, w)
	}
	return r
}

// gradualSearch runs the gradual server at a search's levels (×2 from
// 10, then bisection) and returns the runs and the pair they show: the
// highest level held below the lowest broken.
func gradualSearch(dataSeed uint64) (runs []RunEvidence, held, broke int) {
	rng := rand.New(rand.NewPCG(dataSeed, 1))
	for _, l := range []int{10, 20, 40, 30, 35, 32, 33, 34} {
		runs = append(runs, gradualRun(l, rng))
	}
	held, broke = pairOf(runs)
	return runs, held, broke
}

// pairOf is the highest level held below the lowest level broken (its
// margin below zero), as a search would confirm them.
func pairOf(runs []RunEvidence) (held, broke int) {
	for _, r := range runs {
		if runMargin(r) < 0 && (broke == 0 || r.Level < broke) {
			broke = r.Level
		}
	}
	for _, r := range runs {
		if runMargin(r) >= 0 && r.Level < broke && r.Level > held {
			held = r.Level
		}
	}
	return held, broke
}

// runMargin is the margin of r's outcomes.
func runMargin(r RunEvidence) float64 {
	var t Window
	for _, w := range r.Windows {
		t.Total += w.Total
		t.Bad += w.Bad
	}
	return Margin(t.Bad, t.Total, r.Allowed)
}

// accept999 is --accept 99.9 as the CLI holds it: a float64 variable, so
// that 1 − accept999/100 is computed at run time (a constant expression
// would be exact).
var accept999 = 99.9

func TestMargin(t *testing.T) {
	for _, c := range []struct {
		name       string
		bad, total uint64
		allowed    float64
		want       float64
	}{
		{name: "none bad", bad: 0, total: 100, allowed: 0.01, want: 1},
		{name: "none bad, none allowed", bad: 0, total: 100, allowed: 0, want: 1},
		{name: "at the allowance", bad: 1, total: 100, allowed: 0.01, want: 0},
		{name: "at the allowance of 1 − 99.9/100 (a float just under 0.001)", bad: 1, total: 1000, allowed: 1 - accept999/100, want: 0},
		{name: "just above it", bad: 2, total: 1999, allowed: 1 - accept999/100, want: (1e-3 - 2.0/1999) / (1e-3 + 2.0/1999)},
		{name: "all bad", bad: 100, total: 100, allowed: 0, want: -1},
		{name: "three times the allowance", bad: 3, total: 100, allowed: 0.01, want: -0.5},
		{name: "a third of the allowance", bad: 1, total: 300, allowed: 0.01, want: 0.5},
		{name: "no outcomes", bad: 0, total: 0, allowed: 0.01, want: 0},
		{name: "more bad than total", bad: 5, total: 4, allowed: 0, want: -1},
		{name: "allowance above 1", bad: 4, total: 4, allowed: 2, want: 0},
	} {
		// At the allowance exactly 0: its sign is the verdict's.
		if got := Margin(c.bad, c.total, c.allowed); math.Abs(got-c.want) > 1e-12 || c.want == 0 && got != 0 {
			t.Errorf("%s: Margin(%d, %d, %g) = %g, want %g", c.name, c.bad, c.total, c.allowed, got, c.want)
		}
	}
}

// pooledSlope is a gradual server's search as CI recorded it (the
// lognormal fixture of e2e/search's TestSearchGradualBoundary, --max-p99,
// a linear ramp with every level run twice): p99-slow responses of each
// 1 s run, near the 1 % allowance from 24 to 64 with no order among them
// (a few of ~300 each), so that the fit pools 24…64 into one block at
// margin ≈ 0.13, and clearly above it at 72.
var pooledSlope = func() []RunEvidence {
	var runs []RunEvidence
	for _, r := range [][3]uint64{
		{8, 2, 284}, {16, 1, 347}, {8, 0, 308}, {24, 2, 297}, {32, 2, 298}, {24, 3, 268}, {32, 2, 267},
		{40, 3, 321}, {48, 2, 396}, {40, 3, 298}, {48, 3, 310}, {56, 37, 331}, {56, 1, 423}, {64, 4, 383},
		{72, 13, 387}, {64, 1, 424}, {72, 28, 374},
	} {
		runs = append(runs, RunEvidence{Level: int(r[0]), Allowed: 0.01, Windows: []Window{{Total: r[2], Bad: r[1]}}})
	}
	return runs
}()

// TestBreakInterval: one case per branch of BreakInterval.
func TestBreakInterval(t *testing.T) {
	gradual, gHeld, gBroke := gradualSearch(7)
	noisy := capacityRuns(searchLevels...)
	noisy[1].Windows[4].Bad = 20 // level 16: a stall in one window rejects it
	for _, c := range []struct {
		name         string
		runs         []RunEvidence
		held, broke  int
		low, high    [2]int     // the interval's ends lie within these
		crossing     [2]float64 // so does the crossing
		boundary     string
		containLevel int // a level the interval must hold (Low < it ≤ High); 0: none
	}{
		{name: "no runs: the pair", held: 32, broke: 33, low: [2]int{32, 32}, high: [2]int{33, 33}, crossing: [2]float64{32.5, 32.5}, boundary: "cliff"},
		{name: "runs without outcomes: the pair", runs: []RunEvidence{{Level: 8, Allowed: 0.01}, {Level: 9, Allowed: 0.01, Windows: []Window{{0, 0}}}},
			held: 8, broke: 9, low: [2]int{8, 8}, high: [2]int{9, 9}, crossing: [2]float64{8.5, 8.5}, boundary: "cliff"},
		{name: "all held: no upper bound", runs: capacityRuns(8, 16, 32), held: 32, low: [2]int{32, 32}, high: [2]int{0, 0},
			crossing: [2]float64{32, 32}, boundary: "cliff"},
		{name: "all held, a broken level given", runs: capacityRuns(8, 16, 32), held: 32, broke: 64, low: [2]int{32, 32}, high: [2]int{64, 64},
			crossing: [2]float64{32, 32}, boundary: "cliff"},
		{name: "all broke: from level 0", runs: capacityRuns(64, 32+8, 34, 33), broke: 33, low: [2]int{0, 0}, high: [2]int{33, 33},
			crossing: [2]float64{16, 17}, boundary: "cliff"},
		{name: "a clean cliff at 32/33", runs: capacityRuns(searchLevels...), held: 32, broke: 33, low: [2]int{31, 32}, high: [2]int{33, 34},
			crossing: [2]float64{32, 33}, boundary: "cliff"},
		{name: "a cliff bracketed coarsely is still a cliff", runs: capacityRuns(8, 16, 32, 64), held: 32, broke: 64, low: [2]int{32, 32}, high: [2]int{64, 64},
			crossing: [2]float64{47, 49}, boundary: "cliff"},
		{name: "a gradual server", runs: gradual, held: gHeld, broke: gBroke, low: [2]int{20, 34}, high: [2]int{35, 40},
			crossing: [2]float64{30, 40}, boundary: "gradual", containLevel: int(math.Ceil(gradualTruth))},
		{name: "a slope the fit pools to one block is still gradual", runs: pooledSlope, held: 64, broke: 72, low: [2]int{24, 56}, high: [2]int{72, 72},
			crossing: [2]float64{64, 72}, boundary: "gradual"},
		{name: "a noisy rejection below held runs: pooled, and the interval keeps it", runs: noisy, held: 32, broke: 33,
			low: [2]int{8, 15}, high: [2]int{33, 33}, crossing: [2]float64{32, 33}, boundary: "cliff", containLevel: 16},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := BreakInterval(c.runs, c.held, c.broke, 1)
			if got.Low < c.low[0] || got.Low > c.low[1] || got.High < c.high[0] || got.High > c.high[1] ||
				got.Crossing < c.crossing[0] || got.Crossing > c.crossing[1] || got.Boundary != c.boundary {
				t.Errorf("BreakInterval = %+v, want Low in %v, High in %v, Crossing in %v, %s", got, c.low, c.high, c.crossing, c.boundary)
			}
			if c.containLevel != 0 && (got.Low >= c.containLevel || got.High < c.containLevel) {
				t.Errorf("BreakInterval = %+v, which leaves out level %d", got, c.containLevel)
			}
			if got.High != 0 && got.Low > c.held || c.broke > 0 && got.High < c.broke {
				t.Errorf("BreakInterval = %+v, which leaves out the pair %d/%d", got, c.held, c.broke)
			}
		})
	}
}

// TestBreakIntervalPoolsViolators: the fit pools a level whose margin
// rises above a lower level's with it, into one block of their weighted
// mean, and leaves monotone levels alone.
func TestBreakIntervalPoolsViolators(t *testing.T) {
	points := []levelPoint{{8, 1, 400}, {16, -1, 400}, {32, 1, 800}, {33, -1, 400}}
	f := &fit{}
	blocks := f.pava(points)
	if len(blocks) != 3 || blocks[1].first != 1 || blocks[1].last != 2 || math.Abs(blocks[1].margin()-1.0/3) > 1e-12 {
		t.Fatalf("pava = %+v, want 8 | 16+32 at 1/3 | 33", blocks)
	}
	if c := crossing(points, blocks); c <= 32 || c >= 33 {
		t.Errorf("crossing = %g, want between 32 and 33", c)
	}
}

// TestBreakIntervalDeterministic: the same runs and seed give the same
// fit; another seed draws other resamples.
func TestBreakIntervalDeterministic(t *testing.T) {
	runs, held, broke := gradualSearch(7)
	a, b := BreakInterval(runs, held, broke, 42), BreakInterval(runs, held, broke, 42)
	if a != b {
		t.Errorf("seed 42 twice: %+v and %+v", a, b)
	}
	lo1, hi1 := newFit(runs).bootstrap(runs, 42, 0)
	lo2, hi2 := newFit(runs).bootstrap(runs, 43, 0)
	if lo1 == lo2 && hi1 == hi2 {
		t.Errorf("seeds 42 and 43 gave the same percentiles %g, %g", lo1, hi1)
	}
	if lo, hi := newFit(runs).bootstrap(runs, 42, 0); lo != lo1 || hi != hi1 {
		t.Errorf("seed 42 twice: percentiles %g, %g and %g, %g", lo1, hi1, lo, hi)
	}
}

// TestBreakIntervalCoverage: over 40 draws of the gradual server's runs
// the interval holds the true crossing at least 36 times (a 95 %
// interval misses about one draw in 20; 500 draws missed 12).
func TestBreakIntervalCoverage(t *testing.T) {
	missed := 0
	for seed := range uint64(40) {
		runs, held, broke := gradualSearch(seed)
		f := BreakInterval(runs, held, broke, seed)
		if float64(f.Low) >= gradualTruth || float64(f.High) < gradualTruth {
			missed++
			t.Logf("data seed %d: %+v (pair %d/%d) leaves out the true crossing %.2f", seed, f, held, broke, gradualTruth)
		}
	}
	if missed > 4 {
		t.Errorf("%d of 40 intervals leave out the true crossing, want at most 4", missed)
	}
}

// BenchmarkBreakInterval: 10 000 windows (ten runs of 1 000).
func BenchmarkBreakInterval(b *testing.B) {
	var runs []RunEvidence
	for i, l := range []int{8, 16, 32, 64, 48, 40, 36, 34, 33, 32} {
		r := RunEvidence{Level: l, Allowed: allowed9999}
		for k := range 1000 {
			w := Window{Total: 40}
			if l > 32 || i == 9 && k%100 == 0 {
				w.Bad = 39
			}
			r.Windows = append(r.Windows, w)
		}
		runs = append(runs, r)
	}
	b.ReportAllocs()
	for b.Loop() {
		BreakInterval(runs, 32, 33, 1)
	}
}
