package h1

import (
	"strings"
	"testing"

	"github.com/brk-bench/brk/proto"
)

func TestEncodeGolden(t *testing.T) {
	cases := []struct {
		name  string
		r     proto.Request
		close bool
		want  string
	}{
		{"default get", proto.Request{Host: "127.0.0.1:8080"}, false,
			"GET / HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: brk\r\n\r\n"},
		{"target and headers", proto.Request{Host: "h", Target: "/plain?x=1", Headers: []proto.Header{{Name: "Accept", Value: "*/*"}, {Name: "X-Id", Value: " 7\t"}}}, false,
			"GET /plain?x=1 HTTP/1.1\r\nHost: h\r\nUser-Agent: brk\r\nAccept: */*\r\nX-Id: 7\r\n\r\n"},
		{"post body", proto.Request{Host: "h", Target: "/up", Body: []byte("abc")}, false,
			"POST /up HTTP/1.1\r\nHost: h\r\nUser-Agent: brk\r\nContent-Type: application/octet-stream\r\nContent-Length: 3\r\n\r\nabc"},
		{"empty body", proto.Request{Method: "PUT", Host: "h", Body: []byte{}}, false,
			"PUT / HTTP/1.1\r\nHost: h\r\nUser-Agent: brk\r\nContent-Type: application/octet-stream\r\nContent-Length: 0\r\n\r\n"},
		{"user content-type", proto.Request{Host: "h", Body: []byte("{}"), Headers: []proto.Header{{Name: "content-type", Value: "application/json"}}}, false,
			"POST / HTTP/1.1\r\nHost: h\r\nUser-Agent: brk\r\ncontent-type: application/json\r\nContent-Length: 2\r\n\r\n{}"},
		{"user host", proto.Request{Host: "h", Headers: []proto.Header{{Name: "X", Value: "1"}, {Name: "HOST", Value: "example.com"}}}, false,
			"GET / HTTP/1.1\r\nHost: example.com\r\nUser-Agent: brk\r\nX: 1\r\n\r\n"},
		{"user agent", proto.Request{Host: "h", Headers: []proto.Header{{Name: "User-Agent", Value: "me"}}}, false,
			"GET / HTTP/1.1\r\nHost: h\r\nUser-Agent: me\r\n\r\n"},
		{"close head", proto.Request{Method: "HEAD", Host: "h"}, true,
			"HEAD / HTTP/1.1\r\nHost: h\r\nUser-Agent: brk\r\nConnection: close\r\n\r\n"},
		{"options star close body", proto.Request{Method: "OPTIONS", Host: "h", Target: "*", Body: []byte("x")}, true,
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
		r    proto.Request
		msg  string
	}{
		{"method space", proto.Request{Method: "G T"}, "invalid method"},
		{"method slash", proto.Request{Method: "GET/"}, "invalid method"},
		{"target relative", proto.Request{Target: "plain"}, "invalid request target"},
		{"target absolute", proto.Request{Target: "http://x/"}, "invalid request target"},
		{"target space", proto.Request{Target: "/a b"}, "invalid request target"},
		{"target crlf", proto.Request{Target: "/a\r\nX: y"}, "invalid request target"},
		{"target nul", proto.Request{Target: "/\x00"}, "invalid request target"},
		{"host crlf", proto.Request{Host: "h\r\nX: y"}, "invalid value"},
		{"header name space", proto.Request{Headers: []proto.Header{{Name: "X Y", Value: "1"}}}, "invalid header name"},
		{"header name colon", proto.Request{Headers: []proto.Header{{Name: "X:", Value: "1"}}}, "invalid header name"},
		{"header name empty", proto.Request{Headers: []proto.Header{{Name: "", Value: "1"}}}, "invalid header name"},
		{"header value lf", proto.Request{Headers: []proto.Header{{Name: "X", Value: "a\nb"}}}, "invalid value"},
		{"header value cr", proto.Request{Headers: []proto.Header{{Name: "X", Value: "a\rb"}}}, "invalid value"},
		{"header value nul", proto.Request{Headers: []proto.Header{{Name: "X", Value: "a\x00"}}}, "invalid value"},
		{"content-length", proto.Request{Headers: []proto.Header{{Name: "content-length", Value: "1"}}}, "set by brk"},
		{"transfer-encoding", proto.Request{Headers: []proto.Header{{Name: "Transfer-Encoding", Value: "chunked"}}}, "set by brk"},
		{"connection", proto.Request{Headers: []proto.Header{{Name: "Connection", Value: "close"}}}, "set by brk"},
		{"two hosts", proto.Request{Headers: []proto.Header{{Name: "Host", Value: "a"}, {Name: "host", Value: "b"}}}, "more than one Host"},
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
