package exchange

import (
	"errors"
	"fmt"
	"strings"
)

// Header is one request header field as the user gave it.
type Header struct{ Name, Value string }

// Request describes the request sent for every request of a target,
// whatever the protocol: h1 and h2 validate it and encode it once.
type Request struct {
	// Method is the request method; "" means GET, or POST when Body is
	// not nil.
	Method string
	// Host is the Host header value (HTTP/2's :authority), e.g.
	// "127.0.0.1:8080".
	Host string
	// Target is the request-target (HTTP/2's :path), e.g. "/plain?x=1";
	// "" means "/".
	Target string
	// Headers are user headers (-H). A user Host header replaces Host, a
	// user User-Agent the default one and a user Content-Type the default
	// one. A user Content-Length, Transfer-Encoding or Connection header
	// is an error: brk owns framing and connection management.
	Headers []Header
	// Body is the request body. nil means no body; non-nil (even empty)
	// sends its length and, unless the user set one, Content-Type:
	// application/octet-stream.
	Body []byte
}

// EffectiveMethod returns the method sent: Method, or GET or POST when
// Method is empty.
func (r *Request) EffectiveMethod() string {
	switch {
	case r.Method != "":
		return r.Method
	case r.Body != nil:
		return "POST"
	}
	return "GET"
}

// IsHead reports whether the request is a HEAD request, whose responses have
// no body (RFC 9112 §6.3 item 1).
func (r *Request) IsHead() bool { return r.EffectiveMethod() == "HEAD" }

// EffectiveTarget returns the request-target sent: Target, or "/" when it
// is empty.
func (r *Request) EffectiveTarget() string {
	if r.Target == "" {
		return "/"
	}
	return r.Target
}

// Authority returns the host sent (the Host header, HTTP/2's
// :authority): the user's Host header if there is one, else Host,
// without leading and trailing whitespace.
func (r *Request) Authority() string {
	host := TrimOWS(r.Host)
	for _, h := range r.Headers {
		if strings.EqualFold(h.Name, "host") {
			host = TrimOWS(h.Value)
		}
	}
	return host
}

// Validate checks the request (RFC 9110, RFC 9112 §3): the method is a
// token, the target an origin-form path or "*" without controls or
// spaces, header names are tokens, no value holds CR, LF or NUL, at most
// one user Host header, and none of the headers brk sets itself. Its
// errors are one line, without a package prefix.
func (r *Request) Validate() error {
	method := r.EffectiveMethod()
	if !isToken(method) {
		return fmt.Errorf("invalid method %q: not a token", method)
	}
	target := r.EffectiveTarget()
	if target != "*" && target[0] != '/' {
		return fmt.Errorf("invalid request target %q: must start with '/' or be \"*\"", target)
	}
	for i := 0; i < len(target); i++ {
		if c := target[i]; c <= ' ' || c == 0x7f {
			return fmt.Errorf("invalid request target %q: control character or space", target)
		}
	}
	if err := checkValue("Host", TrimOWS(r.Host)); err != nil {
		return err
	}
	var userHost bool
	for _, h := range r.Headers {
		if !isToken(h.Name) {
			return fmt.Errorf("invalid header name %q: not a token", h.Name)
		}
		if err := checkValue(h.Name, h.Value); err != nil {
			return err
		}
		switch strings.ToLower(h.Name) {
		case "host":
			if userHost {
				return errors.New("more than one Host header")
			}
			userHost = true
		case "content-length", "transfer-encoding", "connection":
			return fmt.Errorf("header %q is set by brk and cannot be given", h.Name)
		}
	}
	return nil
}

// HasHeader reports whether the user set header name (case-insensitive).
func (r *Request) HasHeader(name string) bool {
	for _, h := range r.Headers {
		if strings.EqualFold(h.Name, name) {
			return true
		}
	}
	return false
}

// checkValue rejects CR, LF and NUL in a field value (RFC 9110 §5.5).
func checkValue(name, v string) error {
	if strings.ContainsAny(v, "\r\n\x00") {
		return fmt.Errorf("invalid value for header %q: contains CR, LF or NUL", name)
	}
	return nil
}

// TrimOWS removes leading and trailing SP and HTAB (RFC 9110 §5.6.3).
func TrimOWS(s string) string { return strings.Trim(s, " \t") }

// isToken reports whether s is a non-empty token (RFC 9110 §5.6.2).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}
