package brk

import (
	"net/url"
	"testing"
)

// TestEncodeRequestRefusals: an encoder's refusal reads without its
// package prefix, over HTTP/1.1 and HTTP/2 alike.
func TestEncodeRequestRefusals(t *testing.T) {
	u, err := url.Parse("http://127.0.0.1:8080/plain")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := encodeRequest(&Target{Method: "g t"}, u); err == nil || err.Error() != `invalid method "G T": not a token` {
		t.Errorf("h1: %v", err)
	}
	if _, err := encodeRequestH2(&Target{Method: "g t"}, u); err == nil || err.Error() != `invalid method "G T": not a token` {
		t.Errorf("h2: %v", err)
	}
	te := &Target{Headers: []Header{{Name: "te", Value: "trailers"}}}
	if _, err := encodeRequestH2(te, u); err == nil || err.Error() != `header "te" is connection-specific and not allowed in HTTP/2` {
		t.Errorf("h2 te: %v", err)
	}
}

// TestEncodeRequestReplay: the method defaults to GET, or POST with a
// body; only GET and HEAD followers are replayed.
func TestEncodeRequestReplay(t *testing.T) {
	u, err := url.Parse("http://127.0.0.1:8080/plain?x=1")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		t      Target
		line   string
		replay bool
	}{
		{Target{}, "GET /plain?x=1 HTTP/1.1", true},
		{Target{Method: "head"}, "HEAD /plain?x=1 HTTP/1.1", true},
		{Target{Body: []byte("b")}, "POST /plain?x=1 HTTP/1.1", false},
		{Target{Method: "put"}, "PUT /plain?x=1 HTTP/1.1", false},
	}
	for _, c := range cases {
		tmpl, replay, err := encodeRequest(&c.t, u)
		if err != nil {
			t.Fatal(err)
		}
		req := string(tmpl.Request())
		if len(req) < len(c.line) || req[:len(c.line)] != c.line || replay != c.replay {
			t.Errorf("%+v: %q replay %v; want %q replay %v", c.t, req, replay, c.line, c.replay)
		}
	}
}
