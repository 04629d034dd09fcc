package brk

import (
	"net/url"
	"strings"

	"github.com/brk-bench/brk/internal/exchange"
	"github.com/brk-bench/brk/internal/h1"
	"github.com/brk-bench/brk/internal/h2"
)

// encodeRequest encodes t's request to u once for HTTP/1.1, with what
// every response must carry as its body, and reports whether written
// followers of a closing response may be replayed (GET and HEAD, RFC 9112
// §9.3.2).
func encodeRequest(t *Target, u *url.URL) (tmpl *h1.Template, replay bool, err error) {
	req, expect, err := describeRequest(t, u)
	if err != nil {
		return nil, false, err
	}
	// Encode once: the request, its closing variant, the repeated buffer.
	if tmpl, err = h1.NewTemplate(req, expect, expect != nil); err != nil {
		return nil, false, encodeRefusal(err)
	}
	return tmpl, req.Method == "GET" || req.Method == "HEAD", nil
}

// encodeRequestH2 encodes t's request to u for HTTP/2 once.
func encodeRequestH2(t *Target, u *url.URL) (*h2.Template, error) {
	req, expect, err := describeRequest(t, u)
	if err != nil {
		return nil, err
	}
	tmpl, err := h2.NewTemplate(req, u.Scheme, expect, expect != nil)
	if err != nil {
		return nil, encodeRefusal(err)
	}
	return tmpl, nil
}

// describeRequest is t's request to u as every protocol sends it (its
// method upper-cased, GET or POST by default), with the exact body every
// response must carry (nil: any).
func describeRequest(t *Target, u *url.URL) (req exchange.Request, expect []byte, err error) {
	method := strings.ToUpper(t.Method)
	if method == "" {
		method = "GET"
		if t.Body != nil {
			method = "POST"
		}
	}
	req = exchange.Request{Method: method, Host: u.Host, Target: u.RequestURI(), Body: t.Body}
	req.Headers = append(req.Headers, t.Headers...) // brk.Header is exchange.Header
	expect, err = expectedBody(t, method == "HEAD")
	return req, expect, err
}

// encodeRefusal is an encoder's error as the user reads it: a refusal,
// without the package prefix.
func encodeRefusal(err error) error {
	return refuse("%s", strings.TrimPrefix(strings.TrimPrefix(err.Error(), "h1: "), "h2: "))
}

// expectedBody is the exact body every response must have (nil: any),
// from ExpectBody or ExpectEcho; head responses have none to check.
func expectedBody(t *Target, head bool) ([]byte, error) {
	if head && (t.ExpectEcho || t.ExpectBody != nil) {
		return nil, refuse("%s and %s cannot apply to HEAD responses, which have no body", fExpectBody, fExpectEcho)
	}
	if !t.ExpectEcho {
		return t.ExpectBody, nil
	}
	if t.Body == nil {
		return nil, refuse("%s needs %s", fExpectEcho, fBody)
	}
	if t.ExpectBody != nil {
		return nil, refuse("%s and %s cannot be combined", fExpectEcho, fExpectBody)
	}
	return t.Body, nil
}

// statusCheck is the accepted-status test for codes (nil: any 2xx, the
// engine's default).
func statusCheck(codes []int) (func(int) bool, error) {
	if len(codes) == 0 {
		return nil, nil
	}
	var ok [600]bool
	for _, c := range codes {
		if c < 100 || c > 599 {
			return nil, refuse("%s %d: not an HTTP status code", fExpectStatus, c)
		}
		ok[c] = true
	}
	return func(c int) bool { return c >= 0 && c < 600 && ok[c] }, nil
}
