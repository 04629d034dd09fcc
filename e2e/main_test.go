package e2e

import (
	"os"
	"testing"

	"github.com/brk-bench/brk/internal/testenv"
)

// TestMain runs up to testenv.Slots parallel tests at once (see
// testenv.Parallel): most of this package's time is phases that wait on
// the clock. Its runs share the test process
// (testenv.SetParallelInProcess).
func TestMain(m *testing.M) {
	testenv.SetParallelInProcess()
	os.Exit(m.Run())
}
