package brk_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/brk-bench/brk"
	"github.com/brk-bench/brk/bench"
)

// levels is an Observer that prints each phase's level and whether it was
// accepted; NopObserver answers the calls it does not want.
type levels struct{ brk.NopObserver }

func (levels) PhaseFinished(s *brk.PhaseStats) {
	fmt.Printf("level %d accepted %v\n", s.Level, s.Accepted)
}

// Run a requests test against the built-in fixture: 4 connections, 1, 2
// and then 3 outstanding requests on each, every response "ok" within 1 s.
func ExampleRun() {
	fx, err := bench.StartFixture(bench.FixtureConfig{Addr: "127.0.0.1:0"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer fx.Close()
	url := fx.URL("/plain")
	runExample(url)
	// Output:
	// level 4 accepted true
	// level 8 accepted true
	// level 12 accepted true
	// done, last accepted 12
}

// runExample is ExampleRun's test of url, the code docs/library.md shows.
func runExample(url string) {
	ctx := context.Background()
	res, err := brk.Run(ctx, brk.Target{URL: url, ExpectBody: []byte("ok")},
		brk.Plan{Load: brk.Requests{Conns: 4}, Start: 1, Pace: 1, Max: 3,
			Phase: 150 * time.Millisecond, Timeout: time.Second, Accept: 99.99, Threads: 1, Repeat: 1}, levels{})
	if err != nil { // only a *brk.PlanError: a bad plan or target, before any traffic
		fmt.Println(err)
		return
	}
	if res.LastAccepted == nil { // no phase accepted: broken or inconclusive at the first level
		fmt.Println(res.Verdict, res.Reason)
		return
	}
	fmt.Printf("%s, last accepted %d\n", res.Verdict, *res.LastAccepted) // res.Phases[i]: the JSON report's fields
}

// docs/library.md's example against a port where nothing listens: no phase is
// accepted (LastAccepted is nil), and the example says why instead of
// panicking.
func Example_closedPort() {
	runExample("http://127.0.0.1:1/plain") // nothing listens on port 1
	// Output:
	// level 4 accepted false
	// inconclusive setup impossible: connect: connection refused (dialing 127.0.0.1:1)
}

// Read a JSON report (brk --json): the verdict, the last accepted level and
// the failures of the rejected phase by category.
func ExampleResult() {
	report := `{"schema": 1, "test": "requests", "verdict": "broken",
	  "last_accepted": 24, "first_rejected": 32,
	  "phases": [
	    {"index": 0, "level": 8, "accepted": true, "counts": {"attempted": 980, "succeeded": 980}},
	    {"index": 1, "level": 16, "accepted": true, "counts": {"attempted": 1960, "succeeded": 1960}},
	    {"index": 2, "level": 24, "accepted": true, "counts": {"attempted": 2930, "succeeded": 2930}},
	    {"index": 3, "level": 32, "accepted": false,
	     "counts": {"attempted": 3210, "succeeded": 2890, "timeout": 240, "abandoned": 80}}]}`
	var res brk.Result
	if err := json.Unmarshal([]byte(report), &res); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("verdict:", res.Verdict, "exit", res.Verdict.ExitCode())
	if res.LastAccepted != nil {
		fmt.Println("last accepted:", *res.LastAccepted)
	}
	for _, p := range res.Phases {
		if p.Accepted {
			continue
		}
		fmt.Printf("rejected level %d: %d of %d succeeded\n", p.Level, p.Counts.Succeeded, p.Counts.Attempted)
		for _, name := range brk.FailureCategories() {
			if n := p.Counts.Failure(name); n > 0 {
				fmt.Printf("  %s %d\n", name, n)
			}
		}
	}
	// Output:
	// verdict: broken exit 1
	// last accepted: 24
	// rejected level 32: 2890 of 3210 succeeded
	//   timeout 240
	//   abandoned 80
}
