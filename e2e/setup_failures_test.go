package e2e

import (
	"fmt"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/brk-bench/brk"
	"github.com/brk-bench/brk/internal/hostile"
)

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

// TestReplayDeadlineDuringConnect is TestH2ReplayDeadlineDuringSetup over
// HTTP/1.1, whose session cannot take one queued request back. The server
// (a backlog-1 listener the test accepts from once) holds 4 pipelined GETs
// for 300 ms (holdFor) while it fills its accept queue, then answers the first
// with Connection: close. The 3 followers are replayed onto a new
// connection whose SYN the full queue drops; their deadlines (500 ms after
// admission) pass while it connects: 3 timeouts, not a setup failure. The
// setup itself runs into its own deadline later, with nothing charged to
// it (admission ended at 100 ms).
func TestReplayDeadlineDuringConnect(t *testing.T) {
	const holdFor = 300 * time.Millisecond // the admission window is 100 ms; the replays' deadlines 500 ms
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	syscall.CloseOnExec(fd)
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 1); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port)
	served := make(chan error, 1)
	go func() {
		cfd, _, err := syscall.Accept(fd)
		if err != nil {
			served <- err
			return
		}
		defer syscall.Close(cfd)
		buf := make([]byte, 4096)
		if _, err := syscall.Read(cfd, buf); err != nil {
			served <- err
			return
		}
		read := time.Now()
		// Fill the accept queue: the last dial's timeout proves it full.
		for i := 0; ; i++ {
			c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
			if err != nil {
				break
			}
			t.Cleanup(func() { c.Close() })
			if i == 16 {
				served <- fmt.Errorf("the accept queue never filled")
				return
			}
		}
		// Answer well after admission ended (100 ms after the phase
		// started, which was before the read): a response inside the
		// window would free a slot for a fifth request (a busy run: the
		// fill took about the window, and a fifth request met the dropped
		// SYN). The controller that ends admission may run late on a
		// loaded box; 300 ms leaves it 200.
		time.Sleep(time.Until(read.Add(holdFor)))
		_, err = syscall.Write(cfd, []byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"))
		served <- err
	}()
	plan := shortPlan(1, 4, 100*time.Millisecond)
	plan.Timeout = 500 * time.Millisecond
	res := runBrk(t, brk.Target{URL: "http://" + addr + "/", ExpectBody: []byte("ok")}, plan)
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	t.Log(describe(res))
	checkAccounting(t, res)
	c, s := total(res), totalSetups(res)
	if c.Succeeded != 1 || c.Timeout != 3 || c.Abandoned != 0 || c.ConnectTimeout != 0 || s.TimedOut == 0 {
		t.Fatalf("counts %+v, setups %+v: want 1 success, the 3 replays timed out while their connection was set up, nothing abandoned", c, s)
	}
}
