package bench

import (
	"time"

	"github.com/brk-bench/brk"
)

// DemoSetup is the demo's fixture and plan, with its predicted outcome.
type DemoSetup struct {
	Fixture  FixtureConfig
	Plan     brk.Plan
	LastPass int // the last depth per connection predicted to pass
}

// Demo returns the demo: a fixture with capacity K=4 and service D=20 ms
// serves C outstanding requests with latency C·D/K. Eight connections at
// depth d hold C=8d, so latency is 40·d ms; with a 140 ms timeout depth 3
// (120 ms) passes and depth 4 (160 ms) breaks, 20 ms from the budget on
// either side.
func Demo() DemoSetup {
	return DemoSetup{
		Fixture: FixtureConfig{Addr: "127.0.0.1:0", Capacity: 4, Service: 20 * time.Millisecond},
		Plan: brk.Plan{
			Conns: 8, Start: 1, Pace: 1, Phase: 3 * time.Second,
			Timeout: 140 * time.Millisecond, Accept: 99.99, Threads: 1,
		},
		LastPass: 3,
	}
}
