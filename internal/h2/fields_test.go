package h2

import (
	"reflect"
	"strings"
	"testing"

	"golang.org/x/net/http2"

	"github.com/brk-bench/brk/internal/exchange"
)

// lit is an HPACK literal field without indexing, with a new name (RFC
// 7541 §6.2.2), for names and values under 128 bytes.
func lit(name, value string) []byte {
	b := []byte{0x00, byte(len(name))}
	b = append(b, name...)
	b = append(b, byte(len(value)))
	return append(b, value...)
}

func TestFieldFault(t *testing.T) {
	for _, c := range []struct{ name, value, want string }{
		{"content-length", "2", ""},
		{"x-ok", "a b", ""},
		{"te", "trailers", ""},
		{"Content-Length", "2", "upper-case name"},
		{"x-Y", "1", "upper-case name"},
		{"x y", "1", "invalid character"},
		{"x:y", "1", "invalid character"},
		{"x\x7f", "1", "invalid character"},
		{"x\xc3\xa9", "1", "invalid character"},
		{"", "1", "empty name"},
		{"x", "a\rb", "NUL, CR or LF"},
		{"x", "a\nb", "NUL, CR or LF"},
		{"x", "a\x00b", "NUL, CR or LF"},
		{"x", " a", "whitespace"},
		{"x", "a\t", "whitespace"},
		{"connection", "keep-alive", "connection-specific"},
		{"keep-alive", "timeout=5", "connection-specific"},
		{"proxy-connection", "keep-alive", "connection-specific"},
		{"transfer-encoding", "chunked", "connection-specific"},
		{"upgrade", "h2c", "connection-specific"},
		{"te", "gzip", "te other than trailers"},
	} {
		if got := fieldFault(c.name, c.value); c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("fieldFault(%q, %q) = %q, want %q", c.name, c.value, got, c.want)
		}
	}
}

// A response with a malformed field is a protocol fault (RFC 9113 §8.1.1:
// the client must not accept it), in its headers or its trailers, however
// its bytes are cut.
func TestParseMalformedFields(t *testing.T) {
	ok := []exchange.Completion{{Token: 0, Status: 200, BodyOK: true}}
	for _, c := range []struct {
		name     string
		block    []byte
		trailers bool
		want     []exchange.Completion
		err      string
	}{
		{"lower-case content-length", append([]byte{0x88}, lit("content-length", "0")...), false, ok, ""},
		{"te: trailers", append([]byte{0x88}, lit("te", "trailers")...), false, ok, ""},
		{"upper-case Content-Length", append([]byte{0x88}, lit("Content-Length", "0")...), false, nil, `field "Content-Length" has an upper-case name`},
		{"connection: keep-alive", append([]byte{0x88}, lit("connection", "keep-alive")...), false, nil, `field "connection" is connection-specific`},
		{"keep-alive", append([]byte{0x88}, lit("keep-alive", "timeout=5")...), false, nil, "connection-specific"},
		{"proxy-connection", append([]byte{0x88}, lit("proxy-connection", "close")...), false, nil, "connection-specific"},
		{"transfer-encoding", append([]byte{0x88}, lit("transfer-encoding", "chunked")...), false, nil, "connection-specific"},
		{"upgrade", append([]byte{0x88}, lit("upgrade", "websocket")...), false, nil, "connection-specific"},
		{"te: gzip", append([]byte{0x88}, lit("te", "gzip")...), false, nil, "te other than trailers"},
		{"CR in a value", append([]byte{0x88}, lit("x", "a\rb")...), false, nil, "CR or LF"},
		{"upper case in trailers", lit("X-Trailer", "1"), true, nil, "upper-case name"},
		{"connection in trailers", lit("connection", "close"), true, nil, "connection-specific"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFrames()
			if c.trailers {
				f.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block200, EndHeaders: true})
				f.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: c.block, EndHeaders: true, EndStream: true})
			} else {
				f.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: c.block, EndHeaders: true, EndStream: true})
			}
			in := f.Bytes()
			every := make([]int, 0, len(in))
			for i := 1; i < len(in); i++ {
				every = append(every, i)
			}
			for _, cuts := range [][]int{nil, every} {
				got, err := parseAll(t, 1, in, cuts)
				if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), "PROTOCOL_ERROR")) {
					t.Fatalf("cuts %d: err %v, want %q", len(cuts), err, c.err)
				}
				if !reflect.DeepEqual(got, c.want) {
					t.Fatalf("cuts %d: completions %+v, want %+v", len(cuts), got, c.want)
				}
			}
		})
	}
}
