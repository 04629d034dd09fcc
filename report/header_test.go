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
