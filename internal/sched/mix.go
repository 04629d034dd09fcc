package sched

import "fmt"

// MixMaxTargets and MixMaxWeight bound a Mix: one period is at most
// MixMaxTargets × MixMaxWeight = 64 000 entries of one byte each.
const (
	MixMaxTargets = 64
	MixMaxWeight  = 1000
)

// Mix is the deterministic order in which a request mix takes its targets:
// a smooth weighted round-robin computed once, at plan time, as one period
// of target indices (its length is the sum of the weights), then repeated.
//
// The period is built by earliest-deadline-first on Tijdeman's windows
// (R. Tijdeman, "The chairman assignment problem", Discrete Math. 32, 1980):
// with N targets of weights w_i summing to W, and σ = 1 − 1/(2(N−1)), the
// k-th occurrence of target i must fall in the slots t (1-based) where
// k ≤ t·w_i/W + σ (released) and that keep every earlier prefix at or above
// t·w_i/W − σ (its deadline); each slot takes the released target with the
// earliest deadline, the lower index on a tie. Tijdeman proves such a
// sequence exists, and EDF finds one when one exists, so in every prefix of
// length n each target i has been taken c_i(n) times with
//
//	|c_i(n) − n·w_i/W| ≤ σ < 1,
//
// and one period takes each target exactly w_i times (the count at n = W is
// an integer within σ of w_i). NewMix checks both on the period it builds.
// Because periods are exact, the bound holds over any number of periods,
// so a worker that sent n requests sent each target within one request of
// its share: that is what a log of the server can be checked against.
//
// nginx's smooth weighted round-robin (ngx_http_upstream_round_robin.c)
// gives the same sequence for weights 1,1,2 (c, a, b, c, …) but its prefix
// bound exceeds 1 for some mixes (1,5,5,1,1,5,5 reaches 24/23); see
// TestMixNginxStrays.
type Mix struct {
	seq []uint8
}

// NewMix builds the period of weights: 1..MixMaxTargets targets, each of
// weight 1..MixMaxWeight.
func NewMix(weights []int) (*Mix, error) {
	n := len(weights)
	if n == 0 || n > MixMaxTargets {
		return nil, fmt.Errorf("sched: a mix needs 1..%d targets, not %d", MixMaxTargets, n)
	}
	total := 0
	for i, w := range weights {
		if w < 1 || w > MixMaxWeight {
			return nil, fmt.Errorf("sched: target %d has weight %d, not 1..%d", i, w, MixMaxWeight)
		}
		total += w
	}
	seq := make([]uint8, total)
	if n > 1 {
		edf(seq, weights)
	}
	m := &Mix{seq: seq}
	if err := m.check(weights); err != nil {
		return nil, err
	}
	return m, nil
}

// edf fills seq (length W) with one period by earliest-deadline-first on
// Tijdeman's windows; see Mix. With D = 2(N−1), σ = (D−1)/D and the k-th
// occurrence of target i is released at slot ⌈W(kD−D+1)/(D·w_i)⌉ and due
// by slot ⌊W(kD−1)/(D·w_i)⌋+1. All quantities fit int64 (W ≤ 64 000,
// k ≤ 1000, D ≤ 126).
func edf(seq []uint8, weights []int) {
	n := len(weights)
	W := int64(len(seq))
	D := int64(2 * (n - 1))
	count := make([]int64, n)
	release := make([]int64, n)
	due := make([]int64, n)
	window := func(i int) {
		k, w := count[i]+1, int64(weights[i])
		release[i] = ceilDiv(W*(k*D-D+1), D*w)
		due[i] = W*(k*D-1)/(D*w) + 1
	}
	for i := range weights {
		window(i)
	}
	for t := int64(1); t <= W; t++ {
		best := -1
		for i := range weights {
			if release[i] <= t && (best < 0 || due[i] < due[best]) {
				best = i
			}
		}
		if best < 0 {
			// Not reached: a slot without a released target would mean
			// fewer than t occurrences fit by slot t, but Tijdeman's
			// sequence has t. check verifies the result in any case.
			best = 0
		}
		seq[t-1] = uint8(best)
		count[best]++
		window(best)
	}
}

func ceilDiv(a, b int64) int64 {
	if a <= 0 {
		return 0
	}
	return (a + b - 1) / b
}

// check verifies the period: each target exactly its weight, and every
// prefix within σ (strictly below 1) of its share.
func (m *Mix) check(weights []int) error {
	n := len(weights)
	W := int64(len(m.seq))
	if n == 1 {
		return nil // every entry is target 0: its count is its share
	}
	// Scaled by D·W: |c·W − t·w|·D ≤ (D−1)·W; for one target c·W = t·w.
	D := int64(2 * (n - 1))
	count := make([]int64, n)
	for t, idx := range m.seq {
		count[idx]++
		for i, w := range weights {
			dev := count[i]*W - int64(t+1)*int64(w)
			if dev < 0 {
				dev = -dev
			}
			if dev*D > (D-1)*W {
				return fmt.Errorf("sched: mix %v: target %d taken %d times in the first %d, beyond the bound", weights, i, count[i], t+1)
			}
		}
	}
	for i, w := range weights {
		if count[i] != int64(w) {
			return fmt.Errorf("sched: mix %v: target %d taken %d times in a period, want %d", weights, i, count[i], w)
		}
	}
	return nil
}

// Len is the length of one period, the sum of the weights.
func (m *Mix) Len() int { return len(m.seq) }

// At is the target of the i-th request of a global sequence (the rate
// test's arrival index): the same on every run and every shard.
func (m *Mix) At(i uint64) int { return int(m.seq[i%uint64(len(m.seq))]) }

// Cursor starts a sequence at the period's start. A worker owns one and
// keeps it across its connections, so replacing a connection does not
// restart the mix.
func (m *Mix) Cursor() MixCursor { return MixCursor{seq: m.seq} }

// MixCursor walks a Mix's period, wrapping at its end.
type MixCursor struct {
	seq []uint8
	pos int
}

// Next returns the next target index.
func (c *MixCursor) Next() int {
	i := c.seq[c.pos]
	if c.pos++; c.pos == len(c.seq) {
		c.pos = 0
	}
	return int(i)
}
