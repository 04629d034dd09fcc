// Package hostile provides a scripted raw-TCP HTTP/1.1 server for
// integration tests of a load client.
//
// The server is deliberately not built on net/http: every byte it sends is
// chosen by a Script, so tests can reproduce misbehaving peers (resets,
// stalls, corrupt bodies, unsolicited responses, huge headers, pipelining
// observation) exactly and repeatably.
//
// Every blocking read or write a Script performs is unblocked by
// Server.Close, which closes the listener and every open connection and then
// waits for all script goroutines to return.
package hostile

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/textproto"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// MaxHeaderBytes is the largest request head (request line plus headers)
// that ReadRequest accepts before it fails with ErrHeaderTooLarge.
const MaxHeaderBytes = 1 << 20

// ErrHeaderTooLarge is returned by ReadRequest when a request head exceeds
// MaxHeaderBytes.
var ErrHeaderTooLarge = errors.New("hostile: request head too large")

// Script scripts one connection; index is the 0-based connection number.
//
// When the Script returns, the server closes the connection (FIN, or RST if
// unread data is left in the kernel receive buffer, as Linux does).
type Script func(c *Conn, index int)

// Stats is a snapshot of a Server's counters.
type Stats struct {
	Conns        int64 // connections accepted
	Requests     int64 // complete requests read by ReadRequest, all conns
	Responses    int64 // complete responses written via Respond or RespondMany
	MaxPipelined int64 // largest number of requests received but unanswered at once on one conn, as reported by ObservePipelined
	Corrupted    int64 // response bodies altered by CorruptEvery
}

// Server accepts TCP connections on 127.0.0.1:0 and runs Script on each in
// its own goroutine.
type Server struct {
	tb     testing.TB
	ln     *net.TCPListener
	script Script
	done   chan struct{}

	mu     sync.Mutex
	closed bool
	conns  map[*Conn]struct{}
	wg     sync.WaitGroup
	once   sync.Once

	accepted     atomic.Int64
	requests     atomic.Int64
	responses    atomic.Int64
	maxPipelined atomic.Int64
	corrupted    atomic.Int64
	echoed       atomic.Int64 // responses sent by CorruptEvery scripts, for every-n-th counting
}

// Start listens on 127.0.0.1:0 with the default backlog and serves until
// Close. It registers Close with tb.Cleanup.
func Start(tb testing.TB, script Script) *Server {
	tb.Helper()
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		tb.Fatalf("hostile: listen: %v", err)
	}
	s := &Server{
		tb:     tb,
		ln:     ln,
		script: script,
		done:   make(chan struct{}),
		conns:  make(map[*Conn]struct{}),
	}
	s.wg.Add(1)
	go s.acceptLoop()
	tb.Cleanup(s.Close)
	return s
}

// Addr returns the listening address as "127.0.0.1:PORT".
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Done returns a channel that is closed when Close begins.
func (s *Server) Done() <-chan struct{} { return s.done }

// Close closes the listener and all open connections and waits for every
// script goroutine to return. It is safe to call more than once.
func (s *Server) Close() {
	s.once.Do(func() {
		s.mu.Lock()
		s.closed = true
		close(s.done)
		s.ln.Close()
		for c := range s.conns {
			c.tc.Close()
		}
		s.mu.Unlock()
	})
	s.wg.Wait()
}

// Stats returns a snapshot of the server's counters.
func (s *Server) Stats() Stats {
	return Stats{
		Conns:        s.accepted.Load(),
		Requests:     s.requests.Load(),
		Responses:    s.responses.Load(),
		MaxPipelined: s.maxPipelined.Load(),
		Corrupted:    s.corrupted.Load(),
	}
}

func (s *Server) acceptLoop() {
	defer s.wg.Done()
	for index := 0; ; index++ {
		tc, err := s.ln.AcceptTCP()
		if err != nil {
			return // listener closed by Close
		}
		c := &Conn{tc: tc, srv: s}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			tc.Close()
			return
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		s.accepted.Add(1)
		go s.serve(c, index)
	}
}

func (s *Server) serve(c *Conn, index int) {
	defer s.wg.Done()
	defer func() {
		c.tc.Close()
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
	}()
	defer func() {
		if r := recover(); r != nil {
			s.tb.Errorf("hostile: script panicked on conn %d: %v", index, r)
		}
	}()
	s.script(c, index)
}

// Request is one HTTP/1.1 request read by ReadRequest.
type Request struct {
	Method string
	Target string
	Proto  string
	Header http.Header // canonical header names
	Body   []byte
}

// Conn wraps one accepted *net.TCPConn with its own read buffer, so that
// requests that have already arrived can be parsed ahead (see Pending).
type Conn struct {
	tc  *net.TCPConn
	srv *Server
	buf []byte // received, not yet parsed bytes
}

// Raw returns the underlying TCP connection.
func (c *Conn) Raw() *net.TCPConn { return c.tc }

// Server returns the server that accepted c.
func (c *Conn) Server() *Server { return c.srv }

// Done returns a channel that is closed when the server starts closing.
func (c *Conn) Done() <-chan struct{} { return c.srv.done }

// errIncomplete reports that buf does not yet hold a complete request.
var errIncomplete = errors.New("incomplete")

// parseRequest parses one request from the front of buf. It returns the
// request and the number of bytes it used, errIncomplete if more bytes are
// needed, or another error if buf is malformed.
func parseRequest(buf []byte) (Request, int, error) {
	end := bytes.Index(buf, []byte("\r\n\r\n"))
	if end < 0 {
		if len(buf) > MaxHeaderBytes {
			return Request{}, 0, ErrHeaderTooLarge
		}
		return Request{}, 0, errIncomplete
	}
	if end+4 > MaxHeaderBytes {
		return Request{}, 0, ErrHeaderTooLarge
	}
	lines := strings.Split(string(buf[:end]), "\r\n")
	parts := strings.Split(lines[0], " ")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || !strings.HasPrefix(parts[2], "HTTP/") {
		return Request{}, 0, fmt.Errorf("hostile: malformed request line %q", lines[0])
	}
	req := Request{Method: parts[0], Target: parts[1], Proto: parts[2], Header: make(http.Header)}
	for _, l := range lines[1:] {
		name, value, ok := strings.Cut(l, ":")
		if !ok || name == "" || strings.ContainsAny(name, " \t") {
			return Request{}, 0, fmt.Errorf("hostile: malformed header line %q", l)
		}
		key := textproto.CanonicalMIMEHeaderKey(name)
		req.Header[key] = append(req.Header[key], strings.TrimSpace(value))
	}
	if te := req.Header.Get("Transfer-Encoding"); te != "" && !strings.EqualFold(te, "identity") {
		return Request{}, 0, fmt.Errorf("hostile: unsupported request Transfer-Encoding %q", te)
	}
	n := end + 4
	if cl := req.Header.Values("Content-Length"); len(cl) > 0 {
		size, err := strconv.ParseInt(cl[0], 10, 64)
		if err != nil || size < 0 {
			return Request{}, 0, fmt.Errorf("hostile: bad Content-Length %q", cl[0])
		}
		for _, v := range cl[1:] {
			if v != cl[0] {
				return Request{}, 0, fmt.Errorf("hostile: conflicting Content-Length %q", cl)
			}
		}
		if int64(len(buf)-n) < size {
			return Request{}, 0, errIncomplete
		}
		req.Body = append([]byte(nil), buf[n:n+int(size)]...)
		n += int(size)
	}
	return req, n, nil
}

// ReadRequest reads one HTTP/1.1 request: request line, headers, and a body
// delimited by Content-Length (chunked request bodies are rejected). Requests
// already buffered are returned first without touching the socket. Each
// returned request is counted in Stats.Requests.
func (c *Conn) ReadRequest() (Request, error) {
	chunk := make([]byte, 64<<10)
	for {
		req, n, err := parseRequest(c.buf)
		if err == nil {
			c.buf = c.buf[n:]
			c.srv.requests.Add(1)
			return req, nil
		}
		if err != errIncomplete {
			return Request{}, err
		}
		m, rerr := c.tc.Read(chunk)
		c.buf = append(c.buf, chunk[:m]...)
		if rerr != nil {
			if m > 0 {
				continue // parse what arrived before reporting the error
			}
			return Request{}, rerr
		}
	}
}

// ReadAvailable reads one request, blocking until it arrives, and then every
// further request that arrives within wait after it. It returns the requests
// read so far together with any error other than the wait expiring; bytes of
// a partially received request stay buffered for the next read.
func (c *Conn) ReadAvailable(wait time.Duration) ([]Request, error) {
	first, err := c.ReadRequest()
	if err != nil {
		return nil, err
	}
	reqs := []Request{first}
	if err := c.tc.SetReadDeadline(time.Now().Add(wait)); err != nil {
		return reqs, err
	}
	defer c.tc.SetReadDeadline(time.Time{})
	for {
		req, err := c.ReadRequest()
		if err != nil {
			if isTimeout(err) {
				return reqs, nil
			}
			return reqs, err
		}
		reqs = append(reqs, req)
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// Pending returns the number of complete requests already received and
// buffered by c but not yet returned by ReadRequest. It never blocks and
// only sees bytes that an earlier read pulled from the socket.
func (c *Conn) Pending() int {
	n := 0
	for buf := c.buf; ; n++ {
		_, used, err := parseRequest(buf)
		if err != nil {
			return n
		}
		buf = buf[used:]
	}
}

// ObservePipelined records that n requests were received but unanswered at
// once, raising Stats.MaxPipelined if n is the largest seen.
func (c *Conn) ObservePipelined(n int) {
	for {
		cur := c.srv.maxPipelined.Load()
		if int64(n) <= cur || c.srv.maxPipelined.CompareAndSwap(cur, int64(n)) {
			return
		}
	}
}

// Write writes raw bytes without counting a response.
func (c *Conn) Write(b []byte) error {
	_, err := c.tc.Write(b)
	return err
}

// Respond writes one complete raw response and counts it in
// Stats.Responses once the write succeeded.
func (c *Conn) Respond(raw []byte) error {
	return c.RespondMany(raw)
}

// RespondMany writes several complete raw responses in a single write and
// counts each in Stats.Responses once the write succeeded.
func (c *Conn) RespondMany(raws ...[]byte) error {
	var out []byte
	if len(raws) == 1 {
		out = raws[0]
	} else {
		out = bytes.Join(raws, nil)
	}
	if _, err := c.tc.Write(out); err != nil {
		return err
	}
	c.srv.responses.Add(int64(len(raws)))
	return nil
}

// Drip writes b one byte at a time, pausing every between bytes. It stops
// early with net.ErrClosed when the server closes.
func (c *Conn) Drip(b []byte, every time.Duration) error {
	t := time.NewTimer(every)
	defer t.Stop()
	for i := range b {
		if i > 0 {
			t.Reset(every)
			select {
			case <-t.C:
			case <-c.srv.done:
				return net.ErrClosed
			}
		}
		if _, err := c.tc.Write(b[i : i+1]); err != nil {
			return err
		}
	}
	return nil
}

// Reset closes the connection with SO_LINGER 0, so the kernel sends RST
// instead of FIN and discards unsent data.
func (c *Conn) Reset() {
	c.tc.SetLinger(0)
	c.tc.Close()
}

// Close closes the connection. Linux sends FIN, or RST if received data is
// still unread in the kernel buffer.
func (c *Conn) Close() { c.tc.Close() }

// CloseWrite shuts down the sending side (FIN) and keeps reading possible.
func (c *Conn) CloseWrite() { c.tc.CloseWrite() }

// Discard reads and drops everything the peer sends until EOF or the
// server closes.
func (c *Conn) Discard() {
	buf := make([]byte, 32<<10)
	for {
		if _, err := c.tc.Read(buf); err != nil {
			return
		}
	}
}
