package h1

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Header is one request header from the command line.
type Header struct{ Name, Value string }

// Request describes the bytes sent for every request of a target.
type Request struct {
	// Method is the request method; "" means GET, or POST when Body is
	// not nil.
	Method string
	// Host is the Host header value, e.g. "127.0.0.1:8080".
	Host string
	// Target is the request-target, e.g. "/plain?x=1"; "" means "/".
	Target string
	// Headers are user headers (-H). A user Host header replaces the
	// default Host, a user User-Agent the default one and a user
	// Content-Type the default one. A user Content-Length,
	// Transfer-Encoding or Connection header is an error: brk owns framing
	// and connection management.
	Headers []Header
	// Body is the request body. nil means no body; non-nil (even empty)
	// sends Content-Length and, unless the user set one, Content-Type:
	// application/octet-stream.
	Body []byte
	// Close adds "Connection: close".
	Close bool
}

// EffectiveMethod returns the method Encode sends: Method, or GET or POST
// when Method is empty.
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

// Encode validates and renders the request once (RFC 9112 §3). Errors are
// user errors with a one-line message. Header order: request line, Host,
// User-Agent, user headers, Content-Type and Content-Length (with a body),
// Connection: close (with Close), blank line, body. Leading and trailing
// whitespace of header values is removed.
func (r *Request) Encode() ([]byte, error) {
	head, err := r.encodeHead(len(r.Body))
	if err != nil {
		return nil, err
	}
	return append(head, r.Body...), nil
}

// EncodeHead renders the request as Encode does, without the body.
func (r *Request) EncodeHead() ([]byte, error) { return r.encodeHead(0) }

// encodeHead renders the head into a buffer with room for extra bytes.
func (r *Request) encodeHead(extra int) ([]byte, error) {
	method := r.EffectiveMethod()
	if !isToken(method) {
		return nil, fmt.Errorf("h1: invalid method %q: not a token", method)
	}
	target := r.Target
	if target == "" {
		target = "/"
	}
	if target != "*" && target[0] != '/' {
		return nil, fmt.Errorf("h1: invalid request target %q: must start with '/' or be \"*\"", target)
	}
	for i := 0; i < len(target); i++ {
		if c := target[i]; c <= ' ' || c == 0x7f {
			return nil, fmt.Errorf("h1: invalid request target %q: control character or space", target)
		}
	}
	host := trimOWS(r.Host)
	if err := checkValue("Host", host); err != nil {
		return nil, err
	}
	var userHost, userUA, userCT bool
	for _, h := range r.Headers {
		if !isToken(h.Name) {
			return nil, fmt.Errorf("h1: invalid header name %q: not a token", h.Name)
		}
		if err := checkValue(h.Name, h.Value); err != nil {
			return nil, err
		}
		switch strings.ToLower(h.Name) {
		case "host":
			if userHost {
				return nil, errors.New("h1: more than one Host header")
			}
			userHost = true
			host = trimOWS(h.Value)
		case "user-agent":
			userUA = true
		case "content-type":
			userCT = true
		case "content-length", "transfer-encoding", "connection":
			return nil, fmt.Errorf("h1: header %q is set by brk and cannot be given", h.Name)
		}
	}

	n := len(method) + len(target) + 64 + len(host) + extra
	for _, h := range r.Headers {
		n += len(h.Name) + len(h.Value) + 4
	}
	buf := make([]byte, 0, n)
	buf = append(buf, method...)
	buf = append(buf, ' ')
	buf = append(buf, target...)
	buf = append(buf, " HTTP/1.1\r\nHost: "...)
	buf = append(buf, host...)
	buf = append(buf, "\r\n"...)
	if !userUA {
		buf = append(buf, "User-Agent: brk\r\n"...)
	}
	for _, h := range r.Headers {
		if strings.EqualFold(h.Name, "host") {
			continue
		}
		buf = append(buf, h.Name...)
		buf = append(buf, ": "...)
		buf = append(buf, trimOWS(h.Value)...)
		buf = append(buf, "\r\n"...)
	}
	if r.Body != nil {
		if !userCT {
			buf = append(buf, "Content-Type: application/octet-stream\r\n"...)
		}
		buf = append(buf, "Content-Length: "...)
		buf = strconv.AppendInt(buf, int64(len(r.Body)), 10)
		buf = append(buf, "\r\n"...)
	}
	if r.Close {
		buf = append(buf, "Connection: close\r\n"...)
	}
	buf = append(buf, "\r\n"...)
	return buf, nil
}

// ParseHeader parses "Name: value" from a -H flag. The value is trimmed of
// surrounding spaces and tabs.
func ParseHeader(s string) (Header, error) {
	name, value, ok := strings.Cut(s, ":")
	if !ok {
		return Header{}, fmt.Errorf("h1: invalid header %q: want \"Name: value\"", s)
	}
	if !isToken(name) {
		return Header{}, fmt.Errorf("h1: invalid header name %q: not a token", name)
	}
	value = trimOWS(value)
	if err := checkValue(name, value); err != nil {
		return Header{}, err
	}
	return Header{Name: name, Value: value}, nil
}

// checkValue rejects CR, LF and NUL in a field value (RFC 9110 §5.5).
func checkValue(name, v string) error {
	if strings.ContainsAny(v, "\r\n\x00") {
		return fmt.Errorf("h1: invalid value for header %q: contains CR, LF or NUL", name)
	}
	return nil
}

// trimOWS removes leading and trailing SP and HTAB (RFC 9110 §5.6.3).
func trimOWS(s string) string {
	return strings.Trim(s, " \t")
}
