package report

import (
	"bytes"
	"strings"
	"testing"

	brk "github.com/brk-bench/brk"
	"github.com/brk-bench/brk/internal/judge"
)

// A phase's evidence line words the box's other load; where the
// hypervisor took CPU for other machines (steal), that part is named
// apart from other processes, which did not use it; a stall says when,
// and whether it lasted to the phase's end. A hold on a quiet box says
// nothing. A phase that ended the run without a verdict (here the
// client saturated on a busy box, as in a busy suite run's TUI test) says
// what was seen, not that its level runs again.
func TestEvidenceLineOtherLoad(t *testing.T) {
	busy := &brk.Evidence{Busy: true}
	cases := []struct {
		name     string
		accepted bool
		ended    bool // inconclusive
		ev       *brk.Evidence
		other    *brk.OtherCPU
		want     string
	}{
		{"quiet hold", true, false, &brk.Evidence{}, &brk.OtherCPU{MeanCores: 0.1, Busy: 1, Windows: 9, OK: true}, ""},
		{"busy hold, processes", true, false, busy, &brk.OtherCPU{MeanCores: 0.34, Busy: 7, Windows: 9, OK: true},
			"a busy box: other processes used 0.34 cores (more than a quarter of one in 7 of 9 windows) — a hold under that load stands"},
		{"busy rejection, steal", false, false, busy, &brk.OtherCPU{MeanCores: 0.34, StealCores: 0.25, Busy: 7, Windows: 9, OK: true},
			"a busy box: other processes used 0.09 cores and the hypervisor took 0.25 for other machines (steal) (more than a quarter of one in 7 of 9 windows) — its level runs again"},
		{"a stall", false, false, &brk.Evidence{Stall: &judge.Stall{At: 4e8, Span: 3e8, Failures: 24, Requests: 140, Of: 24}}, nil,
			"a stall: 24 of its 24 failures within 0.3 s from 0.4 s (the rest held) — its level runs again"},
		{"a stall to the phase's end", false, false, &brk.Evidence{Stall: &judge.Stall{At: 7e8, Span: 3e8, Failures: 24, Requests: 140, Of: 24, AtEnd: true}}, nil,
			"a stall: 24 of its 24 failures within 0.3 s from 0.7 s to the phase's end (the rest held) — its level runs again"},
		{"busy rejection, steal only", false, false, busy, &brk.OtherCPU{MeanCores: 0.5, StealCores: 0.5, Busy: 9, Windows: 9, OK: true},
			"a busy box: other processes used 0 cores and the hypervisor took 0.5 for other machines (steal) (more than a quarter of one in 9 of 9 windows) — its level runs again"},
		{"inconclusive on a busy box", false, true, busy, &brk.OtherCPU{MeanCores: 1.6, Busy: 2, Windows: 2, OK: true},
			"a busy box: other processes used 1.6 cores (more than a quarter of one in 2 of 2 windows)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := &brk.PhaseStats{Accepted: c.accepted, Inconclusive: c.ended, Evidence: c.ev, OtherCPU: c.other}
			if got := EvidenceLine(s); got != c.want {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
		})
	}
}

// The break's summary names the steal beside the other processes' load
// when a busy phase had any, and only then.
func TestBreakEvidenceBusySteal(t *testing.T) {
	for _, c := range []struct {
		steal float64
		want  string
	}{
		{0, "busy: 1 of 2 phases ran on a busy box (other processes used up to 0.6 cores): the break is the server's under that load"},
		{0.4, "busy: 1 of 2 phases ran on a busy box (other processes and the hypervisor's steal used up to 0.6 cores, steal up to 0.4): the break is the server's under that load"},
	} {
		r := &brk.Result{FinalPair: &brk.FinalPair{}, Phases: []*brk.PhaseStats{
			{Accepted: true, Evidence: &brk.Evidence{}, OtherCPU: &brk.OtherCPU{MeanCores: 0.9, OK: true}},
			{Evidence: &brk.Evidence{Busy: true}, OtherCPU: &brk.OtherCPU{MeanCores: 0.6, StealCores: c.steal, OK: true}},
		}}
		var b bytes.Buffer
		WriteBreakEvidence(&b, r)
		if !strings.Contains(b.String(), c.want+"\n") {
			t.Errorf("steal %.1f: got\n%s\nwant the line %q", c.steal, b.String(), c.want)
		}
	}
}
