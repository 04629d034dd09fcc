package h1

import (
	"strings"
	"testing"
)

func TestEncodeGolden(t *testing.T) {
	cases := []struct {
		name string
		r    Request
		want string
	}{
		{"default get", Request{Host: "127.0.0.1:8080"},
			"GET / HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: brk\r\n\r\n"},
		{"target and headers", Request{Host: "h", Target: "/plain?x=1", Headers: []Header{{"Accept", "*/*"}, {"X-Id", " 7\t"}}},
			"GET /plain?x=1 HTTP/1.1\r\nHost: h\r\nUser-Agent: brk\r\nAccept: */*\r\nX-Id: 7\r\n\r\n"},
		{"post body", Request{Host: "h", Target: "/up", Body: []byte("abc")},
			"POST /up HTTP/1.1\r\nHost: h\r\nUser-Agent: brk\r\nContent-Type: application/octet-stream\r\nContent-Length: 3\r\n\r\nabc"},
		{"empty body", Request{Method: "PUT", Host: "h", Body: []byte{}},
			"PUT / HTTP/1.1\r\nHost: h\r\nUser-Agent: brk\r\nContent-Type: application/octet-stream\r\nContent-Length: 0\r\n\r\n"},
		{"user content-type", Request{Host: "h", Body: []byte("{}"), Headers: []Header{{"content-type", "application/json"}}},
			"POST / HTTP/1.1\r\nHost: h\r\nUser-Agent: brk\r\ncontent-type: application/json\r\nContent-Length: 2\r\n\r\n{}"},
		{"user host", Request{Host: "h", Headers: []Header{{"X", "1"}, {"HOST", "example.com"}}},
			"GET / HTTP/1.1\r\nHost: example.com\r\nUser-Agent: brk\r\nX: 1\r\n\r\n"},
		{"user agent", Request{Host: "h", Headers: []Header{{"User-Agent", "me"}}},
			"GET / HTTP/1.1\r\nHost: h\r\nUser-Agent: me\r\n\r\n"},
		{"close head", Request{Method: "HEAD", Host: "h", Close: true},
			"HEAD / HTTP/1.1\r\nHost: h\r\nUser-Agent: brk\r\nConnection: close\r\n\r\n"},
		{"options star close body", Request{Method: "OPTIONS", Host: "h", Target: "*", Body: []byte("x"), Close: true},
			"OPTIONS * HTTP/1.1\r\nHost: h\r\nUser-Agent: brk\r\nContent-Type: application/octet-stream\r\nContent-Length: 1\r\nConnection: close\r\n\r\nx"},
	}
	for _, c := range cases {
		got, err := c.r.Encode()
		if err != nil || string(got) != c.want {
			t.Errorf("%s: got %q, %v; want %q", c.name, got, err, c.want)
		}
	}
}

func TestEncodeErrors(t *testing.T) {
	cases := []struct {
		name string
		r    Request
		msg  string
	}{
		{"method space", Request{Method: "G T"}, "invalid method"},
		{"method slash", Request{Method: "GET/"}, "invalid method"},
		{"target relative", Request{Target: "plain"}, "invalid request target"},
		{"target absolute", Request{Target: "http://x/"}, "invalid request target"},
		{"target space", Request{Target: "/a b"}, "invalid request target"},
		{"target crlf", Request{Target: "/a\r\nX: y"}, "invalid request target"},
		{"target nul", Request{Target: "/\x00"}, "invalid request target"},
		{"host crlf", Request{Host: "h\r\nX: y"}, "invalid value"},
		{"header name space", Request{Headers: []Header{{"X Y", "1"}}}, "invalid header name"},
		{"header name colon", Request{Headers: []Header{{"X:", "1"}}}, "invalid header name"},
		{"header name empty", Request{Headers: []Header{{"", "1"}}}, "invalid header name"},
		{"header value lf", Request{Headers: []Header{{"X", "a\nb"}}}, "invalid value"},
		{"header value cr", Request{Headers: []Header{{"X", "a\rb"}}}, "invalid value"},
		{"header value nul", Request{Headers: []Header{{"X", "a\x00"}}}, "invalid value"},
		{"content-length", Request{Headers: []Header{{"content-length", "1"}}}, "set by brk"},
		{"transfer-encoding", Request{Headers: []Header{{"Transfer-Encoding", "chunked"}}}, "set by brk"},
		{"connection", Request{Headers: []Header{{"Connection", "close"}}}, "set by brk"},
		{"two hosts", Request{Headers: []Header{{"Host", "a"}, {"host", "b"}}}, "more than one Host"},
	}
	for _, c := range cases {
		got, err := c.r.Encode()
		if err == nil {
			t.Errorf("%s: got %q, want error", c.name, got)
			continue
		}
		if !strings.Contains(err.Error(), c.msg) || strings.ContainsAny(err.Error(), "\r\n") {
			t.Errorf("%s: error %q, want one line containing %q", c.name, err, c.msg)
		}
	}
}

func TestEffectiveMethod(t *testing.T) {
	for _, c := range []struct {
		r    Request
		want string
		head bool
	}{
		{Request{}, "GET", false},
		{Request{Body: []byte{}}, "POST", false},
		{Request{Method: "HEAD"}, "HEAD", true},
		{Request{Method: "head"}, "head", false}, // methods are case-sensitive (RFC 9110 §9.1)
	} {
		if got := c.r.EffectiveMethod(); got != c.want || c.r.IsHead() != c.head {
			t.Errorf("%+v: got %q head=%v", c.r, got, c.r.IsHead())
		}
	}
}

func TestParseHeader(t *testing.T) {
	good := []struct {
		in   string
		want Header
	}{
		{"X-A: b", Header{"X-A", "b"}},
		{"X-A:b", Header{"X-A", "b"}},
		{"X-A:  b c \t", Header{"X-A", "b c"}},
		{"X-A:", Header{"X-A", ""}},
		{"Authorization: Bearer a:b", Header{"Authorization", "Bearer a:b"}},
	}
	for _, c := range good {
		got, err := ParseHeader(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseHeader(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{"", "X-A", "X A: b", " X: b", "X : b", ": b", "X: a\r\nY: b", "X: \x00"} {
		if h, err := ParseHeader(in); err == nil {
			t.Errorf("ParseHeader(%q) = %+v, want error", in, h)
		}
	}
}
