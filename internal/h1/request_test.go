package h1

import (
	"strings"
	"testing"

	"github.com/brk-bench/brk/internal/exchange"
)

func TestEncodeGolden(t *testing.T) {
	cases := []struct {
		name  string
		r     exchange.Request
		close bool
		want  string
	}{
		{"default get", exchange.Request{Host: "127.0.0.1:8080"}, false,
			"GET / HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: brk\r\n\r\n"},
		{"target and headers", exchange.Request{Host: "h", Target: "/plain?x=1", Headers: []exchange.Header{{Name: "Accept", Value: "*/*"}, {Name: "X-Id", Value: " 7\t"}}}, false,
			"GET /plain?x=1 HTTP/1.1\r\nHost: h\r\nUser-Agent: brk\r\nAccept: */*\r\nX-Id: 7\r\n\r\n"},
		{"post body", exchange.Request{Host: "h", Target: "/up", Body: []byte("abc")}, false,
			"POST /up HTTP/1.1\r\nHost: h\r\nUser-Agent: brk\r\nContent-Type: application/octet-stream\r\nContent-Length: 3\r\n\r\nabc"},
		{"empty body", exchange.Request{Method: "PUT", Host: "h", Body: []byte{}}, false,
			"PUT / HTTP/1.1\r\nHost: h\r\nUser-Agent: brk\r\nContent-Type: application/octet-stream\r\nContent-Length: 0\r\n\r\n"},
		{"user content-type", exchange.Request{Host: "h", Body: []byte("{}"), Headers: []exchange.Header{{Name: "content-type", Value: "application/json"}}}, false,
			"POST / HTTP/1.1\r\nHost: h\r\nUser-Agent: brk\r\ncontent-type: application/json\r\nContent-Length: 2\r\n\r\n{}"},
		{"user host", exchange.Request{Host: "h", Headers: []exchange.Header{{Name: "X", Value: "1"}, {Name: "HOST", Value: "example.com"}}}, false,
			"GET / HTTP/1.1\r\nHost: example.com\r\nUser-Agent: brk\r\nX: 1\r\n\r\n"},
		{"user agent", exchange.Request{Host: "h", Headers: []exchange.Header{{Name: "User-Agent", Value: "me"}}}, false,
			"GET / HTTP/1.1\r\nHost: h\r\nUser-Agent: me\r\n\r\n"},
		{"close head", exchange.Request{Method: "HEAD", Host: "h"}, true,
			"HEAD / HTTP/1.1\r\nHost: h\r\nUser-Agent: brk\r\nConnection: close\r\n\r\n"},
		{"options star close body", exchange.Request{Method: "OPTIONS", Host: "h", Target: "*", Body: []byte("x")}, true,
			"OPTIONS * HTTP/1.1\r\nHost: h\r\nUser-Agent: brk\r\nContent-Type: application/octet-stream\r\nContent-Length: 1\r\nConnection: close\r\n\r\nx"},
	}
	for _, c := range cases {
		got, err := Encode(&c.r, c.close)
		if err != nil || string(got) != c.want {
			t.Errorf("%s: got %q, %v; want %q", c.name, got, err, c.want)
		}
	}
}

func TestEncodeErrors(t *testing.T) {
	cases := []struct {
		name string
		r    exchange.Request
		msg  string
	}{
		{"method space", exchange.Request{Method: "G T"}, "invalid method"},
		{"method slash", exchange.Request{Method: "GET/"}, "invalid method"},
		{"target relative", exchange.Request{Target: "plain"}, "invalid request target"},
		{"target absolute", exchange.Request{Target: "http://x/"}, "invalid request target"},
		{"target space", exchange.Request{Target: "/a b"}, "invalid request target"},
		{"target crlf", exchange.Request{Target: "/a\r\nX: y"}, "invalid request target"},
		{"target nul", exchange.Request{Target: "/\x00"}, "invalid request target"},
		{"host crlf", exchange.Request{Host: "h\r\nX: y"}, "invalid value"},
		{"header name space", exchange.Request{Headers: []exchange.Header{{Name: "X Y", Value: "1"}}}, "invalid header name"},
		{"header name colon", exchange.Request{Headers: []exchange.Header{{Name: "X:", Value: "1"}}}, "invalid header name"},
		{"header name empty", exchange.Request{Headers: []exchange.Header{{Name: "", Value: "1"}}}, "invalid header name"},
		{"header value lf", exchange.Request{Headers: []exchange.Header{{Name: "X", Value: "a\nb"}}}, "invalid value"},
		{"header value cr", exchange.Request{Headers: []exchange.Header{{Name: "X", Value: "a\rb"}}}, "invalid value"},
		{"header value nul", exchange.Request{Headers: []exchange.Header{{Name: "X", Value: "a\x00"}}}, "invalid value"},
		{"content-length", exchange.Request{Headers: []exchange.Header{{Name: "content-length", Value: "1"}}}, "set by brk"},
		{"transfer-encoding", exchange.Request{Headers: []exchange.Header{{Name: "Transfer-Encoding", Value: "chunked"}}}, "set by brk"},
		{"connection", exchange.Request{Headers: []exchange.Header{{Name: "Connection", Value: "close"}}}, "set by brk"},
		{"two hosts", exchange.Request{Headers: []exchange.Header{{Name: "Host", Value: "a"}, {Name: "host", Value: "b"}}}, "more than one Host"},
	}
	for _, c := range cases {
		got, err := Encode(&c.r, false)
		if err == nil {
			t.Errorf("%s: got %q, want error", c.name, got)
			continue
		}
		if !strings.Contains(err.Error(), c.msg) || strings.ContainsAny(err.Error(), "\r\n") {
			t.Errorf("%s: error %q, want one line containing %q", c.name, err, c.msg)
		}
	}
}
