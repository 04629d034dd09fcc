package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/brk-bench/brk"
	"github.com/brk-bench/brk/bench"
	"github.com/brk-bench/brk/internal/testenv"
	"github.com/brk-bench/brk/report"
)

// Issue 24, must-show 2: a slow route among fast ones, driven until it
// breaks, at depth 1 (the connections test, each connection kept alive
// carrying one request at a time over HTTP/1.1) and over HTTP/2 (the
// requests test, streams multiplexed on two connections): fast requests
// never wait behind a slow one in a pipeline. The broken run names the slow
// target first, and each target's latency is its own.
//
// The model. The fixture serves one request at a time (Capacity 1) in
// mixService each; /delay?ms=60 then sleeps mixSlow outside the slot (see
// TestSlowRouteAmongFast in bench). A request's latency is its wait for
// the slot Q, plus mixService, plus mixSlow for the slow route: the slow
// target's latency is the fast ones' plus mixSlow. With L outstanding (one
// in four slow) the server saturates near L = 5; above, by Little's law,
// the mean latency is L·mixService, so Q ≈ 4L − 19 ms, the slow target's
// latency 4L + 45 ms and the fast ones' 4L − 15 ms: the slow one passes the
// 120 ms timeout near L = 19, the fast ones only near L = 34. The run
// breaks on the slow target's timeouts while the fast ones still succeed.
// The queue's length varies with the number of slow requests asleep (3.75
// on average, about 2 either side), so the slow target's tail reaches the
// timeout earlier: 2 of its ~33 requests a phase (1 % of the phase's) time
// out from about L = 14, and every one of 14, 16 and 18 was rejected in one
// run and held in another (a CI run ended "the levels conflict"). The
// levels are 4 apart, so that at most one of them sits at the threshold.
//
// It needs the request mix's engine (issue 24 part A: Target.Mix sent,
// PhaseStats.Targets filled); without it the run is refused or carries no
// targets, and the test fails saying so.
const (
	mixService = 4 * time.Millisecond
	mixSlow    = 60 * time.Millisecond
	mixTimeout = 120 * time.Millisecond
)

func TestMixSlowRouteBreaksFirst(t *testing.T) {
	// Half the shares: its per-target medians are checked against a 4 ms
	// service time in this process, and with eight tests beside it (TLS
	// handshakes among them) an idle target's p50 read 15 ms.
	testenv.Parallel(t, testenv.Busy)
	s := compileSchema(t)
	fx, err := bench.StartFixture(bench.FixtureConfig{Addr: "127.0.0.1:0", Capacity: 1, Service: mixService})
	if err != nil {
		t.Fatal(err)
	}
	defer fx.Close()
	slowURL := fx.URL("/delay?ms=60")
	mix := []brk.Request{
		{URL: fx.URL("/plain")}, {URL: slowURL}, {URL: fx.URL("/hello")}, {URL: fx.URL("/json")},
	}
	const slowIndex = 1
	for _, c := range []struct {
		name string
		h2   bool
		plan brk.Plan
	}{
		{"depth 1, http/1.1", false, brk.Plan{Load: brk.Connections{KeepAlive: true}, Start: 2, Pace: 4, Max: 50,
			Phase: 500 * time.Millisecond, Timeout: mixTimeout, Accept: 99, Threads: 1}},
		{"http/2", true, brk.Plan{Load: brk.Requests{Conns: 2}, Start: 1, Pace: 2, Max: 25,
			Phase: 500 * time.Millisecond, Timeout: mixTimeout, Accept: 99, Threads: 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			run := func() *brk.Result {
				ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
				defer cancel()
				target := brk.Target{Mix: mix, Protocol: protocolOf(c.h2)}
				r, err := brk.Run(ctx, target, c.plan, nil)
				if err != nil {
					t.Fatalf("brk.Run with a request mix (Target.Mix) was refused: %v — the request mix's engine (issue 24 part A) is not built", err)
				}
				for _, p := range r.Phases {
					if len(p.Targets) != len(mix) {
						t.Fatalf("phase %d carries %d targets, want %d (Target.Mix): PhaseStats.Targets is not filled (issue 24 part A); %s", p.Index, len(p.Targets), len(mix), describe(r))
					}
				}
				skipOnNoise(t, r)
				return r
			}
			// A pause of the in-process server (the collector, a test beside
			// it) times every target out at once; a phase of 500 ms is too
			// short to call it a stall. In loaded suite runs the fast
			// targets failed 17–26 % at 14, where the model has them hold to
			// about 34, and levels 10 and 14 each held once and broke once
			// (brk rightly ended inconclusive). So a run that did not break
			// on the slow target alone is confirmed by a second before it
			// fails the test: head-of-line blocking (a fast request waiting
			// behind a slow one) fails both, a pause of the box rarely twice.
			r := run()
			if why := notSlowAlone(r, slowIndex); why != "" {
				t.Logf("%s; once more:\n%s", why, describe(r))
				r = run()
			}
			if r.Verdict != brk.VerdictBroken {
				t.Fatalf("verdict %s (%s) in two runs, want broken: %s", r.Verdict, r.Reason, describe(r))
			}
			raw, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			validateRaw(t, s, raw)
			for _, p := range r.Phases {
				checkTargetsAddUp(t, p, mix)
			}
			held, broke := report.PairPhases(r)
			if broke == nil {
				t.Fatalf("no rejected phase in the final pair: %s", describe(r))
			}
			// The broken run names the slow target first, in the summary
			// and in the order of the rejected phase's targets.
			line := report.BrokeFirst(r)
			t.Logf("%s", line)
			if !strings.HasPrefix(line, "broke at ") || !strings.Contains(line, ": GET /delay?ms=60 ") && !strings.Contains(line, ": /delay?ms=60 ") {
				t.Errorf("the summary does not name the slow target first: %q", line)
			}
			var text, page strings.Builder
			report.WriteSummary(&text, r)
			if !strings.Contains(text.String(), "\n"+line+"\n") {
				t.Errorf("the -v summary lacks %q:\n%s", line, text.String())
			}
			if err := report.WriteHTML(&page, r, report.HTMLConditions{}); err != nil {
				t.Fatal(err)
			}
			if i := strings.Index(page.String(), `<table class="mix">`); i < 0 || !strings.Contains(page.String()[i:], `<td class="l tname"><code>GET /delay?ms=60</code>`) ||
				strings.Index(page.String()[i:], "/delay?ms=60") > strings.Index(page.String()[i:], "/plain") {
				t.Errorf("the HTML report's mix table does not put the slow target first")
			}
			byShare := report.ByFailureShare(broke.Targets)
			slowShare := report.TargetFailureShare(&byShare[0])
			if byShare[0].Index != slowIndex || slowShare == 0 {
				t.Errorf("phase %d at %d: the first target by failure share is %d (%s, %.2f %% failed), want the slow one", broke.Index, broke.Level,
					byShare[0].Index, byShare[0].URL, 100*slowShare)
			}
			// A stall (most of the phase's failures in one span) or a busy
			// box times every target out at once: the phase then says
			// nothing about which target broke first. (In one loaded
			// suite run the fast targets failed 17–26 % at 14, where the
			// model has them hold to about 34; the failure now prints
			// the run's phases and their evidence.)
			if e := broke.Evidence; e != nil && (e.Stall != nil || e.Busy) {
				t.Logf("phase %d at %d: judged with a stall or on a busy box (%+v): the targets' shares are not compared", broke.Index, broke.Level, *e)
			} else if f := fastFailures(broke, slowIndex); len(f) > 0 {
				t.Errorf("phase %d at %d, in two runs: %s: not the slow one alone\n%s", broke.Index, broke.Level, strings.Join(f, "; "), describe(r))
			}
			if broke.Targets[slowIndex].Counts.Timeout == 0 {
				t.Errorf("the slow target's failures at %d are not timeouts: %+v", broke.Level, broke.Targets[slowIndex].Counts)
			}
			// Each target's latency is its own: the slow one's is the fast
			// ones' plus mixSlow (its sleep), in the first phase (no queue)
			// and in the last accepted one (a queue, shared by all).
			// The first phase is the first accepted run of the first level
			// (a first run rejected by a pause of the in-process server, its
			// slow requests timed out, is run again and says nothing of
			// the targets' own latency).
			first := r.Phases[0]
			for _, p := range r.Phases {
				if p.Level == first.Level && p.Accepted {
					first = p
					break
				}
			}
			checkSlowLatency(t, first, slowIndex, true)
			if held != nil && held != first {
				checkSlowLatency(t, held, slowIndex, false)
			}
		})
	}
}

// notSlowAlone says why run r did not break on the slow target alone ("" when
// it did): its verdict, or the fast targets that failed in its rejected phase.
func notSlowAlone(r *brk.Result, slowIndex int) string {
	if r.Verdict != brk.VerdictBroken {
		return fmt.Sprintf("verdict %s (%s)", r.Verdict, r.Reason)
	}
	if _, broke := report.PairPhases(r); broke != nil {
		if f := fastFailures(broke, slowIndex); len(f) > 0 {
			return fmt.Sprintf("phase %d at %d: %s", broke.Index, broke.Level, strings.Join(f, "; "))
		}
	}
	return ""
}

// fastFailures names each fast target of phase p that failed more than a
// quarter of the slow one's share.
func fastFailures(p *brk.PhaseStats, slowIndex int) []string {
	byShare := report.ByFailureShare(p.Targets)
	slow := report.TargetFailureShare(&p.Targets[slowIndex])
	var out []string
	for _, x := range byShare {
		if x.Index == slowIndex {
			continue
		}
		if f := report.TargetFailureShare(&x); f > slow/4 {
			out = append(out, fmt.Sprintf("fast target %s failed %.2f %%, the slow one %.2f %%", x.URL, 100*f, 100*slow))
		}
	}
	return out
}

// checkTargetsAddUp: a phase's targets are the mix in order, their counts
// add up to the phase's, each target's books balance, and the targets
// took their shares of the admitted requests (weights 1:1:1:1, within a
// round of the sequence per worker and the requests a phase's end cut).
func checkTargetsAddUp(t *testing.T, p *brk.PhaseStats, mix []brk.Request) {
	t.Helper()
	var sum brk.Counts
	for i, x := range p.Targets {
		if x.Index != i || x.URL != mix[i].URL || x.Weight != 1 || x.Method != "GET" {
			t.Errorf("phase %d target %d: index %d, %s %s, weight %d; want %s weight 1", p.Index, i, x.Index, x.Method, x.URL, x.Weight, mix[i].URL)
		}
		c := x.Counts
		if c.Attempted != c.Succeeded+failures(c) {
			t.Errorf("phase %d target %d: attempted %d != succeeded %d + failed %d", p.Index, i, c.Attempted, c.Succeeded, failures(c))
		}
		if c.Attempted > 0 && math.Abs(x.SuccessPct-100*float64(c.Succeeded)/float64(c.Attempted)) > 1e-9 {
			t.Errorf("phase %d target %d: success_pct %v for %d of %d", p.Index, i, x.SuccessPct, c.Succeeded, c.Attempted)
		}
		sum.Attempted += c.Attempted
		sum.Succeeded += c.Succeeded
		sum.Timeout += c.Timeout
	}
	if sum.Attempted != p.Counts.Attempted || sum.Succeeded != p.Counts.Succeeded || sum.Timeout != p.Counts.Timeout {
		t.Errorf("phase %d: the targets sum to %d attempted, %d succeeded, %d timeouts; the phase %d, %d, %d", p.Index,
			sum.Attempted, sum.Succeeded, sum.Timeout, p.Counts.Attempted, p.Counts.Succeeded, p.Counts.Timeout)
	}
	share := float64(p.Counts.Attempted) / float64(len(mix))
	for i, x := range p.Targets {
		if d := math.Abs(float64(x.Counts.Attempted) - share); d > 2+float64(p.Level) {
			t.Errorf("phase %d: target %d attempted %d of %d, want about %.0f (weight 1 of %d)", p.Index, i, x.Counts.Attempted, p.Counts.Attempted, share, len(mix))
		}
	}
}

// checkSlowLatency: the slow target's median is the fast targets' plus
// mixSlow, within a quarter of it (a timer's overshoot, the queue's
// variation; on a busy box or through a stall at least mixSlow less a
// quarter); without a queue (first) the fast ones take well under
// mixSlow (about mixService on a quiet box, 15 ms when this process shares
// its cores with the tests beside it; one that waited behind a slow
// request would take mixSlow more); with the slot saturated (the last
// accepted phase) both are the model's (fastModel).
func checkSlowLatency(t *testing.T, p *brk.PhaseStats, slow int, first bool) {
	t.Helper()
	sl := p.Targets[slow].LatencyMs
	if sl.Count == 0 {
		t.Errorf("phase %d at %d: the slow target has no responses: its counts %+v, the phase's %+v, evidence %+v",
			p.Index, p.Level, p.Targets[slow].Counts, p.Counts, p.Evidence)
		return
	}
	slowMs, gap := float64(mixSlow)/1e6, float64(mixSlow)/4e6
	if sl.P50 < slowMs {
		t.Errorf("phase %d at %d: the slow target's p50 %.2f ms is below its sleep alone (%.0f ms): not its latency", p.Index, p.Level, sl.P50, slowMs)
	}
	// On a busy box or through a stall the server's sleep overruns (its
	// timer fires late: a busy suite run read the slow target 78.7 ms above
	// a fast one at level 2), so there the model of the server holds only
	// from below: a fast request that waited behind a slow one reads less
	// apart than the sleep, never more.
	noisy := p.Evidence != nil && (p.Evidence.Busy || p.Evidence.Stall != nil)
	if noisy {
		t.Logf("phase %d at %d: judged on a busy box or with a stall: the latencies are checked from below only", p.Index, p.Level)
	}
	if model := fastModel(p.Level) + slowMs; !noisy && !first && fastModel(p.Level) > 0 {
		t.Logf("phase %d at %d: slow p50 %.2f ms, the model's %.1f", p.Index, p.Level, sl.P50, model)
		if math.Abs(sl.P50-model) > gap {
			t.Errorf("phase %d at %d: the slow target's p50 %.2f ms, the model's %.1f ± %.0f (queue, service, sleep)", p.Index, p.Level, sl.P50, model, gap)
		}
	}
	for i, x := range p.Targets {
		if i == slow || x.LatencyMs.Count == 0 {
			continue
		}
		d := sl.P50 - x.LatencyMs.P50
		t.Logf("phase %d at %d: slow p50 %.2f ms, %s p50 %.2f ms: %.2f ms apart (model: %.0f)", p.Index, p.Level, sl.P50, x.URL, x.LatencyMs.P50, d, slowMs)
		if d < slowMs-gap || !noisy && d > slowMs+gap {
			t.Errorf("phase %d at %d: the slow target's p50 %.2f ms is %.2f ms above %s's %.2f ms, want %.0f ± %.0f (its sleep)",
				p.Index, p.Level, sl.P50, d, x.URL, x.LatencyMs.P50, slowMs, gap)
		}
		if !noisy && !first && fastModel(p.Level) > 0 && math.Abs(x.LatencyMs.P50-fastModel(p.Level)) > gap {
			t.Errorf("phase %d at %d: %s's p50 %.2f ms, the model's %.1f ± %.0f (the queue of a saturated slot)", p.Index, p.Level, x.URL, x.LatencyMs.P50, fastModel(p.Level), gap)
		}
		if first && x.LatencyMs.P50 > slowMs/2 {
			t.Errorf("phase %d at %d: %s's p50 %.2f ms without a queue, want well below the slow one's sleep %v (the service time %v): it waited behind a slow request",
				p.Index, p.Level, x.URL, x.LatencyMs.P50, mixSlow, mixService)
		}
	}
}

// fastModel is the fast targets' mean latency at level L with the slot
// saturated, in ms: L·mixService − mixSlow/4 (Little's law, one request in
// four slow); 0 below saturation, where the queue is too short to model.
func fastModel(level int) float64 {
	d, s := float64(mixService)/1e6, float64(mixSlow)/1e6
	if float64(level)*d <= 2*(d+s/4) {
		return 0
	}
	return float64(level)*d - s/4
}

// validateRaw checks a marshalled report against the schema.
func validateRaw(t *testing.T, s interface{ Validate(any) error }, raw []byte) {
	t.Helper()
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(doc); err != nil {
		t.Fatalf("the report does not match the schema: %v", err)
	}
}
