package targets

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

// files is a body file system for parse: path → content.
type files map[string]string

func (f files) read(path string) ([]byte, error) {
	s, ok := f[path]
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
	}
	return []byte(s), nil
}

var testFiles = files{
	"d/order.json": `{"id":1}`,
	"d/empty":      "",
	"/abs/b.txt":   "abs",
	"d/big":        strings.Repeat("x", MaxBodyBytes+1),
}

// acceptCases are files parse accepts, with what it reads from them.
var acceptCases = []struct {
	name string
	in   string
	want []Target
}{
	{name: "one GET", in: "GET http://127.0.0.1:8080/\n",
		want: []Target{{Method: "GET", URL: "http://127.0.0.1:8080/", Weight: 1, Line: 1}}},
	{name: "no final newline, CRLF, BOM", in: "\xef\xbb\xbfGET http://h/a\r\nX-A: 1\r\n\r\nHEAD http://h/b",
		want: []Target{
			{Method: "GET", URL: "http://h/a", Header: [][2]string{{"X-A", "1"}}, Weight: 1, Line: 1},
			{Method: "HEAD", URL: "http://h/b", Weight: 1, Line: 4},
		}},
	{name: "headers in order, case kept, values trimmed", in: "POST http://h/o\nx-b:  2 \nX-A:1\nx-b: 3\nHost: other\n",
		want: []Target{{Method: "POST", URL: "http://h/o", Header: [][2]string{{"x-b", "2"}, {"X-A", "1"}, {"x-b", "3"}, {"Host", "other"}}, Weight: 1, Line: 1}}},
	{name: "value with colons and tabs", in: "GET http://h/\nX-T: a:b\tc\n",
		want: []Target{{Method: "GET", URL: "http://h/", Header: [][2]string{{"X-T", "a:b\tc"}}, Weight: 1, Line: 1}}},
	{name: "body relative to dir", in: "POST http://h/o\nContent-Type: application/json\n@order.json\n",
		want: []Target{{Method: "POST", URL: "http://h/o", Header: [][2]string{{"Content-Type", "application/json"}}, Body: []byte(`{"id":1}`), BodyFile: "d/order.json", Weight: 1, Line: 1}}},
	{name: "empty body is not nil", in: "PUT http://h/o\n@ empty\n",
		want: []Target{{Method: "PUT", URL: "http://h/o", Body: []byte{}, BodyFile: "d/empty", Weight: 1, Line: 1}}},
	{name: "absolute body path", in: "PATCH http://h/o\n@/abs/b.txt\n",
		want: []Target{{Method: "PATCH", URL: "http://h/o", Body: []byte("abs"), BodyFile: "/abs/b.txt", Weight: 1, Line: 1}}},
	{name: "request lines without blank lines between", in: "GET http://h/a\nDELETE http://h/b\nOPTIONS http://h/c\n",
		want: []Target{
			{Method: "GET", URL: "http://h/a", Weight: 1, Line: 1},
			{Method: "DELETE", URL: "http://h/b", Weight: 1, Line: 2},
			{Method: "OPTIONS", URL: "http://h/c", Weight: 1, Line: 3},
		}},
	{name: "request line after a body line", in: "POST http://h/a\n@order.json\nGET http://h/b\n",
		want: []Target{
			{Method: "POST", URL: "http://h/a", Body: []byte(`{"id":1}`), BodyFile: "d/order.json", Weight: 1, Line: 1},
			{Method: "GET", URL: "http://h/b", Weight: 1, Line: 3},
		}},
	{name: "directives and comments", in: "# a mix\n\n# weight 2\n# note\n#expect-status 200, 204\nGET http://h/a\n# a comment inside\nX-A: 1\n\n#   WEIGHT\t7\nGET http://h/b\n",
		want: []Target{
			{Method: "GET", URL: "http://h/a", Header: [][2]string{{"X-A", "1"}}, Weight: 2, ExpectStatus: []int{200, 204}, Line: 6},
			{Method: "GET", URL: "http://h/b", Weight: 7, Line: 11},
		}},
	{name: "a directive ends the open target", in: "GET http://h/a\nX-A: 1\n# weight 3\nGET http://h/b\n",
		want: []Target{
			{Method: "GET", URL: "http://h/a", Header: [][2]string{{"X-A", "1"}}, Weight: 1, Line: 1},
			{Method: "GET", URL: "http://h/b", Weight: 3, Line: 4},
		}},
	{name: "weights at the bounds", in: "# weight 1\nGET http://h/a\n# weight 1000\nGET http://h/b\n# expect-status 100,599\nGET http://h/c\n",
		want: []Target{
			{Method: "GET", URL: "http://h/a", Weight: 1, Line: 2},
			{Method: "GET", URL: "http://h/b", Weight: 1000, Line: 4},
			{Method: "GET", URL: "http://h/c", Weight: 1, ExpectStatus: []int{100, 599}, Line: 6},
		}},
	{name: "same origin: default port, host case", in: "GET http://H:80/a\nGET http://h/b\n",
		want: []Target{
			{Method: "GET", URL: "http://H:80/a", Weight: 1, Line: 1},
			{Method: "GET", URL: "http://h/b", Weight: 1, Line: 2},
		}},
	{name: "https and IPv6", in: "GET https://[::1]/a\nGET https://[::1]:443/b?q=1\n",
		want: []Target{
			{Method: "GET", URL: "https://[::1]/a", Weight: 1, Line: 1},
			{Method: "GET", URL: "https://[::1]:443/b?q=1", Weight: 1, Line: 2},
		}},
	{name: "tabs between method and URL", in: "GET\thttp://h/\n",
		want: []Target{{Method: "GET", URL: "http://h/", Weight: 1, Line: 1}}},
}

func TestParseTargets(t *testing.T) {
	for _, c := range acceptCases {
		t.Run(c.name, func(t *testing.T) {
			got, err := parse([]byte(c.in), "targets.txt", "d", testFiles.read)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got  %#v\nwant %#v", got, c.want)
			}
		})
	}
}

// refuseCases are files parse refuses, with the line and a substring of
// the message.
var refuseCases = []struct {
	name string
	in   string
	line int
	msg  string
}{
	{name: "empty file", in: "", line: 1, msg: "no targets"},
	{name: "comments only", in: "# one\n# two\n\n", line: 3, msg: "no targets"},
	{name: "one word", in: "\nfoo\n", line: 2, msg: `"foo" is not a target line`},
	{name: "method only", in: "GET\n", line: 1, msg: "is not a target line"},
	{name: "three words", in: "GET http://h/a b\n", line: 1, msg: "has 3 words"},
	{name: "protocol version", in: "GET http://h/ HTTP/1.1\n", line: 1, msg: "write GET http://h/"},
	{name: "lowercase method", in: "get http://h/\n", line: 1, msg: `method "get" must be uppercase`},
	{name: "mixed-case method", in: "Post http://h/\n", line: 1, msg: "write POST"},
	{name: "unknown method", in: "GETT http://h/\n", line: 1, msg: `unknown method "GETT"`},
	{name: "CONNECT", in: "CONNECT http://h/\n", line: 1, msg: "CONNECT is not supported"},
	{name: "TRACE", in: "\n\nTRACE http://h/\n", line: 3, msg: "TRACE is not supported"},
	{name: "URL without a method", in: "http://h/\n", line: 1, msg: "a URL without a method"},
	{name: "relative URL", in: "GET /a\n", line: 1, msg: "is a path"},
	{name: "no scheme", in: "GET h:80/a\n", line: 1, msg: "has no scheme"},
	{name: "other scheme", in: "GET ftp://h/\n", line: 1, msg: "scheme must be http or https"},
	{name: "no host", in: "GET http:///a\n", line: 1, msg: "has no host"},
	{name: "credentials", in: "GET http://u:p@h/\n", line: 1, msg: "credentials"},
	{name: "fragment", in: "GET http://h/#x\n", line: 1, msg: "fragment"},
	{name: "port 0", in: "GET http://h:0/\n", line: 1, msg: "not 1..65535"},
	{name: "port too big", in: "GET http://h:65536/\n", line: 1, msg: "not 1..65535"},
	{name: "empty port", in: "GET http://h:/\n", line: 1, msg: "empty port"},
	{name: "bad URL", in: "GET http://h%zz/\n", line: 1, msg: `URL "http://h%zz/"`},
	{name: "control byte in URL", in: "GET http://h/\x01\n", line: 1, msg: "control, space or non-ASCII"},
	{name: "non-ASCII URL", in: "GET http://h/é\n", line: 1, msg: "percent-encode"},
	{name: "other host", in: "GET http://h/a\n\nGET http://g/b\n", line: 3, msg: "is on origin http://g:80 but the first target (line 1) is on http://h:80"},
	{name: "other port", in: "GET http://h/a\nGET http://h:81/b\n", line: 2, msg: "origin"},
	{name: "other scheme, same port", in: "GET http://h:443/a\nGET https://h/b\n", line: 2, msg: "origin"},
	{name: "too many targets", in: strings.Repeat("GET http://h/\n", MaxTargets+1), line: MaxTargets + 1, msg: "more than 64 targets"},
	{name: "header first", in: "X-A: 1\nGET http://h/\n", line: 1, msg: "header line with no request line before it"},
	{name: "vegeta JSON", in: `{"method":"GET","url":"http://h/","header":{"X-A":["1"]}}` + "\n", line: 1, msg: "this is vegeta's JSON target format (one JSON object a line), which brk does not read: write its HTTP format instead"},
	{name: "header after blank line", in: "GET http://h/\n\nX-A: 1\n", line: 3, msg: "no request line before it"},
	{name: "header after body", in: "POST http://h/\n@order.json\nX-A: 1\n", line: 3, msg: "after the body line (line 2)"},
	{name: "header without value", in: "GET http://h/\nX-A:\n", line: 2, msg: "has no value"},
	{name: "header without name", in: "GET http://h/\n: v\n", line: 2, msg: "without a name"},
	{name: "space before colon", in: "GET http://h/\nX-A : v\n", line: 2, msg: "whitespace before its colon"},
	{name: "bad name", in: "GET http://h/\nX(A): v\n", line: 2, msg: `header name "X(A)"`},
	{name: "control in value", in: "GET http://h/\nX-A: a\rb\n", line: 2, msg: "control byte 0x0d"},
	{name: "NUL in value", in: "GET http://h/\nX-A: a\x00b\n", line: 2, msg: "control byte 0x00"},
	{name: "DEL in value", in: "GET http://h/\nX-A: a\x7fb\n", line: 2, msg: "control byte 0x7f"},
	{name: "Content-Length", in: "GET http://h/\ncontent-length: 3\n", line: 2, msg: "set by brk"},
	{name: "Transfer-Encoding", in: "GET http://h/\nTransfer-Encoding: chunked\n", line: 2, msg: "set by brk"},
	{name: "Connection", in: "GET http://h/\nConnection: close\n", line: 2, msg: "set by brk"},
	{name: "two Host headers", in: "GET http://h/\nHost: a\nhost: b\n", line: 3, msg: "second Host header (the first is at line 2)"},
	{name: "body first", in: "@order.json\n", line: 1, msg: "body line with no request line"},
	{name: "two bodies", in: "POST http://h/\n@order.json\n@empty\n", line: 3, msg: "second body line (the first is at line 2)"},
	{name: "body without path", in: "POST http://h/\n@\n", line: 2, msg: "without a path"},
	{name: "missing body file", in: "POST http://h/\n@nope.json\n", line: 2, msg: `body file "nope.json" (d/nope.json) does not exist`},
	{name: "body too big", in: "POST http://h/\n@big\n", line: 2, msg: "larger than 16 MiB"},
	{name: "weight 0", in: "# weight 0\nGET http://h/\n", line: 1, msg: "weight 0 is out of range"},
	{name: "weight 1001", in: "# weight 1001\nGET http://h/\n", line: 1, msg: "weight 1001 is out of range"},
	{name: "weight huge", in: "# weight 99999999999999999999\nGET http://h/\n", line: 1, msg: "out of range"},
	{name: "weight negative", in: "# weight -1\nGET http://h/\n", line: 1, msg: "not a whole number"},
	{name: "weight fraction", in: "# weight 1.5\nGET http://h/\n", line: 1, msg: "not a whole number"},
	{name: "weight two numbers", in: "# weight 1 2\nGET http://h/\n", line: 1, msg: "not a whole number"},
	{name: "weight missing", in: "# weight\nGET http://h/\n", line: 1, msg: "without a weight"},
	{name: "weight with colon", in: "# weight: 2\nGET http://h/\n", line: 1, msg: "without a colon: # weight 2"},
	{name: "two weights", in: "# weight 2\n# weight 3\nGET http://h/\n", line: 2, msg: "second weight directive"},
	{name: "status 99", in: "# expect-status 99\nGET http://h/\n", line: 1, msg: "not a status code"},
	{name: "status 600", in: "# expect-status 200,600\nGET http://h/\n", line: 1, msg: "status 600 is out of range"},
	{name: "status empty entry", in: "# expect-status 200,\nGET http://h/\n", line: 1, msg: "empty entry"},
	{name: "status word", in: "# expect-status ok\nGET http://h/\n", line: 1, msg: `entry "ok"`},
	{name: "status missing", in: "# expect-status\nGET http://h/\n", line: 1, msg: "without a status code"},
	{name: "two expect-status", in: "# expect-status 200\n# expect-status 201\nGET http://h/\n", line: 2, msg: "second expect-status"},
	{name: "directive at the end", in: "GET http://h/\n\n# weight 2\n# a comment\n", line: 3, msg: "no target after it"},
	{name: "file too big", in: strings.Repeat("\n", MaxFileBytes+1), line: MaxFileBytes + 1, msg: "larger than 4 MiB"},
}

func TestParseRefuses(t *testing.T) {
	for _, c := range refuseCases {
		t.Run(c.name, func(t *testing.T) {
			_, err := parse([]byte(c.in), "targets.txt", "d", testFiles.read)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("parse: %v, want an *Error", err)
			}
			if e.File != "targets.txt" || e.Line != c.line || !strings.Contains(e.Msg, c.msg) {
				t.Fatalf("got %q (line %d), want line %d and %q", err, e.Line, c.line, c.msg)
			}
			if want := "targets.txt:" + itoa(c.line) + ": "; !strings.HasPrefix(err.Error(), want) {
				t.Fatalf("%q does not start with %q", err, want)
			}
		})
	}
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// TestParseFiles reads body files from the file system, relative to dir.
func TestParseFiles(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "b.bin"), []byte("a\x00b\r\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	got, err := Parse(strings.NewReader("POST http://h/\n@b.bin\n"), "t.txt", dir)
	if err != nil {
		t.Fatal(err)
	}
	if string(got[0].Body) != "a\x00b\r\n" || got[0].BodyFile != filepath.Join(dir, "b.bin") {
		t.Fatalf("body %q from %q", got[0].Body, got[0].BodyFile)
	}
	for in, msg := range map[string]string{
		"POST http://h/\n@missing\n": "does not exist",
		"POST http://h/\n@sub\n":     "cannot be read: is a directory",
	} {
		_, err := Parse(strings.NewReader(in), "t.txt", dir)
		if err == nil || !strings.HasPrefix(err.Error(), "t.txt:2: ") || !strings.Contains(err.Error(), msg) {
			t.Errorf("Parse(%q) = %v, want t.txt:2: …%s", in, err, msg)
		}
	}
	if _, err := Parse(strings.NewReader(""), "", dir); err == nil || err.Error() != `targets:1: no targets: a targets file needs at least one request line such as "GET http://127.0.0.1:8080/path"` {
		t.Errorf("empty, unnamed: %v", err)
	}
}

// TestParseTargetsMax accepts exactly MaxTargets targets.
func TestParseTargetsMax(t *testing.T) {
	got, err := parse([]byte(strings.Repeat("GET http://h/\n", MaxTargets)), "t", "", testFiles.read)
	if err != nil || len(got) != MaxTargets {
		t.Fatalf("%d targets, %v", len(got), err)
	}
}

// TestParseReader: Parse over a reader that returns one byte at a time
// reads what parse reads from the whole bytes.
func TestParseReader(t *testing.T) {
	for _, c := range acceptCases {
		if strings.Contains(c.in, "@") {
			continue // body files come from testFiles, not the file system
		}
		got, err := Parse(iotest.OneByteReader(strings.NewReader(c.in)), "targets.txt", "d")
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %#v, %v", c.name, got, err)
		}
	}
	_, err := Parse(iotest.ErrReader(errors.New("boom")), "targets.txt", "")
	if err == nil || err.Error() != "targets.txt:1: cannot read the targets file: boom" {
		t.Errorf("read error: %v", err)
	}
}
