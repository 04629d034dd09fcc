package testenv

import (
	"flag"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"
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
	// the box's other load. Four run at once, in a process that gave
	// each a P of its own (ProcsForInProcess). With four on the two Ps of
	// a 2-core box, a search after leftover work ended one level below a
	// fresh server's interval in 2 of 4 package runs (28/29 against
	// 31–32), and the downward search rejected level 2 (60 ms of service
	// against a 100 ms timeout) once: a search's locked worker waited for
	// a P that another test's goroutines held.
	InProcess Load = Slots / 4
	// Busy is a test that keeps a core busy while it runs (an
	// unthrottled load, a hostile server, a cross-compile): two run at
	// once, as go test's default -parallel on two cores ran them, or one
	// beside four that wait.
	Busy Load = Slots / 2
)

// A test whose verdict needs a quiet box (a search whose boundary level
// holds in one run and breaks in the next: another test beside it makes
// brk confirm every rejection, and such a pair then ends inconclusive, as
// it should) does not call Parallel, or calls ParallelQuiet when it keeps
// the box quiet itself. go test runs a package's serial tests one at a
// time before its parallel ones, so such a test runs alone without
// holding one of -parallel's places while it waits for the others to end.

// Slots is how many shares the parallel tests of a package share.
const Slots = 8

// goParallel is the -test.parallel SetParallel gives a test binary: more
// than any package has parallel tests, so that go test's own limit, which
// releases tests in source order, never holds one back; the shares do.
const goParallel = 1000

// SetParallel sets the test binary's -test.parallel to goParallel unless
// its command line gave one: go test's default (GOMAXPROCS, 2 on a 2-core
// box) runs two tests that wait on the clock where eight fit, and any
// limit of its own would release a package's longest tests last, in
// source order. Parallel's shares keep the busy tests to two at once.
// Call it from TestMain, before m.Run.
func SetParallel() {
	setGoParallel(goParallel)
}

// SetParallelInProcess is SetParallel for a package whose tests run brk
// in the test process (e2e): go test's -test.parallel stays at Slots, so
// that a test waiting for its shares holds one of go test's places and
// fewer tests run at once than the shares allow. Their workers need one of
// the process's GOMAXPROCS to run Go code, and every test beside them
// competes for it, unseen by brk (its own process's CPU): with every
// share in use, the rate tests' in-process clients fell 15 ms behind a
// 50 requests/s schedule. ParallelFirst is Parallel there.
func SetParallelInProcess() {
	setGoParallel(Slots)
}

// ProcsForInProcess gives the test process one P (GOMAXPROCS) more for
// each InProcess test that runs at once. A brk run's locked worker needs
// a P whenever it runs Go code, as its controller does (the CLI gives
// itself one more than the CPUs, cmd/brk's run). With a P each, the
// package's searches share the box's CPUs through the kernel's
// scheduler, mostly idle CPUs since their fixtures sleep, instead of
// queueing for one of the runtime's two Ps behind another test's
// goroutines. Call it from TestMain, before m.Run.
func ProcsForInProcess() {
	runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) + Slots/int(InProcess))
}

// setGoParallel sets -test.parallel to n unless the command line gave one.
func setGoParallel(n int) {
	if !flag.Parsed() {
		flag.Parse()
	}
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		_ = flag.Set("test.parallel", strconv.Itoa(n))
	}
}

// unlimited reports whether go test's -test.parallel lets every parallel
// test of a package through at once (SetParallel's), so that only the
// shares order them.
func unlimited() bool {
	f := flag.Lookup("test.parallel")
	if f == nil {
		return false
	}
	n, err := strconv.Atoi(f.Value.String())
	return err == nil && n >= goParallel
}

// kind is how a waiting test is ordered among the others.
type kind int

const (
	plain kind = iota // Parallel: in the order asked, after the others
	first             // ParallelFirst: its shares before any plain test's
	quiet             // ParallelQuiet: before every other test, and beside quiet tests only
)

// waiter is a test waiting for its shares.
type waiter struct {
	n     int
	kind  kind
	ready chan struct{} // closed when its shares are taken for it
}

// pool is a count of shares that tests take and give back. Waiting tests
// get theirs in the order they asked, quiet tests first, then those that
// called ParallelFirst; a test that does not fit lets a later one of its
// kind that does go ahead. Tests that announced they come first hold back
// every plain test until each of them has its shares; quiet tests hold
// back every other test until each of them has ended, and start only
// while no other test holds shares.
type pool struct {
	mu        sync.Mutex
	used      int
	size      int
	announced int // ParallelFirst tests that have not taken their shares yet
	quiet     int // ParallelQuiet tests that have not given their shares back
	others    int // tests other than quiet ones holding shares
	queue     []*waiter
}

func newPool(size int) *pool { return &pool{size: size} }

// announce says that a test will take its shares as k (first or quiet):
// until a first test has taken its shares no plain test gets any, and
// until a quiet test has given its shares back no other test gets any.
func (p *pool) announce(k kind) {
	p.mu.Lock()
	switch k {
	case first:
		p.announced++
	case quiet:
		p.quiet++
	}
	p.mu.Unlock()
}

// take waits until n shares (at most the pool's size) are free for a test
// of kind k and takes them; it returns what it took. A first or quiet
// test announced itself before.
func (p *pool) take(n int, k kind) int {
	n = min(n, p.size)
	w := &waiter{n: n, kind: k, ready: make(chan struct{})}
	p.mu.Lock()
	p.queue = append(p.queue, w)
	p.admit()
	p.mu.Unlock()
	<-w.ready
	return n
}

// give returns the n shares a test of kind k took.
func (p *pool) give(n int, k kind) {
	p.mu.Lock()
	p.used -= n
	if k == quiet {
		p.quiet--
	} else {
		p.others--
	}
	p.admit()
	p.mu.Unlock()
}

// admit gives shares to the waiting tests that fit, quiet tests first
// while no other test holds shares, then those that announced themselves,
// then the others once no announced test is still to take its shares and
// no quiet test is still to end, each kind in the order they asked.
// Called with mu held.
func (p *pool) admit() {
	for _, k := range []kind{quiet, first, plain} {
		switch {
		case k == quiet && p.others > 0:
			continue
		case k != quiet && p.quiet > 0:
			return
		case k == plain && p.announced > 0:
			return
		}
		rest := p.queue[:0]
		for _, w := range p.queue {
			if w.kind == k && p.used+w.n <= p.size {
				p.used += w.n
				switch k {
				case first:
					p.announced--
					p.others++
				case plain:
					p.others++
				}
				close(w.ready)
				continue
			}
			rest = append(rest, w)
		}
		clear(p.queue[len(rest):])
		p.queue = rest
	}
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
// subtests, which wait for shares the others hold, would never end.
func Parallel(t *testing.T, load Load) {
	t.Helper()
	parallel(t, load, plain)
}

// ParallelFirst is Parallel for one of a package's longest tests (20 s
// or more alone): it gets its shares before any test that called
// Parallel, so that the package's parallel tests end together instead of
// waiting for a long one that started last (go test would start them in
// source order). Call it from a top-level test, before anything that
// might skip it. Where go test's own limit is lower than SetParallel's
// (a -parallel on the command line), it is Parallel: a test held back
// waiting for one that go test holds back would never start.
func ParallelFirst(t *testing.T, load Load) {
	t.Helper()
	k := plain
	if unlimited() {
		k = first
	}
	parallel(t, load, k)
}

// ParallelQuiet is for a test whose verdict needs a quiet box but which
// itself keeps the box quiet: a search against a fixture whose capacity
// is a sleep, a few % of a core. Four such tests run at once, as
// InProcess tests do, before every other parallel test of the package
// and never beside one (nor beside a serial test: go test runs those
// first). Each is noise the others' brk cannot see (its CPU is their
// process's), but a few % of a core, not a busy test's whole one; in a
// process that gives each a P (ProcsForInProcess), the model searches of
// e2e/search found their pairs four at once as they did two at once, in
// as many phases. Call it from a top-level test,
// before anything that might skip it. Where go test's own limit is lower
// than SetParallel's, the test runs serial, alone, as a test that does not
// call Parallel does.
func ParallelQuiet(t *testing.T) {
	t.Helper()
	if !unlimited() {
		return
	}
	parallel(t, InProcess, quiet)
}

func parallel(t *testing.T, load Load, k kind) {
	t.Helper()
	if k != plain {
		// Announced while go test runs the package's tests up to their
		// t.Parallel, one at a time: before any parallel test asks.
		shares.announce(k)
	}
	t.Parallel()
	start := time.Now()
	n := shares.take(int(load), k)
	if waited := time.Since(start); waited >= 100*time.Millisecond {
		t.Logf("testenv: waited %.1fs for %d shares", waited.Seconds(), n)
	}
	t.Cleanup(func() { shares.give(n, k) })
}
