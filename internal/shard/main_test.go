package shard

import (
	"os"
	"testing"

	"github.com/brk-bench/brk/internal/testenv"
)

// TestMain lets the package's tests run at once (testenv.Parallel): each
// runs shards of a few phases of 100 ms over loopback against a fake
// engine that sleeps, and mostly waits on the clock; the lockstep's
// tolerance (200 ms) is far above what they take of a core.
func TestMain(m *testing.M) {
	testenv.SetParallel()
	os.Exit(m.Run())
}
