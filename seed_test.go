package brk_test

import (
	"context"
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/brk-bench/brk"

	"github.com/brk-bench/brk/internal/testenv"
)

// TestSeedWithin2To53: the seeds the library picks for poisson arrivals
// are in 1..MaxSeed (2^53−1), so that the JSON report's seed read as a
// double (jq, JavaScript) is the seed; MaxSeed itself is a valid seed.
// Before, a picked seed was any odd uint64 (above 2^53 in all but one
// run in 2048). The runs go to a closed port: phase 0 ends at once.
func TestSeedWithin2To53(t *testing.T) {
	url := "http://" + testenv.RefusingAddr(t) + "/"
	p := brk.Plan{Load: brk.Rate{Conns: 1, Arrivals: "poisson"}, Start: 10, Max: 10, Phase: 50 * time.Millisecond, Timeout: 100 * time.Millisecond,
		Threads: 1}
	for i := range 8 {
		res, err := brk.Run(context.Background(), brk.Target{URL: url}, p, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Seed < 1 || res.Seed > brk.MaxSeed || res.Plan.Seed != res.Seed {
			t.Fatalf("run %d: picked seed %d (plan.seed %d), want 1..%d", i, res.Seed, res.Plan.Seed, uint64(brk.MaxSeed))
		}
		b, _ := json.Marshal(res)
		var doubles struct{ Seed float64 }
		if err := json.Unmarshal(b, &doubles); err != nil || uint64(doubles.Seed) != res.Seed {
			t.Fatalf("run %d: seed %d read as a double is %v", i, res.Seed, doubles.Seed)
		}
	}
	if float64(brk.MaxSeed) != math.Exp2(53)-1 {
		t.Errorf("MaxSeed %d is not 2^53-1", uint64(brk.MaxSeed))
	}
	max := p
	max.Load = brk.Rate{Conns: 1, Arrivals: "poisson", Seed: brk.MaxSeed}
	if err := brk.Validate(brk.Target{URL: url}, max); err != nil {
		t.Errorf("Seed = MaxSeed refused: %v", err)
	}
}
