package brk_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/brk-bench/brk"
)

// TestProtocolTable: what each protocol decides, read through its
// methods: the report's name (the JSON report's "protocol"), its name for
// people, the text header's note, the ALPN offer, the rate test's default
// depth, the words for a level and whether a connection answers in order.
func TestProtocolTable(t *testing.T) {
	for _, c := range []struct {
		p                   brk.Protocol
		name, title, note   string
		alpn                []string
		depth               int
		inOrder             bool
		deep, one, uneven   string // LevelMadeOf(192, 64), (64, 64), (200, 64)
		below, unknownConns string // LevelMadeOf(5, 8), (5, 0)
	}{
		{brk.HTTP1, "http/1.1", "HTTP/1.1", "", []string{"http/1.1"}, 1, true,
			"64 connections × 3 pipelined requests", "64 connections × 1 request", "8 connections × 4 + 56 × 3",
			"5 connections × 1, 3 idle", ""},
		{brk.HTTP2, "h2", "HTTP/2 (h2)", "over HTTP/2 (h2)", []string{"h2"}, 128, false,
			"64 connections × 3 streams", "64 connections × 1 stream", "8 connections × 4 + 56 × 3",
			"5 connections × 1, 3 idle", ""},
	} {
		p := c.p
		if p.Name() != c.name || p.String() != c.name || fmt.Sprint(p) != c.name {
			t.Errorf("%v: name %q, string %q, want %q", p, p.Name(), p.String(), c.name)
		}
		if p.Title() != c.title || p.HeaderNote() != c.note {
			t.Errorf("%s: title %q note %q, want %q %q", c.name, p.Title(), p.HeaderNote(), c.title, c.note)
		}
		if got := p.ALPN(); !slices.Equal(got, c.alpn) {
			t.Errorf("%s: ALPN %q, want %q", c.name, got, c.alpn)
		}
		if p.DefaultRateDepth() != c.depth {
			t.Errorf("%s: default rate depth %d, want %d", c.name, p.DefaultRateDepth(), c.depth)
		}
		if p.AnswersInOrder() != c.inOrder {
			t.Errorf("%s: answers in order %v, want %v", c.name, p.AnswersInOrder(), c.inOrder)
		}
		for _, l := range []struct {
			level, conns int
			want         string
		}{{192, 64, c.deep}, {64, 64, c.one}, {200, 64, c.uneven}, {5, 8, c.below}, {5, 0, c.unknownConns}} {
			if got := p.LevelMadeOf(l.level, l.conns); got != l.want {
				t.Errorf("%s: LevelMadeOf(%d, %d) = %q, want %q", c.name, l.level, l.conns, got, l.want)
			}
		}
		if got, ok := brk.ProtocolNamed(c.name); !ok || got != p {
			t.Errorf("ProtocolNamed(%q) = %v, %v; want %v", c.name, got, ok, p)
		}
	}
	if brk.HTTP1 == brk.HTTP2 {
		t.Error("HTTP1 == HTTP2")
	}
}

// TestProtocolALPNCopy: ALPN's slice is the caller's: changing it changes
// no later offer.
func TestProtocolALPNCopy(t *testing.T) {
	a := brk.HTTP2.ALPN()
	a[0] = "http/1.1"
	if got := brk.HTTP2.ALPN(); !slices.Equal(got, []string{"h2"}) {
		t.Fatalf("HTTP2.ALPN() after a caller changed its copy: %q", got)
	}
}

// TestProtocolNamedOthers: a name no report gives (the bench fixture's
// names included, and none at all) is no protocol: false, HTTP1.
func TestProtocolNamedOthers(t *testing.T) {
	for _, name := range []string{"", "h1", "h2c", "h2-tls", "HTTP/1.1", "H2", "http/2"} {
		if p, ok := brk.ProtocolNamed(name); ok || p != brk.HTTP1 {
			t.Errorf("ProtocolNamed(%q) = %v, %v; want http/1.1, false", name, p, ok)
		}
	}
}

// TestTargetProto: a Target speaks HTTP/1.1 by default (Protocol's zero
// value), the Protocol it names, and HTTP/2 whenever the deprecated
// HTTP2 is set, whatever Protocol says.
func TestTargetProto(t *testing.T) {
	for _, c := range []struct {
		name   string
		target brk.Target
		want   brk.Protocol
	}{
		{"zero", brk.Target{}, brk.HTTP1},
		{"Protocol HTTP1", brk.Target{Protocol: brk.HTTP1}, brk.HTTP1},
		{"Protocol HTTP2", brk.Target{Protocol: brk.HTTP2}, brk.HTTP2},
		{"deprecated HTTP2", brk.Target{HTTP2: true}, brk.HTTP2},
		{"both", brk.Target{HTTP2: true, Protocol: brk.HTTP2}, brk.HTTP2},
		{"deprecated HTTP2 over HTTP1", brk.Target{HTTP2: true, Protocol: brk.HTTP1}, brk.HTTP2},
	} {
		if got := c.target.Proto(); got != c.want {
			t.Errorf("%s: Proto() = %v, want %v", c.name, got, c.want)
		}
	}
	if (brk.Protocol{}) != brk.HTTP1 {
		t.Error("Protocol's zero value is not HTTP1")
	}
}

// TestDefaultRateDepthDeprecated: the deprecated DefaultRateDepth(bool)
// is the protocols' own.
func TestDefaultRateDepthDeprecated(t *testing.T) {
	if brk.DefaultRateDepth(true) != brk.HTTP2.DefaultRateDepth() || brk.DefaultRateDepth(false) != brk.HTTP1.DefaultRateDepth() {
		t.Fatalf("DefaultRateDepth(true, false) = %d, %d; want %d, %d", brk.DefaultRateDepth(true), brk.DefaultRateDepth(false),
			brk.HTTP2.DefaultRateDepth(), brk.HTTP1.DefaultRateDepth())
	}
}
