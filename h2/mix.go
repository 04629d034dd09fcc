package h2

import "errors"

// A request mix over HTTP/2: the session holds every target's Template
// (each encoded once: its header blocks and body), each queued request
// names its target (QueueTarget), and each stream keeps its template, so
// that its response is checked against that target's expectation. The
// connection preface is the first template's (every template's preface
// is the same bytes).

// ErrMixTargets is a mix of no templates or more than 256.
var ErrMixTargets = errors.New("h2: a mix needs 1..256 templates")

// NewMixSession returns a session over ts, the mix's targets in order.
func NewMixSession(ts []*Template) (*Session, error) {
	if len(ts) == 0 || len(ts) > 256 {
		return nil, ErrMixTargets
	}
	s := NewSession(ts[0])
	s.ts = ts
	return s, nil
}

// template is target i's template (the session's one without a mix).
func (s *Session) template(i uint8) *Template {
	if s.ts == nil {
		return s.t
	}
	return s.ts[i]
}
