// Package e2ekit holds what the end-to-end test packages (e2e, e2e/search)
// share: running brk under a deadline, summing and describing a result,
// and checking that every outcome is accounted for once.
package e2ekit

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brk-bench/brk"
	"github.com/brk-bench/brk/bench"
)

// RunTimeout bounds one run of RunBrk.
const RunTimeout = 20 * time.Second

// RateAttempts is how many times a rate test's run is made when the client
// fell behind its schedule (a loaded machine).
const RateAttempts = 3

// RunBrk runs brk against target under a context timeout and fails the
// test on a usage error or a run that outlived the context.
func RunBrk(t *testing.T, target brk.Target, plan brk.Plan) *brk.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), RunTimeout)
	defer cancel()
	res, err := brk.Run(ctx, target, plan, nil)
	if err != nil {
		t.Fatalf("brk.Run: %v", err)
	}
	if ctx.Err() != nil {
		t.Fatalf("brk.Run outlived its %v context: verdict %s (%s)", RunTimeout, res.Verdict, res.Reason)
	}
	return res
}

// Failures is the sum of every failure category of c.
func Failures(c brk.Counts) uint64 {
	var n uint64
	for _, name := range brk.FailureCategories() {
		n += c.Failure(name)
	}
	return n
}

// Total sums the counts of every phase of res.
func Total(res *brk.Result) brk.Counts {
	var t brk.Counts
	for _, p := range res.Phases {
		c := p.Counts
		t.Attempted += c.Attempted
		t.Succeeded += c.Succeeded
		t.Timeout += c.Timeout
		t.Transport += c.Transport
		t.Abandoned += c.Abandoned
		t.Connect += c.Connect
		t.ConnectTimeout += c.ConnectTimeout
		t.Status += c.Status
		t.Body += c.Body
		t.Protocol += c.Protocol
	}
	return t
}

// Describe renders a result for failure messages.
func Describe(res *brk.Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "verdict %s (%s)", res.Verdict, res.Reason)
	for _, p := range res.Phases {
		fmt.Fprintf(&b, "\n  phase %d level %d accepted=%v counts %+v setups %+v fault %q setup_err %q",
			p.Index, p.Level, p.Accepted, p.Counts, p.Setups, p.ProtocolFault, p.SetupError)
		if e := p.Evidence; e != nil {
			fmt.Fprintf(&b, " evidence binding %s", e.Binding)
			for _, m := range e.Margins {
				fmt.Fprintf(&b, " [%s %d of %d, margin %.2f]", m.Term, m.Bad, m.Total, m.Margin)
			}
			fmt.Fprintf(&b, " too_close=%v busy=%v stall=%v", e.Close, e.Busy, e.Stall != nil)
		}
		if p.LatencyMs.Count > 0 {
			fmt.Fprintf(&b, " p50 %.1f ms p99 %.1f ms max %.1f ms", p.LatencyMs.P50, p.LatencyMs.P99, p.LatencyMs.Max)
		}
		fmt.Fprintf(&b, " ok/s %.0f over %.3f s", p.RequestsPerSec, p.DurationS)
		if p.WorkerBusyPct != nil {
			fmt.Fprintf(&b, " workers %.0f %% busy", *p.WorkerBusyPct)
		}
	}
	return b.String()
}

// CheckAccounting asserts, for every phase, that each attempted request
// has exactly one outcome (Attempted = Succeeded + every failure), and so
// has each setup started in the phase.
func CheckAccounting(t *testing.T, res *brk.Result) {
	t.Helper()
	for _, p := range res.Phases {
		c := p.Counts
		if c.Attempted != c.Succeeded+Failures(c) {
			t.Errorf("phase %d: attempted %d != succeeded %d + failures %d (%+v)",
				p.Index, c.Attempted, c.Succeeded, Failures(c), c)
		}
		if s := p.Setups; s.Attempted != s.Established+s.Failed+s.TimedOut+s.Abandoned {
			t.Errorf("phase %d: setups %+v: some started setup has no outcome", p.Index, s)
		}
	}
	tc := Total(res)
	if tc.Attempted != tc.Succeeded+Failures(tc) {
		t.Errorf("run: attempted %d != succeeded %d + failures %d", tc.Attempted, tc.Succeeded, Failures(tc))
	}
	checkTimelines(t, res)
}

// checkTimelines asserts that every phase's timeline accounts for each of
// its outcomes exactly once, spans the phase with at most
// brk.MaxTimelinePoints points, and starts after the previous phase's.
func checkTimelines(t *testing.T, res *brk.Result) {
	t.Helper()
	prevStart := -1.0
	for _, p := range res.Phases {
		tl := p.Timeline
		if tl == nil {
			if p.Counts.Attempted > 0 {
				t.Errorf("phase %d: %d outcomes and no timeline", p.Index, p.Counts.Attempted)
			}
			continue
		}
		var ok, failed uint64
		for _, pt := range tl.Points {
			ok += pt.Succeeded
			failed += pt.Failed
		}
		if ok != p.Counts.Succeeded || failed != Failures(p.Counts) {
			t.Errorf("phase %d: timeline counts %d succeeded, %d failed; the phase %d, %d", p.Index, ok, failed, p.Counts.Succeeded, Failures(p.Counts))
		}
		if n := len(tl.Points); n > brk.MaxTimelinePoints || tl.WidthS <= 0 || float64(n)*tl.WidthS < p.DurationS || float64(n-1)*tl.WidthS > p.DurationS+tl.WidthS {
			t.Errorf("phase %d: %d points of %g s for a phase of %.3f s", p.Index, n, tl.WidthS, p.DurationS)
		}
		if tl.StartS <= prevStart {
			t.Errorf("phase %d starts at %.3f s, not after the previous phase (%.3f s)", p.Index, tl.StartS, prevStart)
		}
		prevStart = tl.StartS
	}
}

// Deref is *a, or nil.
func Deref(a *int) any {
	if a == nil {
		return nil
	}
	return *a
}

// StartFixture starts the built-in fixture for the test's duration.
func StartFixture(t *testing.T, cfg bench.FixtureConfig) *bench.Fixture {
	t.Helper()
	fx, err := bench.StartFixture(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fx.Close() })
	return fx
}

// BuildBrk builds the brk command into the test's temporary directory;
// cmdDir is the path of cmd/brk from the test's package.
func BuildBrk(t *testing.T, cmdDir string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "brk")
	if out, err := exec.Command("go", "build", "-o", bin, cmdDir).CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// SkipOnNoise skips the test when res ended inconclusive because the box
// could not carry the test (the suite run with other work on both cores):
// the box busy in most phases, the client behind its schedule, or the
// first level never held rejected only weakly (judged on a busy box and
// within one response of the SLA, the judge's rule). brk said it could not
// tell, as it should; there is nothing to check.
func SkipOnNoise(t *testing.T, res *brk.Result) {
	t.Helper()
	if res.Verdict != brk.VerdictInconclusive {
		return
	}
	busy := BusyPhases(res)
	if 2*busy > len(res.Phases) || strings.Contains(res.Reason, "the client fell behind its arrival schedule") || WeakBoundary(res) {
		t.Skipf("inconclusive on a loaded box (busy in %d of %d phases): %s", busy, len(res.Phases), res.Reason)
	}
}

// WeakBoundary reports whether every rejection of the lowest level that
// res rejected more often than it held was weak (brk.Evidence.Weak:
// judged on a busy box, within one response of the SLA).
func WeakBoundary(res *brk.Result) bool {
	held, rejected := map[int]int{}, map[int]int{}
	for _, p := range res.Phases {
		switch {
		case p.Interrupted || p.NotJudged:
		case p.Accepted:
			held[p.Level]++
		default:
			rejected[p.Level]++
		}
	}
	low := -1
	for level, n := range rejected {
		if n > held[level] && (low < 0 || level < low) {
			low = level
		}
	}
	if low < 0 {
		return false
	}
	for _, p := range res.Phases {
		if p.Level == low && !p.Accepted && !p.Interrupted && !p.NotJudged && (p.Evidence == nil || !p.Evidence.Weak()) {
			return false
		}
	}
	return true
}

// BusyPhases counts res's phases judged on a busy box.
func BusyPhases(res *brk.Result) int {
	busy := 0
	for _, p := range res.Phases {
		if p.Evidence != nil && p.Evidence.Busy {
			busy++
		}
	}
	return busy
}

// MostlyBusy reports whether every one of runs judged most of its phases
// on a busy box: each then said that its break is the server's under that
// load, which moves between two runs, so two such runs' breaks are not
// compared.
func MostlyBusy(runs ...*brk.Result) bool {
	for _, res := range runs {
		if 2*BusyPhases(res) <= len(res.Phases) {
			return false
		}
	}
	return len(runs) > 0
}

// BusyAttempts is how many times a test makes a run whose outcome a busy
// box can change before it gives up on comparing it with a quiet box's.
const BusyAttempts = 3

// AgainOnBusy is for a run that ended unlike a quiet box's run (what says
// how): where busy of its phases were judged on a busy box, brk said so,
// as it should, and the test makes the run again (it returns true) up to
// BusyAttempts times, then skips, having nothing to compare. Where no
// phase was busy it returns false, for the test to fail.
func AgainOnBusy(t testing.TB, attempt, busy int, what string) bool {
	t.Helper()
	if busy == 0 {
		return false
	}
	if attempt >= BusyAttempts {
		t.Skipf("%s, in %d attempts on a busy box (%d phases busy): nothing to compare", what, attempt, busy)
	}
	t.Logf("attempt %d: %s, on a busy box (%d phases busy); again", attempt, what, busy)
	return true
}
