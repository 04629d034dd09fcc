package report

import (
	"strings"
	"testing"

	"github.com/brk-bench/brk"
)

// TestTextHTTP2: the header names HTTP/2 and a phase reports its HTTP/2
// counts.
func TestTextHTTP2(t *testing.T) {
	var b strings.Builder
	WriteHeader(&b, brk.ModeRequests, brk.Target{URL: "http://x/", Protocol: brk.HTTP2}, brk.Plan{Conns: 2}, 1)
	limit := int64(4)
	WritePhase(&b, brk.ModeRequests, &brk.PhaseStats{Level: 8, Depth: 4, ResetsSent: 3, GoAwaysReceived: 2, StreamsReplayed: 5, PeerMaxStreams: &limit})
	for _, want := range []string{"over HTTP/2 (h2)", "http/2      resets sent 3, GOAWAYs received 2, streams replayed 5; server stream limit 4"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
}

// TestTextTLSProbe: a phase whose TLS probe opened a connection says so
// beside its setups, in the full block and in the short one of a phase
// that set nothing up; a phase without a probe has no such line.
func TestTextTLSProbe(t *testing.T) {
	const line = "tls probe   1 connection after the phase, beside its setups"
	for _, s := range []*brk.PhaseStats{
		{Level: 2, Depth: 1, TLSProbes: 1, Setups: brk.Setups{Attempted: 9, Established: 9}},
		{Level: 2, Depth: 1, TLSProbes: 1, Inconclusive: true, Setups: brk.Setups{Attempted: 9, Failed: 9}},
	} {
		var b strings.Builder
		WritePhase(&b, brk.ModeRequests, s)
		if !strings.Contains(b.String(), line) {
			t.Errorf("text lacks %q:\n%s", line, b.String())
		}
	}
	var b strings.Builder
	WritePhase(&b, brk.ModeRequests, &brk.PhaseStats{Level: 2, Depth: 1})
	if strings.Contains(b.String(), "tls probe") {
		t.Errorf("a phase without a probe:\n%s", b.String())
	}
}

// TestTextIdleCloses: a phase whose server ended idle connections (an
// idle timeout's 408) says how many, and that no request failed for them.
func TestTextIdleCloses(t *testing.T) {
	var b strings.Builder
	WritePhase(&b, brk.ModeRate, &brk.PhaseStats{Level: 10, IdleCloses: 7})
	want := "idle close  7 connections ended by the server while idle (its 408 farewell): replaced, no request failed"
	if !strings.Contains(b.String(), want) {
		t.Errorf("text lacks %q:\n%s", want, b.String())
	}
	b.Reset()
	WritePhase(&b, brk.ModeRate, &brk.PhaseStats{Level: 10})
	if strings.Contains(b.String(), "idle close") {
		t.Errorf("a phase without idle closes mentions them:\n%s", b.String())
	}
}
