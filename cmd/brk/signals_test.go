package main

// SIGINT and SIGTERM in the middle of a phase's admission and in the
// middle of its drain (README.md's exit codes table: exit 130, `Interrupted`, completed phases
// reported, the cut-short phase marked and not judged, no traffic after
// the signal). Reuses main_test.go's harness.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/brk-bench/brk/bench"
	"github.com/brk-bench/brk/internal/testenv"
)

// Timeline of one run (conn 4, depth 1, /delay?ms=700, --phase 300ms):
// the header line appears, admission runs 0..300 ms with the 4 requests
// outstanding, the drain runs 300..~700 ms until their responses arrive,
// then phase 1 would start. A signal at +150 ms lands in the admission,
// one at +450 ms in the drain.
const (
	sigDelayMS  = 700
	sigMidPhase = 150 * time.Millisecond
	sigMidDrain = 450 * time.Millisecond
	// sigAttempts reruns a case whose signal landed elsewhere than
	// intended because a loaded machine stalled the client or the test.
	sigAttempts = 3
)

// sigPhase holds the report fields these tests read beyond main_test.go's.
type sigPhase struct {
	ActiveS   float64 `json:"active_s"`
	DurationS float64 `json:"duration_s"`
}

type sigOutcome struct {
	r       result
	rep     jsonReport
	extra   []sigPhase
	served  int64 // fixture requests after the exit settled
	sentAt  time.Duration
	exitLag time.Duration // from the signal to the exit
}

// runSignalled starts a run against fx, sends sig (twice when twice) at
// after past the header line, and returns what it left behind.
func runSignalled(t *testing.T, fx *bench.Fixture, sig syscall.Signal, after time.Duration, twice bool) sigOutcome {
	t.Helper()
	path := filepath.Join(t.TempDir(), "report.json")
	before := fx.Requests()
	p := startBrk(t, nil, fx.URL(fmt.Sprintf("/delay?ms=%d", sigDelayMS)), "--timeout", "2s", "--phase", "300ms", "--conn", "4",
		"--threads", "1", "--json", path)
	p.waitFor("worker thread", 10*time.Second) // the header: phase 0 starts now
	seen := time.Now()
	time.Sleep(after)
	sent := time.Now()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	if twice {
		time.Sleep(50 * time.Millisecond)
		_ = p.cmd.Process.Signal(sig) // may already have exited
	}
	r := p.wait()
	o := sigOutcome{r: r, sentAt: sent.Sub(seen), exitLag: time.Since(sent)}
	expect(t, r, 130, "Interrupted")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("JSON report: %v\n%s", err, r)
	}
	if !json.Valid(b) {
		t.Fatalf("JSON report is not valid JSON\n%s", b)
	}
	o.rep = decodeReport(t, b)
	var raw struct {
		Phases []sigPhase `json:"phases"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	o.extra = raw.Phases
	// The process has exited, so nothing more can arrive; a short settle
	// lets the fixture's handlers for already-sent bytes be counted.
	time.Sleep(100 * time.Millisecond)
	o.served = fx.Requests() - before
	time.Sleep(200 * time.Millisecond)
	if later := fx.Requests() - before; later != o.served {
		t.Errorf("fixture request count grew from %d to %d after brk exited", o.served, later)
	}
	return o
}

// TestSignals: SIGINT and SIGTERM mid-admission and mid-drain.
func TestSignals(t *testing.T) {
	testenv.Parallel(t, testenv.Waits)
	fx := startFixture(t, bench.FixtureConfig{})
	type tc struct {
		name  string
		sig   syscall.Signal
		after time.Duration
		drain bool
		twice bool
	}
	cases := []tc{
		{"SIGINT mid-phase", syscall.SIGINT, sigMidPhase, false, false},
		{"SIGTERM mid-phase", syscall.SIGTERM, sigMidPhase, false, false},
		{"SIGINT mid-drain", syscall.SIGINT, sigMidDrain, true, false},
		{"SIGTERM mid-drain", syscall.SIGTERM, sigMidDrain, true, false},
		{"SIGINT twice mid-drain", syscall.SIGINT, sigMidDrain, true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var o sigOutcome
			for attempt := 1; ; attempt++ {
				o = runSignalled(t, fx, c.sig, c.after, c.twice)
				if landedAsIntended(o, c.drain) || attempt == sigAttempts {
					break
				}
				t.Logf("attempt %d: signal sent %v after the header landed elsewhere (phases %d, load %s); retrying",
					attempt, o.sentAt.Round(time.Millisecond), len(o.rep.Phases), loadavg())
			}
			rep := o.rep
			if rep.Verdict != "interrupted" {
				t.Errorf("verdict %q, want interrupted", rep.Verdict)
			}
			if rep.FirstRejected != nil {
				t.Errorf("first_rejected %s, want null", intp(rep.FirstRejected))
			}
			checkCounts(t, rep)
			if len(rep.Phases) != 1 {
				t.Fatalf("%d phases, want 1: the signal (sent %v after the header) should land in phase 0 (%s)\n%s",
					len(rep.Phases), o.sentAt.Round(time.Millisecond), map[bool]string{true: "drain", false: "admission"}[c.drain], o.r)
			}
			p0 := rep.Phases[0]
			if c.drain {
				// The drain finishes, the phase is judged, and no further
				// phase starts.
				if p0.Interrupted || !p0.Accepted {
					t.Errorf("phase 0: interrupted %v accepted %v, want false true (signal in the drain)", p0.Interrupted, p0.Accepted)
				}
				if rep.LastAccepted == nil || *rep.LastAccepted != 4 {
					t.Errorf("last_accepted %s, want 4", intp(rep.LastAccepted))
				}
			} else {
				if !p0.Interrupted || p0.Accepted {
					t.Errorf("phase 0: interrupted %v accepted %v, want true false (signal in the admission)", p0.Interrupted, p0.Accepted)
				}
				if rep.LastAccepted != nil {
					t.Errorf("last_accepted %s, want null", intp(rep.LastAccepted))
				}
			}
			// Every request the server saw is accounted for in a reported
			// phase: no phase started after the signal.
			var attempted uint64
			for _, p := range rep.Phases {
				attempted += p.Counts.Attempted
			}
			if uint64(o.served) != attempted {
				t.Errorf("fixture served %d requests, report attempted %d: traffic not accounted for", o.served, attempted)
			}
			if p0.Counts.Succeeded != p0.Counts.Attempted || p0.Counts.Attempted != 4 {
				t.Errorf("phase 0 counts %+v, want 4 attempted, 4 succeeded (the drain completes)", p0.Counts)
			}
			// The drain is bounded by the outstanding requests' 700 ms
			// service (and at worst by --timeout 2s).
			if o.exitLag > 3*time.Second {
				t.Errorf("exited %v after the signal, want within the drain", o.exitLag)
			}
			if t.Failed() {
				t.Logf("signal sent %v after the header, exit %v after it\n%s", o.sentAt, o.exitLag, o.r)
			}
		})
	}
}

// landedAsIntended reports whether the signal hit the admission (drain
// false) or the drain (drain true) of phase 0, judging by the report.
func landedAsIntended(o sigOutcome, drain bool) bool {
	if len(o.rep.Phases) != 1 {
		return false
	}
	return o.rep.Phases[0].Interrupted != drain
}
