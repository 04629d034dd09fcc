// Package search holds the end-to-end tests of the search for the break:
// against the capacity fixture's model, under noise (a paused server, a
// busy box, leftover work), the refinement and the latency limits. They
// are a package apart from e2e so that each package's wall time stays
// within go test's limit on a small machine.
package search

import (
	"testing"

	"github.com/brk-bench/brk/internal/e2ekit"
)

// The helpers this package shares with e2e (internal/e2ekit).
var (
	runBrk          = e2ekit.RunBrk
	failures        = e2ekit.Failures
	total           = e2ekit.Total
	describe        = e2ekit.Describe
	checkAccounting = e2ekit.CheckAccounting
	deref           = e2ekit.Deref
	startFixtureT   = e2ekit.StartFixture
)

// rateAttempts is how many times a rate search is made when the client
// fell behind its schedule.
const rateAttempts = e2ekit.RateAttempts

// buildBrk builds the brk command for a child process.
func buildBrk(t *testing.T) string { return e2ekit.BuildBrk(t, "../../cmd/brk") }
