package h2

import (
	"reflect"
	"strings"
	"testing"

	"golang.org/x/net/http2/hpack"

	"github.com/brk-bench/brk/internal/exchange"
)

// decodeBlock decodes a request header block as a server would.
func decodeBlock(t *testing.T, block []byte) []hpack.HeaderField {
	t.Helper()
	var got []hpack.HeaderField
	d := hpack.NewDecoder(4096, func(f hpack.HeaderField) { got = append(got, f) })
	if _, err := d.Write(block); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	return got
}

// TestTemplateFields: the request's pseudo-headers and fields, with the
// defaults (GET or POST, "/", user-agent, content-type) and the user's
// Host header as :authority; the first block (with its table size update)
// and the later ones decode to the same fields.
func TestTemplateFields(t *testing.T) {
	hf := func(name, value string) hpack.HeaderField { return hpack.HeaderField{Name: name, Value: value} }
	cases := []struct {
		name string
		req  exchange.Request
		want []hpack.HeaderField
	}{
		{"defaults", exchange.Request{Host: " h:1\t"},
			[]hpack.HeaderField{hf(":method", "GET"), hf(":scheme", "http"), hf(":authority", "h:1"), hf(":path", "/"), hf("user-agent", "brk")}},
		{"user host, agent and type, body", exchange.Request{Host: "h:1", Target: "/up?x=1", Body: []byte("abc"), Headers: []exchange.Header{
			{Name: "Host", Value: "example.com"}, {Name: "User-Agent", Value: "me"}, {Name: "Content-Type", Value: " text/plain "}}},
			[]hpack.HeaderField{hf(":method", "POST"), hf(":scheme", "http"), hf(":authority", "example.com"), hf(":path", "/up?x=1"),
				hf("user-agent", "me"), hf("content-type", "text/plain"), hf("content-length", "3")}},
		{"empty body", exchange.Request{Method: "PUT", Host: "h", Body: []byte{}},
			[]hpack.HeaderField{hf(":method", "PUT"), hf(":scheme", "http"), hf(":authority", "h"), hf(":path", "/"), hf("user-agent", "brk"),
				hf("content-type", "application/octet-stream"), hf("content-length", "0")}},
	}
	for _, c := range cases {
		tm, err := NewTemplate(c.req, "http", nil, false)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		first, later := decodeBlock(t, tm.first), decodeBlock(t, tm.block)
		if !reflect.DeepEqual(first, c.want) || !reflect.DeepEqual(later, c.want) {
			t.Errorf("%s: first %v, later %v; want %v", c.name, first, later, c.want)
		}
	}
}

// TestTemplateRefuses: a request HTTP/1.1 would refuse, or one with a
// connection-specific header, is an error with this package's prefix.
func TestTemplateRefuses(t *testing.T) {
	cases := []struct {
		name string
		req  exchange.Request
		msg  string
	}{
		{"method", exchange.Request{Method: "G T"}, "h2: invalid method"},
		{"target", exchange.Request{Target: "plain"}, "h2: invalid request target"},
		{"header value", exchange.Request{Headers: []exchange.Header{{Name: "X", Value: "a\nb"}}}, "h2: invalid value"},
		{"connection", exchange.Request{Headers: []exchange.Header{{Name: "Connection", Value: "close"}}}, "h2: header \"Connection\" is set by brk"},
		{"te", exchange.Request{Headers: []exchange.Header{{Name: "TE", Value: "trailers"}}}, "h2: header \"TE\" is connection-specific"},
		{"upgrade", exchange.Request{Headers: []exchange.Header{{Name: "upgrade", Value: "h2c"}}}, "h2: header \"upgrade\" is connection-specific"},
	}
	for _, c := range cases {
		tm, err := NewTemplate(c.req, "http", nil, false)
		if err == nil || !strings.HasPrefix(err.Error(), c.msg) {
			t.Errorf("%s: %v, %v; want an error starting %q", c.name, tm, err, c.msg)
		}
	}
}
