package judge

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/brk-bench/brk/internal/metrics"
)

// measured builds a measurement from counts.
func measured(succeeded, timeout, protocol uint64, setups metrics.Setups, reached uint64) *Measurement {
	s := metrics.NewPhase()
	s.Counts.Succeeded = succeeded
	s.Counts.Failed[metrics.Timeout] = timeout
	s.Counts.Failed[metrics.Protocol] = protocol
	s.Counts.Attempted = succeeded + timeout + protocol
	s.Setups = setups
	s.ReachedOnce = reached
	s.Workers = 1
	if protocol > 0 {
		s.ProtocolReason = "h1: bad status line"
	}
	for i := uint64(0); i < succeeded; i++ {
		s.Latency.RecordValue(int64(1000 + i%500))
	}
	return &Measurement{Stats: s, Active: time.Second, Elapsed: time.Second, Boxes: 1,
		CPU: metrics.ProcessCPU{User: time.Millisecond, System: 2 * time.Millisecond}}
}

var (
	okSetups   = metrics.Setups{Attempted: 4, Established: 4}
	p9999      = Accept{Num: 9999, Den: 10000}
	reqPlan    = Plan{Mode: Requests, Conns: 4, Accept: p9999, Addr: "127.0.0.1:80"}
	connsPlan  = Plan{Mode: Connections, Accept: p9999, Addr: "127.0.0.1:80"}
	interrupt  = func(m *Measurement) *Measurement { m.Interrupted = true; return m }
	clientFail = func(m *Measurement) *Measurement { m.ClientError = "client ran out of local ports"; return m }
	failFast   = func(m *Measurement) *Measurement { m.SetupFailed = true; return m }
	saturated  = func(m *Measurement) *Measurement { m.WorkerBusy, m.WorkerBusyOK = 0.96, true; return m }
	// plan100 is reqPlan with a 100 ms request budget: its client is
	// starved from a process wait of 50 ms (half of it).
	plan100 = Plan{Mode: Requests, Conns: 4, Accept: p9999, Addr: "127.0.0.1:80", Timeout: 100 * time.Millisecond}
)

// waiting gives m a process wait of d at p99: its goroutines waited
// that long for a P.
func waiting(d time.Duration) func(*Measurement) *Measurement {
	return func(m *Measurement) *Measurement { m.ProcessWait, m.ProcessWaitOK = d, true; return m }
}

// failing adds n failures of cat to m's counts.
func failing(m *Measurement, cat metrics.Category, n uint64) *Measurement {
	m.Stats.Counts.Failed[cat] += n
	m.Stats.Counts.Attempted += n
	return m
}

func speaksTLS(m *Measurement) *Measurement { m.SpeaksTLS = true; return m }

// timeoutFollowers adds n abandoned followers of a timeout to m.
func timeoutFollowers(m *Measurement, n uint64) *Measurement {
	m.Stats.TimeoutFollowers += n
	return failing(m, metrics.Abandoned, n)
}

// connectFollowers adds n abandoned requests that were queued behind a
// connect that timed out to m.
func connectFollowers(m *Measurement, n uint64) *Measurement {
	m.Stats.ConnectTimeoutFollowers += n
	return failing(m, metrics.Abandoned, n)
}

// setupsTimedOut is a connections-test phase whose one setup of five timed
// out, and whose requests failed as fails says.
func setupsTimedOut(fails func(*Measurement) *Measurement) *Measurement {
	return fails(measured(4, 0, 0, metrics.Setups{Attempted: 5, Established: 4, TimedOut: 1}, 4))
}

func TestJudgeEveryBranch(t *testing.T) {
	for _, c := range []struct {
		name    string
		m       *Measurement
		plan    Plan
		index   int
		depth   int
		verdict Verdict
		stop    bool
		reason  string // a part of it
	}{
		{"accepted", measured(10000, 0, 0, okSetups, 4), reqPlan, 1, 2, Done, false, ""},
		{"accepted at the exact share", measured(9999, 1, 0, okSetups, 4), reqPlan, 1, 2, Done, false, ""},
		{"rejected", measured(9998, 2, 0, okSetups, 4), reqPlan, 1, 2, Broken, true, "success 99.98% (9998 of 10000) is below Plan.Accept 99.99% at 8 concurrent requests"},
		{"no attempts", measured(0, 0, 0, okSetups, 0), reqPlan, 1, 2, Broken, true, "(0 of 0)"},
		{"protocol fault", measured(10000, 0, 1, okSetups, 4), reqPlan, 1, 2, Broken, true, "1 protocol faults (first: h1: bad status line)"},
		{"unfulfilled", measured(10000, 0, 0, okSetups, 3), reqPlan, 1, 2, Inconclusive, true, "target unfulfilled: 1 of 4 connections never held 2 requests outstanding"},
		{"setup failure in phase 0", measured(0, 0, 0, metrics.Setups{Attempted: 4, Failed: 4}, 0), reqPlan, 0, 1, Inconclusive, true, "setup impossible: no connection could be established (dialing 127.0.0.1:80)"},
		{"fail fast", failFast(measured(0, 0, 0, metrics.Setups{}, 0)), reqPlan, 0, 1, Inconclusive, true, "setup impossible"},
		{"fail fast after setups had succeeded (an outage): judged by the counts", failFast(failing(failing(measured(2974, 0, 0, metrics.Setups{Attempted: 16, Established: 4, Failed: 12}, 4), metrics.Connect, 12), metrics.Transport, 1)),
			Plan{Mode: Rate, Conns: 4, Accept: p9999, Addr: "127.0.0.1:80"}, 0, 2000, Broken, true, "success 99.56% (2974 of 2987) is below Plan.Accept 99.99% at 2000 requests/s"},
		{"phase 0 outage in the requests test", failing(failing(measured(5279, 0, 0, metrics.Setups{Attempted: 2484, Established: 4, Failed: 2480}, 4), metrics.Connect, 2480), metrics.Abandoned, 2484), reqPlan, 0, 2, Broken, true, "success 51.54% (5279 of 10243)"},
		{"phase 0 heard nothing, the port speaks TLS", speaksTLS(failing(measured(0, 0, 0, metrics.Setups{Attempted: 24050, Established: 24050}, 0), metrics.Transport, 24050)), reqPlan, 0, 1,
			Inconclusive, true, "the server speaks TLS on this port: use https:// (dialing 127.0.0.1:80)"},
		{"phase 0 heard nothing, setups failed, the port speaks TLS (h2c)", speaksTLS(failFast(measured(0, 0, 0, metrics.Setups{Attempted: 32, Failed: 32}, 0))), reqPlan, 0, 1,
			Inconclusive, true, "the server speaks TLS on this port"},
		{"phase 0 hang-ups, the port does not speak TLS: not a byte, inconclusive", failing(measured(0, 0, 0, metrics.Setups{Attempted: 3678, Established: 3678}, 0), metrics.Transport, 3678), reqPlan, 0, 1,
			Inconclusive, true, "not a byte came back from the server on any connection"},
		{"later hang-ups: broken", failing(measured(0, 0, 0, metrics.Setups{Attempted: 3678, Established: 3678}, 0), metrics.Transport, 3678), reqPlan, 1, 1,
			Broken, true, "success 0% (0 of 3678)"},
		{"setups fail later: a server verdict", measured(0, 4, 0, metrics.Setups{Attempted: 4, Failed: 4}, 0), reqPlan, 1, 1, Broken, true, "success 0%"},
		{"interrupted", interrupt(measured(10000, 0, 0, okSetups, 4)), reqPlan, 1, 2, Interrupted, true, ""},
		{"client failure", clientFail(measured(10000, 0, 0, okSetups, 4)), reqPlan, 1, 2, Inconclusive, true, "client ran out of local ports"},
		{"client saturated, timing failures: not a server verdict", saturated(measured(9998, 2, 0, okSetups, 4)), reqPlan, 1, 2, Inconclusive, true, "the client was saturated: workers 96 % busy"},
		{"client saturated, protocol failure: still broken", saturated(measured(9999, 0, 1, okSetups, 4)), reqPlan, 1, 2, Broken, true, "protocol faults"},
		{"client saturated, timeouts and their followers: not a server verdict", saturated(timeoutFollowers(measured(9990, 2, 0, okSetups, 4), 6)), reqPlan, 1, 2, Inconclusive, true, "the client was saturated"},
		{"client saturated, hang-ups (transport): the server's", saturated(failing(measured(9990, 0, 0, okSetups, 4), metrics.Transport, 10)), reqPlan, 1, 2, Broken, true, "success 99.9%"},
		{"client saturated, hang-ups and their followers: the server's", saturated(failing(failing(measured(9990, 0, 0, okSetups, 4), metrics.Transport, 2), metrics.Abandoned, 8)), reqPlan, 1, 2, Broken, true, "success 99.9%"},
		{"client saturated, every connection closed at accept: the server's", saturated(failing(measured(0, 0, 0, okSetups, 4), metrics.Transport, 24050)), reqPlan, 1, 2, Broken, true, "success 0%"},
		{"client saturated, timeouts and a hang-up: the server's", saturated(failing(measured(9990, 9, 0, okSetups, 4), metrics.Transport, 1)), reqPlan, 1, 2, Broken, true, "success 99.9%"},
		{"client saturated, abandoned not by a timeout: the server's", saturated(failing(timeoutFollowers(measured(9990, 2, 0, okSetups, 4), 6), metrics.Abandoned, 2)), reqPlan, 1, 2, Broken, true, "success 99.9%"},
		{"client saturated, timeouts and connects that timed out: not a server verdict", saturated(failing(measured(9990, 9, 0, okSetups, 4), metrics.ConnectTimeout, 1)), reqPlan, 1, 2, Inconclusive, true, "the client was saturated"},
		{"client saturated, only connects that timed out: not a server verdict", saturated(failing(measured(9990, 0, 0, okSetups, 4), metrics.ConnectTimeout, 10)), reqPlan, 1, 2, Inconclusive, true, "the client was saturated"},
		{"client saturated, connects timed out with requests queued behind them: not a server verdict", saturated(connectFollowers(failing(measured(9990, 0, 0, okSetups, 4), metrics.ConnectTimeout, 2), 8)), reqPlan, 1, 2, Inconclusive, true, "the client was saturated"},
		{"client saturated, connects timed out, requests queued behind them not attributed (an older shard's): the server's", saturated(failing(failing(measured(9990, 0, 0, okSetups, 4), metrics.ConnectTimeout, 2), metrics.Abandoned, 8)), reqPlan, 1, 2, Broken, true, "success 99.9%"},
		{"client saturated, more abandoned than the connects' timeouts left: the server's", saturated(failing(connectFollowers(failing(measured(9990, 0, 0, okSetups, 4), metrics.ConnectTimeout, 2), 6), metrics.Abandoned, 2)), reqPlan, 1, 2, Broken, true, "success 99.9%"},
		{"connects timed out with requests queued behind them, client not saturated: the server's", connectFollowers(failing(measured(9990, 0, 0, okSetups, 4), metrics.ConnectTimeout, 2), 8), reqPlan, 1, 2, Broken, true, "success 99.9%"},
		{"connects that timed out, client not saturated: the server's", failing(measured(9990, 0, 0, okSetups, 4), metrics.ConnectTimeout, 10), reqPlan, 1, 2, Broken, true, "success 99.9%"},
		{"client saturated, failed setups: the server's", saturated(failing(failing(measured(9990, 0, 0, okSetups, 4), metrics.Connect, 2), metrics.Abandoned, 8)), reqPlan, 1, 2, Broken, true, "success 99.9%"},
		{"timeouts, client not saturated: the server's", timeoutFollowers(measured(9990, 2, 0, okSetups, 4), 8), reqPlan, 1, 2, Broken, true, "success 99.9%"},
		{"client saturated, accepted phase stays accepted", saturated(measured(10000, 0, 0, okSetups, 4)), reqPlan, 1, 2, Done, false, ""},
		{"client starved (its process waited half the timeout or more), timeouts and their followers: not a server verdict", waiting(60 * time.Millisecond)(timeoutFollowers(measured(9990, 2, 0, okSetups, 4), 6)), plan100, 1, 2,
			Inconclusive, true, "the client was starved: this process's goroutines waited up to 60 ms (p99) for a CPU"},
		{"client starved, connects that timed out: not a server verdict", waiting(50 * time.Millisecond)(failing(measured(9990, 0, 0, okSetups, 4), metrics.ConnectTimeout, 10)), plan100, 1, 2, Inconclusive, true, "the client was starved"},
		{"process wait below half the timeout, timeouts: the server's", waiting(40 * time.Millisecond)(measured(9998, 2, 0, okSetups, 4)), plan100, 1, 2, Broken, true, "success 99.98%"},
		{"process wait below 5 ms, half the timeout or more, timeouts: the server's", waiting(4 * time.Millisecond)(measured(9998, 2, 0, okSetups, 4)), Plan{Mode: Requests, Conns: 4, Accept: p9999, Timeout: 6 * time.Millisecond}, 1, 2, Broken, true, "success 99.98%"},
		{"process wait of 5 ms with no timeout given: starved", waiting(5 * time.Millisecond)(measured(9998, 2, 0, okSetups, 4)), reqPlan, 1, 2, Inconclusive, true, "the client was starved"},
		{"process wait not measured: the server's", func(m *Measurement) *Measurement { m.ProcessWait = time.Second; return m }(measured(9998, 2, 0, okSetups, 4)), plan100, 1, 2, Broken, true, "success 99.98%"},
		{"client starved, hang-ups: the server's", waiting(50 * time.Millisecond)(failing(measured(9990, 0, 0, okSetups, 4), metrics.Transport, 10)), plan100, 1, 2, Broken, true, "success 99.9%"},
		{"client starved, refused connects: the server's", waiting(50 * time.Millisecond)(failing(measured(9990, 0, 0, okSetups, 4), metrics.Connect, 10)), plan100, 1, 2, Broken, true, "success 99.9%"},
		{"client starved, accepted phase stays accepted", waiting(50 * time.Millisecond)(measured(10000, 0, 0, okSetups, 4)), plan100, 1, 2, Done, false, ""},
		{"client saturated and starved: the saturation is named", saturated(waiting(50 * time.Millisecond)(measured(9998, 2, 0, okSetups, 4))), plan100, 1, 2, Inconclusive, true, "the client was saturated: workers 96 % busy"},
		{"connections accepted", measured(4, 0, 0, okSetups, 4), connsPlan, 1, 4, Done, false, ""},
		{"connections: setups below accept", measured(4, 0, 0, metrics.Setups{Attempted: 5, Established: 4, Failed: 1}, 4), connsPlan, 1, 4,
			Broken, true, "setups: 80% established (4 of 5; 1 failed, 0 timed out) is below Plan.Accept 99.99% at 4 concurrent connections"},
		{"connections: setups timed out on saturated workers: still the server's", saturated(setupsTimedOut(func(m *Measurement) *Measurement { return m })), connsPlan, 1, 4,
			Broken, true, "setups: 80% established (4 of 5; 0 failed, 1 timed out) is below Plan.Accept 99.99% at 4 concurrent connections"},
		{"connections: setups and requests timed out on saturated workers: the setups' break", saturated(setupsTimedOut(func(m *Measurement) *Measurement { return failing(m, metrics.Timeout, 1) })), connsPlan, 1, 4,
			Broken, true, "setups: 80% established"},
		{"connections: setups refused on saturated workers: the server's", saturated(measured(4, 0, 0, metrics.Setups{Attempted: 5, Established: 4, Failed: 1}, 4)), connsPlan, 1, 4,
			Broken, true, "setups: 80% established (4 of 5; 1 failed, 0 timed out)"},
		{"connections: requests below accept", measured(3, 1, 0, okSetups, 4), connsPlan, 1, 4, Broken, true, "requests: success 75% (3 of 4) is below Plan.Accept 99.99% at 4 concurrent connections"},
		{"connections unfulfilled", measured(4, 0, 0, okSetups, 3), connsPlan, 1, 4, Inconclusive, true, "target unfulfilled: 1 of 4 concurrent connections never carried a request"},
	} {
		t.Run(c.name, func(t *testing.T) {
			j := Judge(c.m, c.plan, c.index, levelOf(c.plan, c.depth))
			if j.Verdict != c.verdict || j.Stop != c.stop || !strings.Contains(j.Reason, c.reason) {
				t.Fatalf("got %+v, want verdict %v stop %v reason containing %q", j, c.verdict, c.stop, c.reason)
			}
			if j.Accepted != !c.stop {
				t.Fatalf("accepted %v for stop %v", j.Accepted, c.stop)
			}
			if j.Inconclusive != (c.verdict == Inconclusive) || j.Judged != (c.verdict != Interrupted) {
				t.Fatalf("flags %+v", j)
			}
		})
	}
}

// Merging two halves of a phase (two load boxes) and judging the merge
// gives the verdict and the counts of judging the whole; the measurement
// survives JSON on the way.
func TestMergedHalvesJudgeAsTheWhole(t *testing.T) {
	for _, c := range []struct {
		name        string
		a, b, whole *Measurement
		plan        Plan
	}{
		{"accepted", measured(5000, 0, 0, metrics.Setups{Attempted: 2, Established: 2}, 2), measured(5000, 0, 0, metrics.Setups{Attempted: 2, Established: 2}, 2), measured(10000, 0, 0, okSetups, 4), reqPlan},
		{"rejected by one half", measured(5000, 0, 0, metrics.Setups{Attempted: 2, Established: 2}, 2), measured(4998, 2, 0, metrics.Setups{Attempted: 2, Established: 2}, 2), measured(9998, 2, 0, okSetups, 4), reqPlan},
		{"unfulfilled on one box", measured(5000, 0, 0, metrics.Setups{Attempted: 2, Established: 2}, 2), measured(5000, 0, 0, metrics.Setups{Attempted: 2, Established: 2}, 1), measured(10000, 0, 0, okSetups, 3), reqPlan},
		{"connections", measured(2, 0, 0, metrics.Setups{Attempted: 3, Established: 2, Failed: 1}, 2), measured(2, 0, 0, metrics.Setups{Attempted: 2, Established: 2}, 2), measured(4, 0, 0, metrics.Setups{Attempted: 5, Established: 4, Failed: 1}, 4), connsPlan},
		{"interrupted on one box", measured(5000, 0, 0, metrics.Setups{Attempted: 2, Established: 2}, 2), interrupt(measured(5000, 0, 0, metrics.Setups{Attempted: 2, Established: 2}, 2)), interrupt(measured(10000, 0, 0, okSetups, 4)), reqPlan},
	} {
		t.Run(c.name, func(t *testing.T) {
			merged := mergedViaJSON(t, c.a, c.b)
			got, want := Judge(merged, c.plan, 1, levelOf(c.plan, 2)), Judge(c.whole, c.plan, 1, levelOf(c.plan, 2))
			if c.plan.Mode == Connections {
				got, want = Judge(merged, c.plan, 1, 4), Judge(c.whole, c.plan, 1, 4)
			}
			if got != want {
				t.Fatalf("merged judged %+v, whole %+v", got, want)
			}
			if merged.Stats.Counts != c.whole.Stats.Counts || merged.Stats.Setups != c.whole.Stats.Setups {
				t.Fatalf("merged counts %+v %+v, whole %+v %+v", merged.Stats.Counts, merged.Stats.Setups, c.whole.Stats.Counts, c.whole.Stats.Setups)
			}
			if merged.Stats.Latency.TotalCount() != c.whole.Stats.Latency.TotalCount() {
				t.Fatalf("latency count %d, whole %d", merged.Stats.Latency.TotalCount(), c.whole.Stats.Latency.TotalCount())
			}
			if merged.Boxes != 2 || merged.CPU.System != 4*time.Millisecond {
				t.Fatalf("boxes %d, cpu %+v", merged.Boxes, merged.CPU)
			}
		})
	}
}

// levelOf is the level of a phase at depth per connection (the requests
// test's level is a total).
func levelOf(p Plan, depth int) int {
	if p.Mode == Requests {
		return depth * p.Conns
	}
	return depth
}

// TestProcessWaitMerges: a merge keeps the longest box's process wait,
// through the shard measurement's JSON, so that one starved box's
// timeouts are the client's in the merged verdict too.
func TestProcessWaitMerges(t *testing.T) {
	for _, c := range []struct {
		name   string
		boxes  []*Measurement
		want   time.Duration
		wantOK bool
	}{
		{"the longest", []*Measurement{waiting(3 * time.Millisecond)(measured(4999, 1, 0, okSetups, 4)), waiting(60 * time.Millisecond)(measured(4999, 1, 0, okSetups, 4))}, 60 * time.Millisecond, true},
		{"the longest first", []*Measurement{waiting(60 * time.Millisecond)(measured(4999, 1, 0, okSetups, 4)), waiting(3 * time.Millisecond)(measured(4999, 1, 0, okSetups, 4))}, 60 * time.Millisecond, true},
		{"one box unmeasured", []*Measurement{measured(4999, 1, 0, okSetups, 4), waiting(60 * time.Millisecond)(measured(4999, 1, 0, okSetups, 4))}, 60 * time.Millisecond, true},
		{"none measured", []*Measurement{measured(4999, 1, 0, okSetups, 4), measured(4999, 1, 0, okSetups, 4)}, 0, false},
	} {
		merged := mergedViaJSON(t, c.boxes...)
		if merged.ProcessWait != c.want || merged.ProcessWaitOK != c.wantOK {
			t.Errorf("%s: merged wait %v (ok %v), want %v (ok %v)", c.name, merged.ProcessWait, merged.ProcessWaitOK, c.want, c.wantOK)
		}
		if j := Judge(merged, plan100, 1, 8); c.wantOK != (j.Verdict == Inconclusive) {
			t.Errorf("%s: merged judged %s (%s)", c.name, j.Verdict, j.Reason)
		}
	}
}

// mergedViaJSON merges the boxes' measurements as a sharded run does:
// each through its JSON form, the shard measurement.
func mergedViaJSON(t *testing.T, boxes ...*Measurement) *Measurement {
	t.Helper()
	var merged Measurement
	for _, box := range boxes {
		js, err := json.Marshal(box)
		if err != nil {
			t.Fatal(err)
		}
		var back Measurement
		if err := json.Unmarshal(js, &back); err != nil {
			t.Fatal(err)
		}
		merged.Merge(&back)
	}
	return &merged
}
