package e2e

import (
	"testing"
	"time"

	"github.com/brk-bench/brk"
	"github.com/brk-bench/brk/internal/testenv"
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
