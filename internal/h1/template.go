package h1

import "github.com/brk-bench/brk/internal/exchange"

// Template is a target's requests, encoded once and shared read-only by
// every Session of a run. A small request is repeated to fill a 64 KiB
// buffer, so that any run of queued requests of one target is one
// contiguous slice; a request with a large body is its head followed by
// the body, which is the caller's one copy, never copied per connection.
// Each has a variant that asks the server to close (a connection's last
// request).
type Template struct {
	repeated  []byte // small requests: whole requests back to back
	closing   []byte // small requests: the closing request
	size      int    // bytes of one request
	closeSize int    // bytes of the closing request
	segmented bool   // large body: head, then body
	head      []byte // segmented: the heads
	closeHead []byte
	body      []byte
	isHead    bool
	expect    []byte
	check     bool
}

// inlineBody is the largest body repeated in the template's buffer; a
// larger one is written from the caller's copy after each head.
const inlineBody = 8 << 10

// NewTemplate prepares req for sessions. expect/check set the exact body
// every response must carry. req.Body and expect are kept, not copied.
func NewTemplate(req exchange.Request, expect []byte, check bool) (*Template, error) {
	t := &Template{isHead: req.IsHead(), expect: expect, check: check}
	if len(req.Body) > inlineBody {
		return t, t.segment(req)
	}
	one, err := Encode(&req, false)
	if err != nil {
		return nil, err
	}
	closing, err := Encode(&req, true)
	if err != nil {
		return nil, err
	}
	copies := (64 << 10) / len(one)
	if copies < 2 {
		copies = 2
	}
	rep := make([]byte, 0, copies*len(one))
	for i := 0; i < copies; i++ {
		rep = append(rep, one...)
	}
	t.repeated, t.size, t.closing, t.closeSize = rep, len(one), closing, len(closing)
	return t, nil
}

// segment prepares a request with a large body: two heads and the body.
func (t *Template) segment(req exchange.Request) error {
	head, err := EncodeHead(&req, false)
	if err != nil {
		return err
	}
	closeHead, err := EncodeHead(&req, true)
	if err != nil {
		return err
	}
	t.segmented, t.head, t.closeHead, t.body = true, head, closeHead, req.Body
	t.size, t.closeSize = len(head)+len(req.Body), len(closeHead)+len(req.Body)
	return nil
}

// Request returns the encoded request (tests, reports).
func (t *Template) Request() []byte {
	if t.segmented {
		return append(append([]byte(nil), t.head...), t.body...)
	}
	return t.repeated[:t.size]
}
