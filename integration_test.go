package brk_test

import (
	"strings"
	"testing"
	"time"

	"brk"
	"brk/internal/hostile"
	"brk/internal/testenv"
)

// TestNginxKeepaliveReplacement runs 16 connections at depth 8 against a
// one-worker nginx with its default keepalive_requests (1000): nginx ends
// every connection after 1000 responses with Connection: close, so the
// engine must replace connections and replay the GET followers nginx never
// answered, without losing or double-counting a request.
func TestNginxKeepaliveReplacement(t *testing.T) {
	ng := testenv.StartNginx(t, testenv.NginxOptions{})
	target := brk.Target{URL: "http://" + ng.Addr + "/", ExpectBody: []byte("ok")}
	plan := shortPlan(16, 8, 1500*time.Millisecond)
	res := runBrk(t, target, plan)
	t.Log(describe(res))
	checkAccounting(t, res)

	if res.Verdict != brk.VerdictDone {
		t.Fatalf("verdict %s, want done: %s", res.Verdict, describe(res))
	}
	if res.LastAccepted == nil || *res.LastAccepted != 16*8 {
		t.Errorf("last_accepted %v, want %d", res.LastAccepted, 16*8)
	}
	tc := total(res)
	if tc.Abandoned != 0 || tc.Transport != 0 || tc.Timeout != 0 || tc.Protocol != 0 {
		t.Errorf("failures against nginx: %+v", tc)
	}
	if tc.Attempted == 0 || tc.Attempted != tc.Succeeded {
		t.Errorf("attempted %d, succeeded %d: want equal and > 0", tc.Attempted, tc.Succeeded)
	}
	su := totalSetups(res)
	if su.Established <= 16 {
		t.Errorf("setups established %d: want > 16 (nginx closes after 1000 responses; %d requests were answered)",
			su.Established, tc.Succeeded)
	}
	if tc.Succeeded < 16*1000 {
		// Not an engine fault, but then the test did not exercise replacement.
		t.Logf("only %d requests in the phase: connection replacement may not have happened", tc.Succeeded)
	}
	// nginx logs each request it answered once; replayed followers were
	// never answered by the connection that closed, so each attempted
	// request is exactly one access-log line.
	got := ng.WaitRequests(t, int(tc.Attempted), 5*time.Second)
	if uint64(got) != tc.Attempted {
		t.Errorf("nginx logged %d requests, client attempted %d", got, tc.Attempted)
	}
	// Nothing is logged after the run: no request was left behind.
	time.Sleep(50 * time.Millisecond)
	if late := ng.Requests(t); late != got {
		t.Errorf("nginx logged %d requests after the run had counted %d", late, got)
	}
}

// TestNothingListening dials a port whose listener was closed: every setup
// is refused, phase 0 ends early and the run is inconclusive.
func TestNothingListening(t *testing.T) {
	addr := closedAddr(t)
	// A long phase: only FailFast ends it early.
	plan := shortPlan(2, 1, 10*time.Second)
	res := runBrk(t, brk.Target{URL: "http://" + addr + "/"}, plan)
	t.Log(describe(res))
	checkAccounting(t, res)
	if res.Verdict != brk.VerdictInconclusive {
		t.Fatalf("verdict %s, want inconclusive: %s", res.Verdict, describe(res))
	}
	if !strings.Contains(res.Reason, "setup impossible") || !strings.Contains(res.Reason, "refused") {
		t.Errorf("reason %q: want it to mention setup impossible and refused", res.Reason)
	}
	if res.LastAccepted != nil || res.FirstRejected != nil {
		t.Errorf("last_accepted %v first_rejected %v: want none", res.LastAccepted, res.FirstRejected)
	}
	tc := total(res)
	if tc.Succeeded != 0 || tc.Connect == 0 {
		t.Errorf("counts %+v: want connect failures and no success", tc)
	}
	if su := totalSetups(res); su.Established != 0 || su.Failed == 0 {
		t.Errorf("setups %+v: want failures and none established", su)
	}
	// FailFast: the 10 s phase must not run to its end (a generous bound,
	// only to catch a phase that ignores FailFast entirely).
	if len(res.Phases) != 1 {
		t.Fatalf("%d phases, want 1", len(res.Phases))
	}
	if a := res.Phases[0].ActiveS; a > 5 {
		t.Errorf("phase 0 admitted for %.2fs: it did not end early", a)
	}
}

// TestConnectTimeout dials a listener whose accept queue is full: SYNs are
// dropped, every setup runs into the request timeout, and phase 0 ends
// early as inconclusive with connect_timeout (not connect) failures.
func TestConnectTimeout(t *testing.T) {
	addr := hostile.FullBacklog(t)
	plan := shortPlan(2, 2, 10*time.Second)
	plan.Timeout = 100 * time.Millisecond
	res := runBrk(t, brk.Target{URL: "http://" + addr + "/"}, plan)
	t.Log(describe(res))
	checkAccounting(t, res)
	if res.Verdict != brk.VerdictInconclusive || !strings.Contains(res.Reason, "setup impossible") {
		t.Fatalf("want inconclusive, setup impossible: %s", describe(res))
	}
	c := total(res)
	if c.ConnectTimeout == 0 || c.Connect != 0 || c.Succeeded != 0 {
		t.Errorf("counts %+v: want connect_timeout failures only", c)
	}
	// One incident per setup: the first request connect_timeout, the
	// other one queued behind it abandoned.
	if c.Abandoned != c.ConnectTimeout {
		t.Errorf("counts %+v: want one abandoned follower per connect timeout at depth 2", c)
	}
	su := totalSetups(res)
	if su.Established != 0 || su.TimedOut == 0 || su.TimedOut != c.ConnectTimeout {
		t.Errorf("setups %+v vs counts %+v", su, c)
	}
	if len(res.Phases) == 1 && res.Phases[0].ActiveS > 5 {
		t.Errorf("phase 0 admitted for %.2fs: it did not end early", res.Phases[0].ActiveS)
	}
}
