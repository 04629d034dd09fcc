package report_test

import (
	"strings"
	"testing"
	"time"

	brk "github.com/brk-bench/brk"
	"github.com/brk-bench/brk/report"
)

// One connection is one connection in the header's words, for every
// test's one-level line and the rate ramp's.
func TestHeaderOneConnection(t *testing.T) {
	tgt := brk.Target{URL: "http://127.0.0.1:1/plain"}
	for _, c := range []struct {
		mode brk.Mode
		plan brk.Plan
		want string
	}{
		{brk.ModeConnections, brk.Plan{Start: 1, Max: 1, Phase: time.Second, Timeout: time.Second}, "one level, no ramp: 1 connection, 1 request per connection;"},
		{brk.ModeConnections, brk.Plan{Start: 2, Max: 2, Requests: 3, Phase: time.Second, Timeout: time.Second}, "one level, no ramp: 2 connections, 3 requests per connection;"},
		{brk.ModeRate, brk.Plan{Conns: 1, Start: 100, Max: 100, Phase: time.Second, Timeout: time.Second}, "over 1 connection × 1 outstanding at most;"},
		{brk.ModeRate, brk.Plan{Conns: 1, Start: 100, Pace: 100, Max: 300, Phase: time.Second, Timeout: time.Second}, "uniform arrivals; 1 connection × 1 outstanding at most;"},
	} {
		var b strings.Builder
		report.WriteHeader(&b, c.mode, tgt, c.plan, 1)
		if !strings.Contains(b.String(), c.want) {
			t.Errorf("%s header, want %q:\n%s", c.mode, c.want, b.String())
		}
	}
}

// The header's last line is the SLA a phase is judged by, for every
// test's header shape (search, ramp, one level); the command line's
// default SLA says that it is one and which flags give another.
func TestHeaderSLA(t *testing.T) {
	tgt := brk.Target{URL: "http://127.0.0.1:1/plain"}
	search := brk.Plan{Conns: 8, Phase: time.Second, Timeout: time.Second, Search: &brk.Search{}}
	ramp := brk.Plan{Conns: 8, Start: 1, Pace: 1, Phase: time.Second, Timeout: 100 * time.Millisecond, Accept: 99.9, MaxP99: 50 * time.Millisecond}
	one := brk.Plan{Start: 4, Max: 4, Phase: time.Second, Timeout: time.Second, MaxP999: 80 * time.Millisecond}
	flagless := search
	flagless.MaxP99 = 100 * time.Millisecond
	for _, c := range []struct {
		name       string
		mode       brk.Mode
		plan       brk.Plan
		defaultSLA bool
		want       string
	}{
		{"a search", brk.ModeRequests, search, false, "  SLA: 99.99 % succeed within 1s\n"},
		{"a ramp with a p99 limit", brk.ModeRequests, ramp, false, "  SLA: 99.9 % succeed within 100ms, p99 at most 50ms\n"},
		{"one level with a p99.9 limit", brk.ModeConnections, one, false, "  SLA: 99.99 % succeed within 1s, p99.9 at most 80ms\n"},
		{"the rate test", brk.ModeRate, search, false, "  SLA: 99.99 % succeed within 1s\n"},
		{"the default SLA", brk.ModeRequests, flagless, true,
			"  SLA: 99.99 % succeed within 1s, p99 at most 100ms (brk's default SLA; --accept, --timeout, --max-p99 or --max-p999 gives your own)\n"},
	} {
		var b strings.Builder
		(&report.Text{W: &b, Test: c.mode, Target: tgt, Plan: c.plan, DefaultSLA: c.defaultSLA}).WorkersStarted(1)
		lines := strings.SplitAfter(b.String(), "\n")
		if last := lines[len(lines)-2]; last != c.want {
			t.Errorf("%s: the header's last line is %q, want %q\n%s", c.name, last, c.want, b.String())
		}
		if strings.Contains(b.String(), ", timeout ") || strings.Count(b.String(), "succeed within") != 1 {
			t.Errorf("%s: the SLA is said once, in its own line:\n%s", c.name, b.String())
		}
	}
}
