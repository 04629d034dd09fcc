// Package redact keeps the secrets brk was given (a remote-write
// Authorization, the -H Authorization, Cookie and Proxy-Authorization
// values, a password in a URL, BRK_TOKEN) out of everything it writes: a
// server may echo a credential it refused, whole or cut short, plain or
// escaped, and brk quotes what servers send in its errors and reports.
//
// Secrets is the one redaction every writer of brk's output goes
// through: the text, the JSON and HTML reports, the pushed series and the
// errors (String). What a server sent is redacted with Echo, which also
// finds a secret cut short at its end; Walk redacts a whole report so;
// Body quotes a server's body in an error: redacted, then at most MaxBody
// bytes, escaped.
package redact

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"html"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
)

const (
	// Mark replaces each secret found.
	Mark = "[redacted]"
	// MaxBody is how many bytes of a server's body an error quotes.
	MaxBody = 200
	// MinLen is the shortest secret searched for: a shorter one would
	// blank every such word of the output (a password "abc" every "abc");
	// it is still hidden inside a longer one (user:abc, Bearer abc).
	MinLen = 4
)

// Secrets is a set of secret values and every form in which brk's output
// or a server could carry one. The zero value holds none; its methods are
// safe for concurrent use.
type Secrets struct {
	mu    sync.RWMutex
	forms []string          // every form, longest first
	cut   []string          // the forms a cut-short echo may end with a prefix of (no space: no bare scheme)
	r     *strings.Replacer // forms → Mark
}

// New is a set of the given secrets (Add).
func New(values ...string) *Secrets {
	s := &Secrets{}
	s.Add(values...)
	return s
}

// Add adds secrets: each value whole and, when it has a scheme ("Bearer
// xyz", "Basic dXNlcjpwYXNz"), the token after it; a Basic token's
// decoded user:password and its password too.
func (s *Secrets) Add(values ...string) {
	var add []string
	for _, v := range values {
		v = strings.TrimSpace(v)
		add = append(add, v)
		scheme, token, ok := strings.Cut(v, " ")
		if !ok {
			continue
		}
		token = strings.TrimSpace(token)
		add = append(add, token)
		if strings.EqualFold(scheme, "basic") {
			if b, err := base64.StdEncoding.DecodeString(token); err == nil {
				_, pass, _ := strings.Cut(string(b), ":")
				add = append(add, string(b), pass)
			}
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, v := range add {
		if len(v) < MinLen {
			continue
		}
		for _, f := range forms(v) {
			if !slices.Contains(s.forms, f) {
				s.forms = append(s.forms, f)
				if !strings.ContainsAny(f, " \t") {
					s.cut = append(s.cut, f)
				}
			}
		}
	}
	byLength := func(a, b string) int { return len(b) - len(a) }
	slices.SortStableFunc(s.forms, byLength)
	slices.SortStableFunc(s.cut, byLength)
	pairs := make([]string, 0, 2*len(s.forms))
	for _, f := range s.forms {
		pairs = append(pairs, f, Mark)
	}
	s.r = strings.NewReplacer(pairs...)
}

// Header adds the secret of a request header, if it holds one: the value
// of Authorization and Proxy-Authorization (and the token after its
// scheme), of Cookie (and each cookie's value).
func (s *Secrets) Header(name, value string) {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "authorization", "proxy-authorization":
		s.Add(value)
	case "cookie":
		vals := []string{value}
		for _, c := range strings.Split(value, ";") {
			_, v, _ := strings.Cut(c, "=")
			vals = append(vals, strings.TrimSpace(c), v)
		}
		s.Add(vals...)
	}
}

// URL adds the password of raw's userinfo, and the userinfo whole, if
// raw is a URL with one; also when raw does not parse (its parser's
// error quotes it whole).
func (s *Secrets) URL(raw string) {
	if u, err := url.Parse(raw); err == nil {
		if p, ok := u.User.Password(); ok {
			s.Add(u.User.Username()+":"+p, p)
		}
		return
	}
	_, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		if _, p, ok := strings.Cut(rest[:i], ":"); ok {
			s.Add(rest[:i], p)
		}
	}
}

// forms is v as brk's output or a server may carry it: plain, escaped as
// a JSON string (Go's HTML-safe escaping or not, / as \/ or not), as a Go
// quoted string, and HTML-escaped.
func forms(v string) []string {
	var out []string
	add := func(f string) {
		if f != "" && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	add(v)
	for _, f := range []string{jsonString(v, true), jsonString(v, false)} {
		add(f)
		add(strings.ReplaceAll(f, "/", `\/`))
	}
	q := strconv.Quote(v)
	add(q[1 : len(q)-1])
	add(html.EscapeString(v))
	return out
}

// jsonString is v as the inside of a JSON string.
func jsonString(v string, htmlSafe bool) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(htmlSafe)
	if enc.Encode(v) != nil {
		return ""
	}
	out := strings.TrimSuffix(b.String(), "\n")
	return out[1 : len(out)-1]
}

// String is x with every secret replaced by Mark.
func (s *Secrets) String(x string) string {
	if s == nil {
		return x
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.r == nil {
		return x
	}
	return s.r.Replace(x)
}

// Echo is String of x, a text a server sent (or one that holds it), and,
// at its end, a secret cut short: a trailing prefix of one (at least
// MinLen bytes, past any scheme), as a server that echoes a credential in
// a body cut to a length leaves it.
func (s *Secrets) Echo(x string) string {
	x = s.String(x)
	if s == nil {
		return x
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, f := range s.cut {
		for k := min(len(f)-1, len(x)); k >= MinLen; k-- {
			if strings.HasSuffix(x, f[:k]) {
				return x[:len(x)-k] + Mark
			}
		}
	}
	return x
}

// Body quotes a server's body b for an error: redacted (whole, before the
// cut, so that no secret is cut past recognition), then at most MaxBody
// bytes, escaped as a Go string, with the count of bytes left out.
func (s *Secrets) Body(b []byte) string {
	x := s.Echo(string(b))
	if len(x) <= MaxBody {
		return strconv.Quote(x)
	}
	cut := MaxBody
	if i := strings.LastIndex(x[:cut], Mark[:1]); i >= 0 && strings.HasPrefix(x[i:], Mark) && i+len(Mark) > cut {
		cut = i // not through a Mark
	}
	return strconv.Quote(x[:cut]) + "… (" + strconv.Itoa(len(x)-cut) + " more bytes)"
}
