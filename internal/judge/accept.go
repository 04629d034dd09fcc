package judge

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
)

// Accept is the minimum success share as an exact fraction Num/Den,
// parsed once from its decimal text (99.99 → 9999/10000), so that no float
// rounding decides a verdict.
type Accept struct{ Num, Den uint64 }

// ParseAccept parses a percentage between 0 and 100 with at most 9
// decimals and an optional "%". Its error quotes s and names no field or
// flag: the caller prefixes what s was ("accept_pct", "--accept").
func ParseAccept(s string) (Accept, error) {
	t := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "%"))
	intPart, frac, _ := strings.Cut(t, ".")
	if intPart == "" && frac == "" || len(frac) > 9 || strings.ContainsAny(t, "+-eE") {
		return Accept{}, fmt.Errorf("%q: want a percentage such as 99.99", s)
	}
	if intPart == "" {
		intPart = "0"
	}
	num, err := strconv.ParseUint(intPart+frac, 10, 64)
	if err != nil {
		return Accept{}, fmt.Errorf("%q: want a percentage such as 99.99", s)
	}
	den := uint64(100)
	for range frac {
		den *= 10
	}
	if num > den {
		return Accept{}, fmt.Errorf("%q: must be at most 100", s)
	}
	return Accept{Num: num, Den: den}, nil
}

// Met reports whether succeeded × Den ≥ attempted × Num, computed in 128
// bits. A phase with no attempts never meets it.
func (a Accept) Met(succeeded, attempted uint64) bool {
	if attempted == 0 {
		return false
	}
	lh, ll := bits.Mul64(succeeded, a.Den)
	rh, rl := bits.Mul64(attempted, a.Num)
	return lh > rh || lh == rh && ll >= rl
}

// String returns the percentage.
func (a Accept) String() string {
	if a.Den == 0 {
		return "0"
	}
	return strconv.FormatFloat(float64(a.Num)*100/float64(a.Den), 'f', -1, 64)
}

// Pct returns the percentage as a float: the float64 nearest to it (one
// correctly rounded division of integers below 2⁵³), whose shortest
// decimal form is the percentage's for any Accept that ParseAccept
// returns.
func (a Accept) Pct() float64 {
	if a.Den == 0 {
		return 0
	}
	return float64(a.Num) * 100 / float64(a.Den)
}
