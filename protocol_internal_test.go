package brk

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"testing"

	"github.com/brk-bench/brk/internal/h1"
	"github.com/brk-bench/brk/internal/h2"
)

// TestTargetHashProtocol: the shard plan hash of a target is byte-identical
// to the hash of releases where the protocol was the bool Target.HTTP2,
// whichever way the target names its protocol: shards of different
// versions compare it.
func TestTargetHashProtocol(t *testing.T) {
	// The hashed value as it was before Protocol (shard.go, targetHash).
	old := func(tg Target, http2 bool) string {
		body := sha256.Sum256(tg.Body)
		v := struct {
			Method       string
			Headers      []Header
			Body         string
			ExpectStatus []int
			ExpectBody   []byte
			ExpectEcho   bool
			HTTP2        bool
			Mix          []mixHash `json:",omitempty"`
		}{tg.Method, tg.Headers, hex.EncodeToString(body[:]), tg.ExpectStatus, tg.ExpectBody, tg.ExpectEcho, http2, mixHashes(&tg)}
		b, _ := json.Marshal(v)
		h := sha256.Sum256(b)
		return hex.EncodeToString(h[:])
	}
	mix := []Request{{URL: "http://h/a"}, {URL: "http://h/b", Weight: 3}}
	for _, c := range []struct {
		name  string
		t     Target
		http2 bool
	}{
		{"zero", Target{URL: "http://h/"}, false},
		{"HTTP1", Target{URL: "http://h/", Protocol: HTTP1, Method: "POST", Body: []byte("b")}, false},
		{"HTTP2", Target{URL: "http://h/", Protocol: HTTP2, ExpectStatus: []int{200}}, true},
		{"deprecated HTTP2", Target{URL: "http://h/", HTTP2: true, ExpectStatus: []int{200}}, true},
		{"mix HTTP2", Target{Mix: mix, Protocol: HTTP2}, true},
		{"mix HTTP1", Target{Mix: mix}, false},
	} {
		if got, want := targetHash(&c.t), old(c.t, c.http2); got != want {
			t.Errorf("%s: targetHash %s, want %s (HTTP2 %v)", c.name, got, want, c.http2)
		}
	}
	if targetHash(&Target{Protocol: HTTP2}) != targetHash(&Target{HTTP2: true}) {
		t.Error("Protocol HTTP2 and the deprecated HTTP2 hash apart")
	}
}

// TestPrepareProtocol: prepare takes the protocol's ALPN offer, the
// protocol the TLS server must select, its sessions (one type for one
// target and for a mix) and, in the rate test, its default depth: from Protocol or
// from the deprecated HTTP2 alike.
func TestPrepareProtocol(t *testing.T) {
	isH1 := func(s any) bool { _, ok := s.(*h1.Session); return ok }
	isH2 := func(s any) bool { _, ok := s.(*h2.Session); return ok }
	for _, c := range []struct {
		name       string
		t          Target
		alpn       []string
		selects    string
		one, mixed func(any) bool
		depth      int
	}{
		{"HTTP1", Target{}, []string{"http/1.1"}, "", isH1, isH1, 1},
		{"HTTP2", Target{Protocol: HTTP2}, []string{"h2"}, "h2", isH2, isH2, 128},
		{"deprecated HTTP2", Target{HTTP2: true}, []string{"h2"}, "h2", isH2, isH2, 128},
	} {
		one := c.t
		one.URL = "https://127.0.0.1:8443/plain"
		pr, _, _, err := check(&one, Plan{}, ModeRequests)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !slices.Equal(pr.tls.NextProtos, c.alpn) || pr.proto.selectsALPN() != c.selects {
			t.Errorf("%s: NextProtos %q, selects %q; want %q, %q", c.name, pr.tls.NextProtos, pr.proto.selectsALPN(), c.alpn, c.selects)
		}
		if s := pr.session(); !c.one(s) {
			t.Errorf("%s: session %T", c.name, s)
		}
		mixed := c.t
		mixed.Mix = []Request{{URL: "http://127.0.0.1:8080/a"}, {URL: "http://127.0.0.1:8080/b"}}
		pr, _, _, err = check(&mixed, Plan{}, ModeRequests)
		if err != nil {
			t.Fatalf("%s mix: %v", c.name, err)
		}
		if s := pr.session(); !c.mixed(s) {
			t.Errorf("%s mix: session %T", c.name, s)
		}
		rate := c.t
		var p Plan
		if err := (Rate{}).fill(&rate, &p); err != nil || p.RateDepth != c.depth {
			t.Errorf("%s: the rate test's depth %d (%v), want %d", c.name, p.RateDepth, err, c.depth)
		}
	}
}
