package report_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brk-bench/brk"
	"github.com/brk-bench/brk/report"
)

// mixTarget is one hand-built target of a phase: attempted, succeeded,
// timeouts and 5xx responses, p50 and p99.
func mixTarget(i int, url string, att, timeout, s503 uint64, p50, p99 float64) brk.TargetStats {
	succ := att - timeout - s503
	t := brk.TargetStats{Index: i, Method: "GET", URL: url, Weight: 1,
		Counts:      brk.Counts{Attempted: att, Succeeded: succ, Timeout: timeout, Status: s503},
		StatusCodes: map[string]uint64{"200": succ},
		LatencyMs:   brk.Latency{Count: succ + s503, Mean: p50, P50: p50, P90: p99 * 0.9, P99: p99, P999: p99, Max: p99},
	}
	if s503 > 0 {
		t.StatusCodes["503"] = s503
	}
	if att > 0 {
		t.SuccessPct = 100 * float64(succ) / float64(att)
	}
	return t
}

// mixResult is a hand-built broken search over a four-target mix: held at
// 32 (phase 1), broke at 64 (phase 2) where /api/slow timed out; the
// phases in run order are 16, 32, 64 and a probe at 48 that broke too
// (not the final pair: the pair is 32–64, so its targets are phase 2's).
func mixResult() *brk.Result {
	const o = "http://127.0.0.1:8080"
	phase := func(i, level int, ts ...brk.TargetStats) *brk.PhaseStats {
		p := &brk.PhaseStats{Index: i, Level: level, Depth: level / 8, Accepted: true, Role: "ramp",
			DurationS: 1.1, ActiveS: 1, StatusCodes: map[string]uint64{}, Targets: ts}
		for _, t := range ts {
			c := &p.Counts
			c.Attempted += t.Counts.Attempted
			c.Succeeded += t.Counts.Succeeded
			c.Timeout += t.Counts.Timeout
			c.Status += t.Counts.Status
			for k, v := range t.StatusCodes {
				p.StatusCodes[k] += v
			}
		}
		p.SuccessPct = 100 * float64(p.Counts.Succeeded) / float64(p.Counts.Attempted)
		p.RequestsPerSec = float64(p.Counts.Succeeded) / p.DurationS
		p.LatencyMs = brk.Latency{Count: p.Counts.Succeeded, Mean: 5, P50: 2, P90: 40, P99: 90, P999: 95, Max: 99}
		return p
	}
	ps := []*brk.PhaseStats{
		phase(0, 16,
			mixTarget(0, o+"/api/fast", 4000, 0, 0, 1.2, 3.1),
			mixTarget(1, o+"/api/slow?ms=60", 1000, 0, 0, 61.5, 64.2),
			mixTarget(2, o+"/api/list", 2000, 0, 0, 1.4, 3.9),
			mixTarget(3, o+"/api/user", 1000, 0, 0, 1.3, 3.3)),
		phase(1, 32,
			mixTarget(0, o+"/api/fast", 8000, 0, 0, 1.9, 4.2),
			mixTarget(1, o+"/api/slow?ms=60", 2000, 1, 0, 63, 88),
			mixTarget(2, o+"/api/list", 4000, 0, 0, 2, 5),
			mixTarget(3, o+"/api/user", 2000, 0, 0, 1.9, 4.4)),
		phase(2, 64,
			mixTarget(0, o+"/api/fast", 10000, 0, 20, 3.1, 9.9),
			mixTarget(1, o+"/api/slow?ms=60", 2500, 1025, 0, 75, 99.2),
			mixTarget(2, o+"/api/list", 5000, 0, 0, 3.3, 10.5),
			mixTarget(3, o+"/api/user", 2500, 0, 5, 3.2, 10.1)),
		phase(3, 48,
			mixTarget(0, o+"/api/fast", 9000, 0, 0, 2.5, 7),
			mixTarget(1, o+"/api/slow?ms=60", 2250, 200, 0, 70, 99),
			mixTarget(2, o+"/api/list", 4500, 0, 0, 2.6, 7.5),
			mixTarget(3, o+"/api/user", 2250, 0, 0, 2.5, 7.2)),
	}
	for _, p := range ps[2:] {
		p.Accepted, p.Reason = false, "success below --accept 99.9 %"
	}
	ps[3].Role, ps[3].Probe = "bisect", true
	held, broke := 1, 2
	return &brk.Result{Schema: 1, Test: brk.ModeRequests, URL: o + "/api/fast", Protocol: "h2",
		Verdict: brk.VerdictBroken, Reason: "phase 2 rejected", Accept: "99.9", Conns: 8,
		LastAccepted: &ps[1].Level, FirstRejected: &ps[2].Level,
		FinalPair: &brk.FinalPair{HeldPhase: &held, BrokePhase: &broke},
		Phases:    ps, Plan: brk.Plan{Conns: 8, Accept: 99.9, Threads: 1}}
}

// mixText is the verbose and the default text of r: every phase's block
// and the summary; every phase's line and the summary sentence.
func mixText(r *brk.Result) (verbose, compact string) {
	var v, c strings.Builder
	for _, p := range r.Phases {
		report.WritePhase(&v, r.Test, p)
		report.WritePhaseLine(&c, r.Test, p, r.Conns, brk.HTTP2)
	}
	report.WriteSummary(&v, r)
	report.WriteHeld(&c, r)
	return v.String(), c.String()
}

// The text of a mix against its golden (testdata/mix-verbose.txt,
// testdata/mix-default.txt; BRK_UPDATE_GOLDEN=1 rewrites them): with -v,
// each phase's targets by failure share; in the summary, the final pair's
// rejected phase's targets (phase 2 at 64, not the later probe at 48),
// /api/slow first.
func TestTextMixGolden(t *testing.T) {
	verbose, compact := mixText(mixResult())
	for _, g := range []struct{ name, got string }{{"mix-verbose.txt", verbose}, {"mix-default.txt", compact}} {
		path := filepath.Join("testdata", g.name)
		if os.Getenv("BRK_UPDATE_GOLDEN") != "" {
			if err := os.WriteFile(path, []byte(g.got), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if g.got != string(want) {
			t.Errorf("%s differs from its golden:\n got:\n%s\nwant:\n%s", g.name, g.got, want)
		}
	}
	want := "broke at 64: GET /api/slow?ms=60 41 % failed (timeout 1025), p99 99.2 ms; GET /api/fast 0.2 % failed (status 20; non-2xx 503×20), p99 9.90 ms; GET /api/user 0.2 % failed (status 5; non-2xx 503×5), p99 10.1 ms; GET /api/list 0 % failed, p99 10.5 ms\n"
	if !strings.Contains(compact, "\n"+want) || !strings.Contains(verbose, "\n"+want) {
		t.Errorf("the summary lacks\n%s\ndefault:\n%s\nverbose:\n%s", want, compact, verbose)
	}
}

// Without a mix nothing changes: the text of the same run without its
// targets is the text with the target lines taken out.
func TestTextWithoutMixUnchanged(t *testing.T) {
	r := mixResult()
	verbose, compact := mixText(r)
	for _, p := range r.Phases {
		p.Targets = nil
	}
	plainV, plainC := mixText(r)
	strip := func(s string) string {
		var keep []string
		in := false
		for _, l := range strings.SplitAfter(s, "\n") {
			switch {
			case strings.HasPrefix(l, "  targets     "):
				in = true
				continue
			case in && strings.HasPrefix(l, "    "):
				continue
			case strings.HasPrefix(l, "broke at "):
				continue
			}
			in = false
			keep = append(keep, l)
		}
		return strings.Join(keep, "")
	}
	if strings.Contains(plainV, "targets") || strings.Contains(plainV, "broke at 64:") || strings.Contains(plainC, "broke at 64:") {
		t.Errorf("a run without a mix names targets:\n%s\n%s", plainV, plainC)
	}
	if strip(verbose) != plainV {
		t.Errorf("verbose text without the mix's lines:\n%s\nwant:\n%s", strip(verbose), plainV)
	}
	if compact == plainC || strip(compact) != plainC {
		t.Errorf("default text: with the mix\n%s\nwithout\n%s", compact, plainC)
	}
	// The phase lines stay as they are with a mix: only the summary gains a line.
	if n := strings.Count(compact, "\n") - strings.Count(plainC, "\n"); n != 1 {
		t.Errorf("the default text gained %d lines with a mix, want 1 (the summary's)", n)
	}
}

// The summary names at most SummaryTargets targets and counts the rest;
// it is absent from a run that did not break, and an empty target (no
// requests) reads —, not 0 %.
func TestBrokeFirstBounded(t *testing.T) {
	r := mixResult()
	broke := r.Phases[2]
	for i := 4; i < 9; i++ {
		broke.Targets = append(broke.Targets, mixTarget(i, "http://127.0.0.1:8080/more/"+string(rune('a'+i)), 0, 0, 0, 0, 0))
	}
	broke.Targets[8].LatencyMs = brk.Latency{}
	got := report.BrokeFirst(r)
	if !strings.HasSuffix(got, "; … 4 more") || strings.Count(got, "; GET ") != report.SummaryTargets-1 {
		t.Errorf("BrokeFirst of 9 targets: %q", got)
	}
	r.Phases[2].Targets = r.Phases[2].Targets[:5]
	if got := report.BrokeFirst(r); strings.Contains(got, "… ") || !strings.HasSuffix(got, "GET /more/e — failed, p99 —") {
		t.Errorf("BrokeFirst of 5 targets: %q", got)
	}
	r.Verdict = brk.VerdictDone
	if got := report.BrokeFirst(r); got != "" {
		t.Errorf("BrokeFirst of a Done run: %q", got)
	}
}

// Failure share is failed ÷ attempted, highest first, ties by index; a
// target without requests sorts last; the sort leaves its input alone.
func TestByFailureShare(t *testing.T) {
	ts := []brk.TargetStats{
		mixTarget(0, "http://h/a", 100, 1, 0, 1, 1),
		mixTarget(1, "http://h/b", 0, 0, 0, 0, 0),
		mixTarget(2, "http://h/c", 10, 1, 0, 1, 1),
		mixTarget(3, "http://h/d", 200, 2, 0, 1, 1),
		mixTarget(4, "http://h/e", 50, 0, 5, 1, 1),
	}
	var got []int
	for _, x := range report.ByFailureShare(ts) {
		got = append(got, x.Index)
	}
	if want := []int{2, 4, 0, 3, 1}; !slicesEqual(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
	if ts[1].Index != 1 {
		t.Error("ByFailureShare sorted its input")
	}
	if n := report.TargetName(&brk.TargetStats{Method: "POST", URL: "https://h:8443/p/q?x=1&y=2"}); n != "POST /p/q?x=1&y=2" {
		t.Errorf("TargetName %q", n)
	}
}

func slicesEqual(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A mix pipelined over HTTP/1.1 says its targets' latencies are not
// their own (head-of-line blocking) and what tells them apart; over
// HTTP/2, or one request a connection at a time, it says nothing.
func TestHeadOfLineNote(t *testing.T) {
	r := mixResult()
	r.Test, r.Protocol = brk.ModeRequests, "http/1.1"
	_, compact := mixText(r)
	if !strings.Contains(compact, "\nnote: pipelined over HTTP/1.1, a connection answers in order") || !strings.Contains(compact, "brk conn or brk rate") {
		t.Errorf("no head-of-line note:\n%s", compact)
	}
	for _, c := range []func(*brk.Result){
		func(r *brk.Result) { r.Protocol = "h2" },
		func(r *brk.Result) { r.Test = brk.ModeConnections },
		func(r *brk.Result) {
			for _, p := range r.Phases {
				p.Depth = 1
			}
		},
	} {
		r := mixResult()
		r.Test, r.Protocol = brk.ModeRequests, "http/1.1"
		c(r)
		if s := report.HeadOfLineNote(r); s != "" {
			t.Errorf("a note where no request waited behind another's: %q", s)
		}
	}
}
