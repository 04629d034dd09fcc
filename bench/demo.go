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

// Demo returns the demo: a fixture with capacity K=4 and service D=50 ms
// serves C outstanding requests with latency C·D/K. Eight connections at
// depth d hold C=8d, so latency is 100·d ms; with a 380 ms timeout depth 3
// (300 ms) passes with 80 ms to spare and depth 4 (400 ms) breaks: the
// fixture cannot answer faster than its capacity allows, so only a stall
// longer than 80 ms moves the break, and only downward. Accepting 99 %
// lets a phase of ~240 requests absorb two stray timeouts on a busy
// machine; a broken phase fails nearly all of its requests.
func Demo() DemoSetup {
	return DemoSetup{
		Fixture: FixtureConfig{Addr: "127.0.0.1:0", Capacity: 4, Service: 50 * time.Millisecond},
		Plan: brk.Plan{
			Conns: 8, Start: 1, Pace: 1, Phase: 3 * time.Second,
			Timeout: 380 * time.Millisecond, Accept: 99, Threads: 1,
		},
		LastPass: 3,
	}
}
