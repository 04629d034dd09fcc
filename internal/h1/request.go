package h1

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/brk-bench/brk/internal/exchange"
)

// Encode validates and renders r once (RFC 9112 §3). Errors are user
// errors with a one-line message. Header order: request line, Host,
// User-Agent, user headers, Content-Type and Content-Length (with a body),
// Connection: close (when close is set), blank line, body. Leading and
// trailing whitespace of header values is removed.
func Encode(r *exchange.Request, close bool) ([]byte, error) {
	head, err := encodeHead(r, close, len(r.Body))
	if err != nil {
		return nil, err
	}
	return append(head, r.Body...), nil
}

// EncodeHead renders r as Encode does, without the body.
func EncodeHead(r *exchange.Request, close bool) ([]byte, error) { return encodeHead(r, close, 0) }

// encodeHead renders the head into a buffer with room for extra bytes.
func encodeHead(r *exchange.Request, close bool, extra int) ([]byte, error) {
	if err := r.Validate(); err != nil {
		return nil, fmt.Errorf("h1: %w", err)
	}
	method, target, host := r.EffectiveMethod(), r.EffectiveTarget(), r.Authority()
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
	if !r.HasHeader("user-agent") {
		buf = append(buf, "User-Agent: brk\r\n"...)
	}
	for _, h := range r.Headers {
		if strings.EqualFold(h.Name, "host") {
			continue
		}
		buf = append(buf, h.Name...)
		buf = append(buf, ": "...)
		buf = append(buf, exchange.TrimOWS(h.Value)...)
		buf = append(buf, "\r\n"...)
	}
	if r.Body != nil {
		if !r.HasHeader("content-type") {
			buf = append(buf, "Content-Type: application/octet-stream\r\n"...)
		}
		buf = append(buf, "Content-Length: "...)
		buf = strconv.AppendInt(buf, int64(len(r.Body)), 10)
		buf = append(buf, "\r\n"...)
	}
	if close {
		buf = append(buf, "Connection: close\r\n"...)
	}
	buf = append(buf, "\r\n"...)
	return buf, nil
}
