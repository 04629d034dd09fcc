package h1

import (
	"bytes"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/brk-bench/brk/internal/exchange"
)

// splitAt cuts in into pieces at points derived from cuts: each byte of
// cuts is the length of the next piece minus one.
func splitAt(in, cuts []byte) [][]byte {
	var out [][]byte
	for _, c := range cuts {
		if len(in) == 0 {
			break
		}
		n := int(c) + 1
		if n > len(in) {
			n = len(in)
		}
		out = append(out, in[:n])
		in = in[n:]
	}
	if len(in) > 0 {
		out = append(out, in)
	}
	return out
}

func FuzzParse(f *testing.F) {
	for _, c := range parseCases {
		f.Add([]byte(c.in), []byte{0, 3, 7, 1}, c.head)
	}
	f.Add([]byte(smallResp+chunkedResp), []byte{20, 40, 0, 0, 90}, false)
	f.Fuzz(func(t *testing.T, in, cuts []byte, head bool) {
		for _, check := range []bool{false, true} {
			whole := parseStream([][]byte{in}, head, []byte("ok"), check)
			if strings.HasPrefix(whole.Err, "contract") || strings.HasPrefix(whole.Err, "not *Error") {
				t.Fatalf("whole: %v", whole)
			}
			split := parseStream(splitAt(in, cuts), head, []byte("ok"), check)
			if !reflect.DeepEqual(whole, split) {
				t.Fatalf("whole %v != split %v (cuts %v)", whole, split, cuts)
			}
		}
	})
}

// isToken reports whether s is a non-empty token (RFC 9110 §5.6.2), by
// the parser's table.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !tchar[s[i]] {
			return false
		}
	}
	return true
}

// readRequest is a minimal request reader used to check Encode output.
func readRequest(t *testing.T, raw []byte) (method, target string, hdrs []exchange.Header, body []byte) {
	t.Helper()
	end := bytes.Index(raw, []byte("\r\n\r\n"))
	if end < 0 {
		t.Fatalf("no header end in %q", raw)
	}
	lines := strings.Split(string(raw[:end]), "\r\n")
	parts := strings.Split(lines[0], " ")
	if len(parts) != 3 || parts[2] != "HTTP/1.1" {
		t.Fatalf("bad request line %q", lines[0])
	}
	for _, l := range lines[1:] {
		name, value, ok := strings.Cut(l, ":")
		if !ok || !isToken(name) || strings.ContainsAny(value, "\r\n\x00") {
			t.Fatalf("bad header line %q", l)
		}
		hdrs = append(hdrs, exchange.Header{Name: name, Value: strings.Trim(value, " \t")})
	}
	return parts[0], parts[1], hdrs, raw[end+4:]
}

func FuzzEncode(f *testing.F) {
	f.Add("GET", "/", "X-A", "b", []byte(nil), false, false)
	f.Add("", "/p?q=1", "Content-Type", "text/plain", []byte("hi"), true, true)
	f.Add("PUT", "*", "Host", "example.com", []byte{}, true, false)
	f.Add("G T", "x", "a b", "\r\n", []byte{}, false, false)
	f.Fuzz(func(t *testing.T, method, target, name, value string, body []byte, hasBody, close bool) {
		if !hasBody {
			body = nil
		} else if body == nil {
			body = []byte{}
		}
		r := exchange.Request{Method: method, Host: "h:1", Target: target, Headers: []exchange.Header{{Name: name, Value: value}}, Body: body}
		raw, err := Encode(&r, close)
		if err != nil {
			return
		}
		m, tg, hdrs, gotBody := readRequest(t, raw)
		if m != r.EffectiveMethod() {
			t.Fatalf("method %q, want %q", m, r.EffectiveMethod())
		}
		wantTarget := target
		if wantTarget == "" {
			wantTarget = "/"
		}
		if tg != wantTarget {
			t.Fatalf("target %q, want %q", tg, wantTarget)
		}
		if !bytes.Equal(gotBody, body) {
			t.Fatalf("body %q, want %q", gotBody, body)
		}
		get := func(n string) (vs []string) {
			for _, h := range hdrs {
				if strings.EqualFold(h.Name, n) {
					vs = append(vs, h.Value)
				}
			}
			return vs
		}
		val := strings.Trim(value, " \t")
		if got := get(name); len(got) != 1 || got[0] != val {
			t.Fatalf("header %q = %q, want [%q]", name, got, val)
		}
		if hs := get("Host"); len(hs) != 1 || !strings.EqualFold(hdrs[0].Name, "Host") {
			t.Fatalf("Host headers %q, first %q", hs, hdrs[0].Name)
		}
		cl := get("Content-Length")
		if body == nil && cl != nil || body != nil && (len(cl) != 1 || cl[0] != strconv.Itoa(len(body))) {
			t.Fatalf("Content-Length %q for body %q", cl, body)
		}
		if conn := get("Connection"); close != (len(conn) == 1 && conn[0] == "close") {
			t.Fatalf("Connection %q, close=%v", conn, close)
		}
	})
}
