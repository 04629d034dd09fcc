package testenv

import (
	"flag"
	"strconv"
	"sync"
	"testing"
)

// Load is how much of the machine a parallel test takes while it runs,
// in shares: Slots of them run at once.
type Load int

const (
	// Waits is a test that mostly waits on the clock: a search of short
	// phases against a fixture that models its capacity in time, child
	// processes waiting on their shard slots. Measured alone, such a test
	// uses under half a core, most under a fifth (`/usr/bin/time` of one
	// test: CPU/wall 0.1–0.4; cmd/brk's sharded searches 0.15). Eight run
	// at once.
	Waits Load = 1
	// InProcess is a test whose searches and fixtures all run in the
	// test process (e2e/search): the CPU of another such test beside it
	// is noise its brk cannot see, since it is brk's own process's, not
	// the box's other load. Two run at once: with four, a search after
	// leftover work ended one level below a fresh server's interval in 2
	// of 4 package runs, and the downward search rejected level 2 (60 ms
	// of service against a 100 ms timeout) once.
	InProcess Load = Slots / 2
	// Busy is a test that keeps a core busy while it runs (an
	// unthrottled load, a hostile server, a cross-compile): two run at
	// once, as go test's default -parallel on two cores ran them, or one
	// beside four that wait.
	Busy Load = Slots / 2
)

// A test whose verdict needs a quiet box (a search whose boundary level
// holds in one run and breaks in the next: another test beside it makes
// brk confirm every rejection, and such a pair then ends inconclusive, as
// it should) does not call Parallel. go test runs a package's serial
// tests one at a time before its parallel ones, so such a test runs
// alone without holding one of -parallel's places while it waits for
// the others to end.

// Slots is how many shares the parallel tests of a package share, and
// the -parallel SetParallel gives a test binary.
const Slots = 8

// SetParallel sets the test binary's -test.parallel to Slots unless its
// command line gave one: go test's default (GOMAXPROCS, 2 on a 2-core
// box) runs two tests that wait on the clock where eight fit. Parallel's
// shares keep the busy tests to two at once. Call it from TestMain,
// before m.Run.
func SetParallel() {
	if !flag.Parsed() {
		flag.Parse()
	}
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		_ = flag.Set("test.parallel", strconv.Itoa(Slots))
	}
}

// pool is a count of shares that goroutines take and give back.
type pool struct {
	mu   sync.Mutex
	cond *sync.Cond
	used int
	size int
}

func newPool(size int) *pool {
	p := &pool{size: size}
	p.cond = sync.NewCond(&p.mu)
	return p
}

// take waits until n shares (at most the pool's size) are free and takes
// them; it returns what it took.
func (p *pool) take(n int) int {
	n = min(n, p.size)
	p.mu.Lock()
	for p.used+n > p.size {
		p.cond.Wait()
	}
	p.used += n
	p.mu.Unlock()
	return n
}

// give returns n shares.
func (p *pool) give(n int) {
	p.mu.Lock()
	p.used -= n
	p.mu.Unlock()
	p.cond.Broadcast()
}

// shares are the package's Slots shares.
var shares = newPool(Slots)

// Parallel runs t in parallel with the package's other parallel tests
// (t.Parallel), then waits until load's shares of Slots are free and
// holds them until t ends. A test whose verdict depends on time gets the
// client's CPU it needs: at most two busy tests, or one and four that
// wait, run beside it.
//
// A test with parallel subtests calls t.Parallel itself and lets each
// subtest call Parallel: a test holding shares while it waits for its
// subtests, which wait for one of -parallel's places that tests waiting
// for shares hold, would never end.
func Parallel(t *testing.T, load Load) {
	t.Helper()
	t.Parallel()
	n := shares.take(int(load))
	t.Cleanup(func() { shares.give(n) })
}
