package targets

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// example is the request line error messages suggest.
const example = `"GET http://127.0.0.1:8080/path"`

// state is where the parser is between lines.
type state int

const (
	between   state = iota // no target open
	inHeaders              // after a request line: headers or the body line may follow
	afterBody              // after the body line: the target is complete
)

// directive is a pending directive line for the next target.
type directive struct {
	line   int // 0: none
	weight int
	codes  []int
}

// parser holds the state of one parse.
type parser struct {
	name    string
	dir     string
	read    func(path string) ([]byte, error)
	out     []Target
	st      state
	origin  string
	hostAt  int // line of the open target's Host header, 0: none
	bodyAt  int // line of the open target's body line
	weight  directive
	expect  directive
	lineNum int
}

// parse is Parse over the bytes of the file; read reads a body file.
func parse(src []byte, name, dir string, read func(path string) ([]byte, error)) ([]Target, error) {
	p := &parser{name: fileName(name), dir: dir, read: read}
	if len(src) > MaxFileBytes {
		return nil, p.errAt(bytes.Count(src[:MaxFileBytes], []byte{'\n'})+1,
			"the targets file is larger than %d MiB: a mix holds at most %d targets", MaxFileBytes>>20, MaxTargets)
	}
	src = bytes.TrimPrefix(src, []byte("\xef\xbb\xbf")) // a UTF-8 byte order mark
	lines := bytes.Split(src, []byte{'\n'})
	if len(lines) > 1 && len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1] // the file's final newline
	}
	for i, raw := range lines {
		p.lineNum = i + 1
		if err := p.line(trimSpace(string(raw))); err != nil {
			return nil, err
		}
	}
	for _, d := range []directive{p.weight, p.expect} {
		if d.line != 0 {
			return nil, p.errAt(d.line, "this directive has no target after it: put it right before a request line such as %s, or remove it", example)
		}
	}
	if len(p.out) == 0 {
		return nil, p.errAt(len(lines), "no targets: a targets file needs at least one request line such as %s", example)
	}
	return p.out, nil
}

func (p *parser) errAt(line int, format string, args ...any) error {
	return &Error{File: p.name, Line: line, Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) errf(format string, args ...any) error { return p.errAt(p.lineNum, format, args...) }

// line handles one line, trimmed.
func (p *parser) line(s string) error {
	switch {
	case s == "":
		p.st = between
		return nil
	case s[0] == '#':
		return p.comment(s)
	case s[0] == '@':
		return p.body(s)
	case s[0] == '{' && p.st == between:
		return p.errf("this is vegeta's JSON target format (one JSON object a line), which brk does not read: write its HTTP format instead, a request line such as %s, then header lines, then @body (docs/targets.md)", example)
	}
	colon := strings.IndexByte(s, ':')
	ws := strings.IndexAny(s, " \t")
	switch {
	case colon >= 0 && (ws < 0 || colon < ws) && strings.HasPrefix(s[colon:], "://"):
		return p.errf("%q is a URL without a method: write a request line such as GET %s", s, s)
	case colon >= 0 && (ws < 0 || colon < ws):
		return p.header(s[:colon], s[colon+1:])
	case colon >= 0 && trimSpace(s[ws:colon]) == "":
		return p.errf("header %q has whitespace before its colon, which HTTP forbids (RFC 9112 §5.1): write %q", s, s[:ws]+":"+s[colon+1:])
	}
	return p.request(s)
}

// comment handles a "#" line: a directive, or a comment.
func (p *parser) comment(s string) error {
	rest := trimSpace(s[1:])
	word, args, _ := strings.Cut(rest, " ")
	if i := strings.IndexByte(word, '\t'); i >= 0 {
		word, args = word[:i], word[i+1:]+" "+args
	}
	args = trimSpace(args)
	kw := strings.ToLower(word)
	switch {
	case kw == "weight":
		if p.weight.line != 0 {
			return p.errf("a second weight directive for the same target (the first is at line %d): keep one", p.weight.line)
		}
		w, err := parseWeight(args)
		if err != nil {
			return p.errf("%v", err)
		}
		p.st = between
		p.weight = directive{line: p.lineNum, weight: w}
	case kw == "expect-status":
		if p.expect.line != 0 {
			return p.errf("a second expect-status directive for the same target (the first is at line %d): keep one", p.expect.line)
		}
		codes, err := parseCodes(args)
		if err != nil {
			return p.errf("%v", err)
		}
		p.st = between
		p.expect = directive{line: p.lineNum, codes: codes}
	case kw == "weight:" || kw == "expect-status:":
		return p.errf("write the directive without a colon: # %s %s", strings.TrimSuffix(kw, ":"), args)
	}
	return nil // a comment; it leaves the open target open
}

// parseWeight parses a weight directive's argument.
func parseWeight(args string) (int, error) {
	const want = "write # weight N with a whole number N from 1 to 1000"
	if args == "" {
		return 0, fmt.Errorf("weight directive without a weight: %s", want)
	}
	if !allDigits(args) {
		return 0, fmt.Errorf("weight %q is not a whole number: %s (a comment cannot start with the word weight)", args, want)
	}
	if len(args) > 4 {
		return 0, fmt.Errorf("weight %s is out of range: %s", args, want)
	}
	w, _ := strconv.Atoi(args)
	if w < 1 || w > MaxWeight {
		return 0, fmt.Errorf("weight %d is out of range: %s", w, want)
	}
	return w, nil
}

// parseCodes parses an expect-status directive's argument, "C[,C…]".
func parseCodes(args string) ([]int, error) {
	const want = "write # expect-status C[,C…] with status codes from 100 to 599, e.g. # expect-status 200,204"
	if args == "" {
		return nil, fmt.Errorf("expect-status directive without a status code: %s", want)
	}
	var codes []int
	for c := range strings.SplitSeq(args, ",") {
		c = trimSpace(c)
		if c == "" {
			return nil, fmt.Errorf("expect-status %q has an empty entry: %s", args, want)
		}
		if !allDigits(c) || len(c) != 3 {
			return nil, fmt.Errorf("expect-status entry %q is not a status code: %s", c, want)
		}
		n, _ := strconv.Atoi(c)
		if n < 100 || n > 599 {
			return nil, fmt.Errorf("status %d is out of range: %s", n, want)
		}
		codes = append(codes, n)
	}
	return codes, nil
}

// body handles an "@path" line.
func (p *parser) body(s string) error {
	switch p.st {
	case between:
		return p.errf("body line with no request line before it: a target starts with a request line such as %s", example)
	case afterBody:
		return p.errf("a second body line (the first is at line %d): a target has at most one body", p.bodyAt)
	}
	rel := trimSpace(s[1:])
	if rel == "" {
		return p.errf("body line without a path: write @FILE, relative to the targets file's directory")
	}
	path := bodyPath(p.dir, rel)
	b, err := p.read(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return p.errf("body file %s does not exist (a body path is relative to the targets file's directory): fix the path", quotePath(rel, path))
	case err != nil:
		return p.errf("body file %s cannot be read: %v", quotePath(rel, path), unwrapPath(err))
	case len(b) > MaxBodyBytes:
		return p.errf("body file %s is larger than %d MiB: use a smaller body", quotePath(rel, path), MaxBodyBytes>>20)
	}
	if b == nil {
		b = []byte{}
	}
	t := &p.out[len(p.out)-1]
	t.Body, t.BodyFile = b, path
	p.st, p.bodyAt = afterBody, p.lineNum
	return nil
}

// quotePath names a body path as written and, when it differs, as read.
func quotePath(rel, path string) string {
	if rel == path {
		return strconv.Quote(rel)
	}
	return fmt.Sprintf("%q (%s)", rel, path)
}

// unwrapPath drops the path an *fs.PathError repeats.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// header handles a "Name: value" line.
func (p *parser) header(name, value string) error {
	switch p.st {
	case between:
		return p.errf("header line with no request line before it: a target starts with a request line such as %s", example)
	case afterBody:
		return p.errf("header line after the body line (line %d): headers come before the @body line", p.bodyAt)
	}
	if name == "" {
		return p.errf("header line without a name: write Name: value")
	}
	if !isToken(name) {
		return p.errf("header name %q has a character HTTP forbids in names (RFC 9110 §5.1): use letters, digits and !#$%%&'*+-.^_`|~", name)
	}
	value = strings.Trim(value, " \t")
	if value == "" {
		return p.errf("header %s has no value: give one, or remove the line", name)
	}
	if i := badValueByte(value); i >= 0 {
		return p.errf("header %s's value has control byte %#02x, which HTTP forbids in values (RFC 9110 §5.5): remove it", name, value[i])
	}
	switch strings.ToLower(name) {
	case "content-length", "transfer-encoding", "connection":
		return p.errf("header %s is set by brk, which frames the body and manages connections: remove the line", name)
	case "host":
		if p.hostAt != 0 {
			return p.errf("a second Host header (the first is at line %d): keep one", p.hostAt)
		}
		p.hostAt = p.lineNum
	}
	t := &p.out[len(p.out)-1]
	t.Header = append(t.Header, [2]string{name, value})
	return nil
}

// request handles a "METHOD URL" line: it opens a target.
func (p *parser) request(s string) error {
	f := strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '\t' })
	switch {
	case len(f) == 1:
		return p.errf("%q is not a target line: want a request line METHOD URL such as %s, a header Name: value, or a body line @FILE", s, example)
	case len(f) > 2 && strings.HasPrefix(f[2], "HTTP/"):
		return p.errf("the protocol version is not part of a request line: write %s %s", f[0], f[1])
	case len(f) > 2:
		return p.errf("request line has %d words: want METHOD URL (percent-encode a space in the URL as %%20)", len(f))
	}
	if err := checkMethod(f[0]); err != nil {
		return p.errf("%v", err)
	}
	origin, err := checkURL(f[1])
	if err != nil {
		return p.errf("%v", err)
	}
	if len(p.out) == 0 {
		p.origin = origin
	} else if origin != p.origin {
		return p.errf("URL %q is on origin %s but the first target (line %d) is on %s: all targets share one origin, since connections are reused across them; run one brk per origin",
			f[1], origin, p.out[0].Line, p.origin)
	}
	if len(p.out) == MaxTargets {
		return p.errf("more than %d targets: each target keeps its own counters and latency histogram per worker, so a mix is bounded; merge or drop targets", MaxTargets)
	}
	t := Target{Method: f[0], URL: f[1], Weight: 1, Line: p.lineNum}
	if p.weight.line != 0 {
		t.Weight = p.weight.weight
	}
	if p.expect.line != 0 {
		t.ExpectStatus = p.expect.codes
	}
	p.weight, p.expect = directive{}, directive{}
	p.out = append(p.out, t)
	p.st, p.hostAt, p.bodyAt = inHeaders, 0, 0
	return nil
}

// checkMethod accepts the methods of Methods, spelled as there.
func checkMethod(m string) error {
	for _, ok := range Methods {
		switch {
		case m == ok:
			return nil
		case strings.EqualFold(m, ok):
			return fmt.Errorf("method %q must be uppercase (methods are case-sensitive, RFC 9110 §9.1): write %s", m, ok)
		}
	}
	list := strings.Join(Methods, " ")
	switch strings.ToUpper(m) {
	case "CONNECT":
		return fmt.Errorf("method CONNECT is not supported: it opens a tunnel rather than asking for a resource; use one of %s", list)
	case "TRACE":
		return fmt.Errorf("method TRACE is not supported: it asks the server to echo the request back; use one of %s", list)
	}
	return fmt.Errorf("unknown method %q: use one of %s", m, list)
}

// checkURL accepts an absolute http:// or https:// URL and returns its
// origin, "scheme://host:port" with the host in lower case and the
// scheme's default port made explicit.
func checkURL(raw string) (string, error) {
	for i := 0; i < len(raw); i++ {
		if c := raw[i]; c <= ' ' || c >= 0x7f {
			return "", fmt.Errorf("URL %q has a control, space or non-ASCII byte at offset %d: percent-encode it", raw, i)
		}
	}
	if !strings.Contains(raw, "://") {
		if strings.HasPrefix(raw, "/") {
			return "", fmt.Errorf("URL %q is a path: a target needs an absolute URL such as http://127.0.0.1:8080%s", raw, raw)
		}
		return "", fmt.Errorf("URL %q has no scheme: write http://%s or https://%s", raw, raw, raw)
	}
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return "", fmt.Errorf("URL %q: %v", raw, err)
	}
	port := ""
	switch u.Scheme {
	case "http":
		port = "80"
	case "https":
		port = "443"
	default:
		return "", fmt.Errorf("URL %q: the scheme must be http or https", raw)
	}
	switch {
	case u.Opaque != "" || u.Hostname() == "":
		return "", fmt.Errorf("URL %q has no host: write e.g. %s://127.0.0.1:8080/", raw, u.Scheme)
	case u.User != nil: // its password never shown
		return "", fmt.Errorf("URL %q has credentials, which are not supported in URLs: send an Authorization header instead", u.Redacted())
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return "", fmt.Errorf("URL %q has a fragment (#…), which is never sent to the server: remove it", raw)
	}
	if pt := u.Port(); pt != "" {
		n, err := strconv.ParseUint(pt, 10, 16)
		if err != nil || n == 0 {
			return "", fmt.Errorf("URL %q: port %q is not 1..65535", raw, pt)
		}
		port = strconv.FormatUint(n, 10)
	} else if strings.HasSuffix(u.Host, ":") {
		return "", fmt.Errorf("URL %q has an empty port: write a port after the colon or remove the colon", raw)
	}
	return u.Scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port), nil
}

// trimSpace removes ASCII whitespace around s.
func trimSpace(s string) string { return strings.Trim(s, " \t\r\v\f") }

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// isToken reports whether s is an HTTP token (RFC 9110 §5.6.2).
func isToken(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return s != ""
}

// badValueByte is the index of the first byte HTTP forbids in a field
// value (a control other than HTAB, RFC 9110 §5.5), or -1.
func badValueByte(v string) int {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < ' ' && c != '\t' || c == 0x7f {
			return i
		}
	}
	return -1
}
