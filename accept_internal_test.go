package brk

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/brk-bench/brk/internal/judge"
)

// TestAcceptFraction: Plan.Accept's number is the exact fraction its
// shortest decimal form spells, never a float's rounding of it.
func TestAcceptFraction(t *testing.T) {
	cases := []struct {
		v        float64
		num, den uint64
	}{
		{99.99, 9999, 10000},
		{100, 100, 100},
		{0.5, 5, 1000},
		{DefaultAccept, 9999, 10000},
		{AcceptAny, 0, 100},
		{99.999999999, 99999999999, 100000000000},
		{1e-9, 1, 100000000000},
		{50, 50, 100},
	}
	for _, c := range cases {
		a, err := acceptFraction(c.v)
		if err != nil || a.Num != c.num || a.Den != c.den {
			t.Errorf("%v: got %d/%d %v, want %d/%d", c.v, a.Num, a.Den, err, c.num, c.den)
		}
	}
	for _, v := range []float64{-0.5, -100, math.NaN(), math.Inf(1), math.Inf(-1), 100.000000001, 1e21, 1e-10, 99.9999999999} {
		if a, err := acceptFraction(v); err == nil {
			t.Errorf("%v: accepted as %d/%d", v, a.Num, a.Den)
		}
	}
	// The default fills a zero Accept in; the verdict's fraction of 99.99
	// is exactly 9999/10000: 9999 of 10000 meet it, 9998 do not.
	p := Plan{}
	p.Defaults()
	a, err := acceptFraction(p.Accept)
	if err != nil || !a.Met(9999, 10000) || a.Met(9998, 10000) {
		t.Errorf("default %v: %d/%d %v", p.Accept, a.Num, a.Den, err)
	}
}

// TestAcceptTextRoundTrip: every percentage text with at most 9 decimals
// (what the CLI's --accept parses) gives, through Accept.Pct, the number
// whose fraction is the text's: the CLI loses nothing by handing the
// library a float64.
func TestAcceptTextRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	texts := []string{"99.99", "99.999", "0.001", "100", "1", "50%", ".5", "99.999999999", "0.000000001", "33.333333333", "99.990"}
	for range 20000 {
		dec := rng.IntN(10)
		den := math.Pow10(dec)
		texts = append(texts, fmt.Sprintf("%.*f", dec, float64(rng.Int64N(100*int64(den)+1))/den))
	}
	for _, s := range texts {
		want, err := judge.ParseAccept(s)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		if want.Num == 0 {
			continue // the CLI hands AcceptAny
		}
		got, err := acceptFraction(want.Pct())
		h1, l1 := bits.Mul64(got.Num, want.Den)
		h2, l2 := bits.Mul64(want.Num, got.Den)
		if err != nil || h1 != h2 || l1 != l2 {
			t.Fatalf("%q: %d/%d → %v → %d/%d %v", s, want.Num, want.Den, want.Pct(), got.Num, got.Den, err)
		}
	}
}
