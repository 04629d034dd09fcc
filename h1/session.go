package h1

// Template is a target's requests, encoded once and shared read-only by
// every Session of a run: the request repeated to fill a 64 KiB buffer (so
// that any run of queued requests is one contiguous slice), and the
// variant that asks the server to close (a connection's last request).
type Template struct {
	repeated []byte
	size     int
	closing  []byte
	head     bool
	expect   []byte
	check    bool
}

// NewTemplate prepares req for sessions. expect/check set the exact body
// every response must carry.
func NewTemplate(req Request, expect []byte, check bool) (*Template, error) {
	one, err := req.Encode()
	if err != nil {
		return nil, err
	}
	req.Close = true
	closing, err := req.Encode()
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
	return &Template{repeated: rep, size: len(one), closing: closing, head: req.IsHead(), expect: expect, check: check}, nil
}

// Request returns the encoded request (tests, reports).
func (t *Template) Request() []byte { return t.repeated[:t.size] }

// Session is one connection's HTTP/1.1 protocol state: the requests queued
// for writing, how far the socket took them, and the response parser.
// Responses come back in request order (RFC 9112 §9.3.2), so a response
// always answers the oldest written request. It allocates nothing.
type Session struct {
	t       *Template
	queued  int  // whole requests queued and not yet fully written
	last    bool // a closing request is queued after them
	partial int  // bytes of the first queued request already written
	p       Parser

	status  int // the last completed response
	bodyOK  bool
	closing bool
}

// NewSession returns a session for t.
func NewSession(t *Template) *Session {
	s := &Session{t: t}
	s.p.SetExpectBody(t.expect, t.check)
	s.p.Reset(t.head)
	return s
}

// Reset begins a new connection: nothing queued, no response in progress.
func (s *Session) Reset() {
	s.queued, s.last, s.partial = 0, false, 0
	s.p.Reset(s.t.head)
}

// Queue appends one request; last makes it the closing request, which is
// a connection's final one: the caller queues nothing after it.
func (s *Session) Queue(last bool) {
	if last {
		s.last = true
	} else {
		s.queued++
	}
}

// Output returns queued bytes not yet written: as many whole requests as
// fit in the shared buffer, or the closing request once the others are out.
// The slice is read-only and valid until the next Wrote.
func (s *Session) Output() []byte {
	if s.queued > 0 {
		left := s.queued*s.t.size - s.partial
		b := s.t.repeated[s.partial:]
		if len(b) > left {
			b = b[:left]
		}
		return b
	}
	if s.last {
		return s.t.closing[s.partial:]
	}
	return nil
}

// Wrote consumes n bytes of Output and returns how many requests are now
// completely written.
func (s *Session) Wrote(n int) int {
	done := 0
	for n > 0 {
		size := s.t.size
		if s.queued == 0 {
			if !s.last {
				break
			}
			size = len(s.t.closing)
		}
		k := size - s.partial
		if n < k {
			s.partial += n
			break
		}
		n -= k
		s.partial = 0
		done++
		if s.queued > 0 {
			s.queued--
		} else {
			s.last = false
		}
	}
	return done
}

// Parse consumes response bytes; done when the response to the oldest
// written request is complete (Status, BodyOK, Closing describe it; the
// next Parse starts the next response).
func (s *Session) Parse(b []byte) (n int, done bool, err error) {
	n, done, err = s.p.Parse(b)
	if done {
		s.status, s.bodyOK, s.closing = s.p.Status(), s.p.BodyOK(), s.p.Close()
		s.p.Reset(s.t.head)
	}
	return n, done, err
}

// EOF tells the session the peer closed: done completes a close-delimited
// response; ErrTruncated is a response cut short.
func (s *Session) EOF() (done bool, err error) {
	if !s.p.Started() {
		return false, nil
	}
	done, err = s.p.EOF()
	if done {
		s.status, s.bodyOK, s.closing = s.p.Status(), s.p.BodyOK(), true
		s.p.Reset(s.t.head)
	}
	return done, err
}

// Status, BodyOK and Closing describe the last completed response:
// Closing means the connection ends after it (Connection: close, HTTP/1.0,
// or a close-delimited body).
func (s *Session) Status() int   { return s.status }
func (s *Session) BodyOK() bool  { return s.bodyOK }
func (s *Session) Closing() bool { return s.closing }
