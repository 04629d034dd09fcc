package judge

import (
	"strings"
	"testing"

	"github.com/brk-bench/brk/internal/metrics"
)

// answering is a first phase on 4 established connections whose complete
// responses had codes (code → responses; 0: a code outside 100..599), ok
// of them successes, plus timedOut requests that got no response and
// heard connections that read a byte.
func answering(codes map[int]uint64, ok, timedOut, heard uint64) *Measurement {
	m := measured(0, timedOut, 0, okSetups, 4)
	s := m.Stats
	for code, n := range codes {
		s.Statuses[code] += n
		s.LatencyCount += n
		s.Counts.Attempted += n
		if n > 0 && heard == 0 {
			heard = 1
		}
	}
	s.Counts.Succeeded = ok
	s.Counts.Failed[metrics.Status] = s.Counts.Attempted - timedOut - ok
	s.Heard = heard
	return m
}

// TestMistakeRule: the first phase is the user's mistake when every
// complete response is the same 3xx or the same 4xx but 408 and 429, with
// no success, or when no connection read a byte; never when a request
// succeeded, the codes differ, or the refusal is an overload's.
func TestMistakeRule(t *testing.T) {
	const check = " — check the URL, or accept the status with Target.ExpectStatus"
	const silent = "not a byte came back from the server on any connection — check the URL and the port, or raise Plan.Timeout"
	for _, c := range []struct {
		name string
		m    *Measurement
		want string // the reason, or a prefix of it; "": no mistake
	}{
		{name: "every response 404", m: answering(map[int]uint64{404: 5000}, 0, 0, 4), want: "every response was 404 Not Found" + check},
		{name: "every response 301", m: answering(map[int]uint64{301: 12}, 0, 0, 4), want: "every response was 301 Moved Permanently" + check},
		{name: "every response 302", m: answering(map[int]uint64{302: 12}, 0, 0, 4), want: "every response was 302 Found" + check},
		{name: "every response 400", m: answering(map[int]uint64{400: 7}, 0, 0, 4), want: "every response was 400 Bad Request" + check},
		{name: "every response 401", m: answering(map[int]uint64{401: 7}, 0, 0, 4), want: "every response was 401 Unauthorized" + check},
		{name: "every response 403", m: answering(map[int]uint64{403: 7}, 0, 0, 4), want: "every response was 403 Forbidden" + check},
		{name: "every response 405", m: answering(map[int]uint64{405: 7}, 0, 0, 4), want: "every response was 405 Method Not Allowed" + check},
		{name: "every response an unnamed 4xx", m: answering(map[int]uint64{499: 7}, 0, 0, 4), want: "every response was 499" + check},
		{name: "404s and timeouts, no success", m: answering(map[int]uint64{404: 70}, 0, 30, 4), want: "every response was 404 Not Found" + check},
		{name: "not a byte, every request timed out", m: answering(nil, 0, 400, 0), want: silent},
		{name: "not a byte, every connection hung up", m: failing(answering(nil, 0, 0, 0), metrics.Transport, 3678), want: silent},
		{name: "every response 408: an overload's", m: answering(map[int]uint64{408: 7}, 0, 0, 4)},
		{name: "every response 429: an overload's", m: answering(map[int]uint64{429: 7}, 0, 0, 4)},
		{name: "every response 503: an overload's", m: answering(map[int]uint64{503: 7}, 0, 0, 4)},
		{name: "every response 500", m: answering(map[int]uint64{500: 7}, 0, 0, 4)},
		{name: "every response 404, accepted with --expect-status", m: answering(map[int]uint64{404: 7}, 7, 0, 4)},
		{name: "404s beside successes", m: answering(map[int]uint64{404: 7, 200: 3}, 3, 0, 4)},
		{name: "404s and 403s", m: answering(map[int]uint64{404: 7, 403: 3}, 0, 0, 4)},
		{name: "404s and a code outside 100..599", m: answering(map[int]uint64{404: 7, 0: 1}, 0, 0, 4)},
		{name: "bytes but no complete response (protocol faults)", m: failing(answering(nil, 0, 0, 4), metrics.Protocol, 4)},
		{name: "not a byte, no request attempted", m: answering(nil, 0, 0, 0)},
		{name: "not a byte, no connection established", m: func() *Measurement {
			m := answering(nil, 0, 4, 0)
			m.Stats.Setups = metrics.Setups{Attempted: 4, TimedOut: 4}
			return m
		}()},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := mistakeOf(c.m, LibraryNames())
			if c.want == "" && got != "" || !strings.HasPrefix(got, c.want) {
				t.Fatalf("mistake %q, want %q", got, c.want)
			}
		})
	}
}

// TestJudgeMistakeInFirstPhaseOnly: Judge ends a first phase that is the
// user's mistake inconclusive; the same counts in a later phase, and a
// 503 or 429 storm in the first, are judged by the counts: broken.
func TestJudgeMistakeInFirstPhaseOnly(t *testing.T) {
	for _, c := range []struct {
		name    string
		m       *Measurement
		index   int
		verdict Verdict
		reason  string
	}{
		{"404s in phase 0", answering(map[int]uint64{404: 50}, 0, 0, 4), 0, Inconclusive, "every response was 404 Not Found — check the URL, or accept the status with Target.ExpectStatus"},
		{"404s in phase 1", answering(map[int]uint64{404: 50}, 0, 0, 4), 1, Broken, "success 0% (0 of 50)"},
		{"503s in phase 0", answering(map[int]uint64{503: 50}, 0, 0, 4), 0, Broken, "success 0% (0 of 50)"},
		{"429s in phase 0", answering(map[int]uint64{429: 50}, 0, 0, 4), 0, Broken, "success 0% (0 of 50)"},
		{"nothing heard in phase 0", answering(nil, 0, 50, 0), 0, Inconclusive, "not a byte came back"},
	} {
		t.Run(c.name, func(t *testing.T) {
			j := Judge(c.m, reqPlan, c.index, 4)
			if j.Verdict != c.verdict || !j.Stop || !strings.Contains(j.Reason, c.reason) {
				t.Fatalf("judged %+v, want %s (%s)", j, c.verdict, c.reason)
			}
		})
	}
}

// TestMistakeOfMergedShards: in a sharded run the coordinator judges the
// merged measurement, so the rule holds when it holds on the union: two
// boxes of 404s are a mistake, 404s on one box and successes on the other
// are not, nor is one box that heard nothing beside one that did.
func TestMistakeOfMergedShards(t *testing.T) {
	merge := func(ms ...*Measurement) *Measurement {
		var out Measurement
		for _, m := range ms {
			out.Merge(m)
		}
		return &out
	}
	if got := mistakeOf(merge(answering(map[int]uint64{404: 5}, 0, 0, 2), answering(map[int]uint64{404: 7}, 0, 0, 2)), LibraryNames()); !strings.HasPrefix(got, "every response was 404") {
		t.Errorf("two boxes of 404s: %q", got)
	}
	if got := mistakeOf(merge(answering(map[int]uint64{404: 5}, 0, 0, 2), answering(map[int]uint64{200: 7}, 7, 0, 2)), LibraryNames()); got != "" {
		t.Errorf("404s beside successes: %q", got)
	}
	if got := mistakeOf(merge(answering(nil, 0, 5, 0), answering(map[int]uint64{503: 7}, 0, 0, 2)), LibraryNames()); got != "" {
		t.Errorf("a silent box beside one answering 503: %q", got)
	}
}
