// Package search holds the end-to-end tests of the search for the break:
// against the capacity fixture's model, under noise (a paused server, a
// busy box, leftover work), the refinement and the latency limits. They
// are a package apart from e2e so that each package's wall time stays
// within go test's limit on a small machine.
package search

import (
	"os"
	"testing"

	"github.com/brk-bench/brk"

	"github.com/brk-bench/brk/internal/e2ekit"
	"github.com/brk-bench/brk/internal/testenv"
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

// busyInconclusive reports whether a run ended inconclusive on a box busy
// in most of its phases (other processes took CPU from the server), and
// in how many: brk said it could not tell, as it should, and there is
// nothing to check against a model.
func busyInconclusive(res *brk.Result) (bool, int) {
	busy := e2ekit.BusyPhases(res)
	return res.Verdict == brk.VerdictInconclusive && 2*busy > len(res.Phases), busy
}

// skipBusy reports whether one of the runs ended inconclusive on a busy
// box (busyInconclusive), for the caller to make them again; on the
// busyAttempts-th such attempt it skips the test.
func skipBusy(t *testing.T, attempt int, runs ...*brk.Result) bool {
	t.Helper()
	for _, res := range runs {
		if noise, busy := busyInconclusive(res); noise {
			if attempt >= busyAttempts {
				t.Skipf("attempt %d ended inconclusive on a busy box (%d of %d phases): %s; nothing to check against the model", attempt, busy, len(res.Phases), res.Reason)
			}
			t.Logf("attempt %d: inconclusive on a busy box (%d of %d phases): %s; again", attempt, busy, len(res.Phases), res.Reason)
			return true
		}
	}
	return false
}

// TestMain runs up to testenv.Slots parallel tests at once (see
// testenv.Parallel). A test that checks a search against its model's
// exact break runs beside three other such tests at most, before the
// package's other parallel tests and never beside them
// (testenv.ParallelQuiet): another search in this process is noise brk
// cannot see, since its CPU is brk's own process's, not the box's other
// load. Run beside the noisy tests, the connections model ended
// inconclusive ("the levels conflict") and the A/B's side B took 16
// levels where the bound is 13; a model test's fixture sleeps, and four
// of them take a few % of a core. The tests that make the box busy on
// purpose are serial. Tests that retry a stall or judge noise themselves
// run beside each other, four at once (testenv.InProcess), and the
// process has a P for each of them (testenv.ProcsForInProcess): on the
// runtime's two Ps, the connections and HTTP/2 models took detours when
// paired and ran serial, and four noisy tests at once moved a break
// (docs/engine.md).
func TestMain(m *testing.M) {
	testenv.SetParallel()
	testenv.ProcsForInProcess()
	os.Exit(m.Run())
}
