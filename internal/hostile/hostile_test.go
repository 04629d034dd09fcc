package hostile

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

const getReq = "GET / HTTP/1.1\r\nHost: x\r\n\r\n"

func postReq(body string) string {
	return fmt.Sprintf("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
}

// dial connects to addr with a 5 s deadline for all I/O and closes the
// connection when the test ends.
func dial(t *testing.T, addr string) *net.TCPConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.SetDeadline(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	return c.(*net.TCPConn)
}

func send(t *testing.T, c net.Conn, s string) {
	t.Helper()
	if _, err := io.WriteString(c, s); err != nil {
		t.Fatalf("write: %v", err)
	}
}

// readExactly reads exactly want's length and compares.
func readExactly(t *testing.T, r io.Reader, want string) {
	t.Helper()
	got := make([]byte, len(want))
	if _, err := io.ReadFull(r, got); err != nil {
		t.Fatalf("read %d bytes: %v (got %q)", len(want), err, got)
	}
	if string(got) != want {
		t.Fatalf("read %q, want %q", got, want)
	}
}

// readBody parses one response from br and returns its body.
func readBody(t *testing.T, br *bufio.Reader) string {
	t.Helper()
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("read response: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return string(b)
}

func expectEOF(t *testing.T, r io.Reader) {
	t.Helper()
	var b [1]byte
	if n, err := r.Read(b[:]); err != io.EOF {
		t.Fatalf("read = %d, %v; want EOF", n, err)
	}
}

func expectTimeout(t *testing.T, c net.Conn, d time.Duration) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(d))
	var b [1]byte
	n, err := c.Read(b[:])
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("read = %d, %v; want timeout", n, err)
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
}

func checkStats(t *testing.T, s *Server, want Stats) {
	t.Helper()
	if got := s.Stats(); got != want {
		t.Fatalf("stats = %+v, want %+v", got, want)
	}
}

func TestFixedKeepAliveAndPipelined(t *testing.T) {
	s := Start(t, Fixed([]byte(OKResponse)))
	c := dial(t, s.Addr())
	for range 3 {
		send(t, c, getReq)
		readExactly(t, c, OKResponse)
	}
	send(t, c, getReq+getReq+getReq)
	readExactly(t, c, OKResponse+OKResponse+OKResponse)
	c.Close()
	s.Close()
	checkStats(t, s, Stats{Conns: 1, Requests: 6, Responses: 6})
}

func TestReadRequestParsesAndPending(t *testing.T) {
	type seen struct {
		reqs    []Request
		pending int
		err     error
	}
	ch := make(chan seen, 1)
	s := Start(t, func(c *Conn, _ int) {
		var v seen
		r, err := c.ReadRequest()
		if err != nil {
			v.err = err
			ch <- v
			return
		}
		v.reqs = append(v.reqs, r)
		v.pending = c.Pending()
		for range v.pending {
			r, err := c.ReadRequest()
			if err != nil {
				v.err = err
				break
			}
			v.reqs = append(v.reqs, r)
		}
		ch <- v
	})
	c := dial(t, s.Addr())
	// One small write on loopback arrives as one segment, so the first
	// read buffers all three requests.
	send(t, c, "POST /a?b=1 HTTP/1.1\r\nhost: x\r\nx-multi: 1\r\nX-MULTI: 2\r\ncontent-length: 5\r\n\r\nhello"+getReq+postReq(""))
	v := <-ch
	if v.err != nil {
		t.Fatal(v.err)
	}
	if v.pending != 2 || len(v.reqs) != 3 {
		t.Fatalf("pending = %d, requests = %d; want 2, 3", v.pending, len(v.reqs))
	}
	r := v.reqs[0]
	if r.Method != "POST" || r.Target != "/a?b=1" || r.Proto != "HTTP/1.1" || string(r.Body) != "hello" {
		t.Fatalf("request = %+v", r)
	}
	if got := r.Header.Values("X-Multi"); len(got) != 2 || got[0] != "1" || got[1] != "2" {
		t.Fatalf("X-Multi = %q", got)
	}
	if r.Header.Get("Host") != "x" {
		t.Fatalf("Host = %q", r.Header.Get("Host"))
	}
	if v.reqs[1].Method != "GET" || v.reqs[2].Method != "POST" || len(v.reqs[2].Body) != 0 {
		t.Fatalf("requests = %+v", v.reqs[1:])
	}
	s.Close()
	checkStats(t, s, Stats{Conns: 1, Requests: 3})
}

func TestReadRequestRejectsMalformed(t *testing.T) {
	for _, raw := range []string{
		"GARBAGE\r\n\r\n",
		"GET / HTTP/1.1\r\nno colon\r\n\r\n",
		"POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
		"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
	} {
		if _, _, err := parseRequest([]byte(raw)); err == nil || err == errIncomplete {
			t.Errorf("parseRequest(%q) err = %v, want a parse error", raw, err)
		}
	}
	if _, _, err := parseRequest([]byte("POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\nabc")); err != errIncomplete {
		t.Errorf("short body: err = %v, want errIncomplete", err)
	}
}

func TestCloseAfter(t *testing.T) {
	last := "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 4\r\n\r\nlast"
	s := Start(t, CloseAfter(2, []byte(OKResponse), []byte(last)))
	c := dial(t, s.Addr())
	send(t, c, getReq)
	readExactly(t, c, OKResponse)
	// Pipeline a third request after the closing one: it must be ignored.
	send(t, c, getReq+getReq)
	readExactly(t, c, last)
	expectEOF(t, c)
	c.Close()
	s.Close()
	checkStats(t, s, Stats{Conns: 1, Requests: 2, Responses: 2})
}

func TestNever(t *testing.T) {
	s := Start(t, Never())
	c := dial(t, s.Addr())
	send(t, c, getReq+getReq)
	expectTimeout(t, c, 100*time.Millisecond)
	s.Close()
	expectEOF(t, c)
	checkStats(t, s, Stats{Conns: 1, Requests: 2})
}

func TestNoReadBlocksWriter(t *testing.T) {
	s := Start(t, NoRead())
	c := dial(t, s.Addr())
	c.SetWriteDeadline(time.Now().Add(500 * time.Millisecond))
	big := make([]byte, 256<<20)
	n, err := c.Write(big)
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() || n >= len(big) {
		t.Fatalf("write = %d, %v; want a timeout before %d bytes", n, err, len(big))
	}
	s.Close()
	checkStats(t, s, Stats{Conns: 1})
}

func TestGreeting(t *testing.T) {
	greet := "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nearly"
	s := Start(t, Greeting([]byte(greet)))
	c := dial(t, s.Addr())
	readExactly(t, c, greet)
	send(t, c, getReq)
	readExactly(t, c, OKResponse)
	c.Close()
	s.Close()
	checkStats(t, s, Stats{Conns: 1, Requests: 1, Responses: 1})
}

func TestResetMidBody(t *testing.T) {
	s := Start(t, ResetMidBody())
	c := dial(t, s.Addr())
	send(t, c, getReq)
	got, err := io.ReadAll(c)
	if string(got) != ResetMidBodyPartial || !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("read %q, %v; want %q, ECONNRESET", got, err, ResetMidBodyPartial)
	}
	s.Close()
	checkStats(t, s, Stats{Conns: 1, Requests: 1})
}

func TestStallMidBodyUntilClose(t *testing.T) {
	s := Start(t, StallMidBody())
	c := dial(t, s.Addr())
	send(t, c, getReq)
	readExactly(t, c, ResetMidBodyPartial)
	expectTimeout(t, c, 100*time.Millisecond)
	s.Close()
	expectEOF(t, c)
	checkStats(t, s, Stats{Conns: 1, Requests: 1})
}

func TestCorruptEvery(t *testing.T) {
	s := Start(t, CorruptEvery(3))
	const body = "hello world"
	// Two connections: the every-n-th count is per server.
	c1, c2 := dial(t, s.Addr()), dial(t, s.Addr())
	br1, br2 := bufio.NewReader(c1), bufio.NewReader(c2)
	var bad []int
	for i := 1; i <= 6; i++ {
		c, br := c1, br1
		if i%2 == 0 {
			c, br = c2, br2
		}
		send(t, c, postReq(body))
		got := readBody(t, br)
		if len(got) != len(body) {
			t.Fatalf("response %d: body %q has wrong length", i, got)
		}
		if got != body {
			bad = append(bad, i)
		}
	}
	if len(bad) != 2 || bad[0] != 3 || bad[1] != 6 {
		t.Fatalf("corrupted responses = %v, want [3 6]", bad)
	}
	c1.Close()
	c2.Close()
	s.Close()
	checkStats(t, s, Stats{Conns: 2, Requests: 6, Responses: 6, Corrupted: 2})
}

func TestHugeHeaderResponseSize(t *testing.T) {
	for _, size := range []int{0, 38, 40, 54, 55, 56, 71, 72, 100, 4096, 4096 + 55, 4096 + 56, 4096 + 57, 4096 + 58, 4096 + 59, 12345, 1 << 20} {
		raw := HugeHeaderResponse(size)
		head := bytes.Index(raw, []byte("\r\n\r\n")) + 4
		// The unpadded head is 38 bytes and the shortest filler line 17,
		// so sizes 39..54 cannot be hit exactly and stay unpadded.
		want := size
		if size < 38+17 {
			want = 38
		}
		if head != want {
			t.Errorf("size %d: head is %d bytes, want %d", size, head, want)
		}
		resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), nil)
		if err != nil {
			t.Fatalf("size %d: %v", size, err)
		}
		b, _ := io.ReadAll(resp.Body)
		if string(b) != "ok" {
			t.Fatalf("size %d: body %q", size, b)
		}
	}
}

func TestHugeHeaders(t *testing.T) {
	const size = 1 << 20
	s := Start(t, HugeHeaders(size))
	c := dial(t, s.Addr())
	br := bufio.NewReaderSize(c, 64<<10)
	for range 2 {
		send(t, c, getReq)
		n := 0
		for {
			line, err := br.ReadSlice('\n')
			if err != nil {
				t.Fatalf("after %d head bytes: %v", n, err)
			}
			n += len(line)
			if string(line) == "\r\n" {
				break
			}
		}
		if n != size {
			t.Fatalf("head is %d bytes, want %d", n, size)
		}
		readExactly(t, br, "ok")
	}
	c.Close()
	s.Close()
	checkStats(t, s, Stats{Conns: 1, Requests: 2, Responses: 2})
}

func TestExtraResponses(t *testing.T) {
	s := Start(t, ExtraResponses(2))
	c := dial(t, s.Addr())
	br := bufio.NewReader(c)
	send(t, c, getReq)
	for i, want := range []string{"ok", "ex", "ex"} {
		if got := readBody(t, br); got != want {
			t.Fatalf("response %d body = %q, want %q", i, got, want)
		}
	}
	c.Close()
	s.Close()
	checkStats(t, s, Stats{Conns: 1, Requests: 1, Responses: 3})
}

func TestPipelineObserver(t *testing.T) {
	s := Start(t, PipelineObserver([]byte(OKResponse)))
	c := dial(t, s.Addr())
	send(t, c, strings.Repeat(getReq, 8))
	readExactly(t, c, strings.Repeat(OKResponse, 8))
	send(t, c, getReq)
	readExactly(t, c, OKResponse)
	c.Close()
	s.Close()
	checkStats(t, s, Stats{Conns: 1, Requests: 9, Responses: 9, MaxPipelined: 8})
}

func TestReadAvailableKeepsPartialRequest(t *testing.T) {
	type result struct {
		first, second []Request
		err           error
	}
	ch := make(chan result, 1)
	partial := make(chan struct{})
	s := Start(t, func(c *Conn, _ int) {
		var r result
		r.first, r.err = c.ReadAvailable(50 * time.Millisecond)
		close(partial)
		if r.err == nil {
			r.second, r.err = c.ReadAvailable(time.Millisecond)
		}
		ch <- r
	})
	c := dial(t, s.Addr())
	req := postReq("0123456789")
	send(t, c, getReq+req[:len(req)-4])
	<-partial
	send(t, c, req[len(req)-4:])
	r := <-ch
	if r.err != nil {
		t.Fatal(r.err)
	}
	if len(r.first) != 1 || len(r.second) != 1 || string(r.second[0].Body) != "0123456789" {
		t.Fatalf("first = %+v, second = %+v", r.first, r.second)
	}
}

func TestDrip(t *testing.T) {
	s := Start(t, func(c *Conn, _ int) { c.Drip([]byte("hello"), time.Millisecond) })
	c := dial(t, s.Addr())
	got, err := io.ReadAll(c)
	if err != nil || string(got) != "hello" {
		t.Fatalf("read %q, %v", got, err)
	}
}

func TestConnIndexes(t *testing.T) {
	ch := make(chan int, 3)
	s := Start(t, func(c *Conn, index int) { ch <- index })
	for want := range 3 {
		c := dial(t, s.Addr())
		expectEOF(t, c)
		if got := <-ch; got != want {
			t.Fatalf("index = %d, want %d", got, want)
		}
	}
	s.Close()
	checkStats(t, s, Stats{Conns: 3})
}

func TestFullBacklogTimesOut(t *testing.T) {
	addr := FullBacklog(t)
	c, err := net.DialTimeout("tcp", addr, 300*time.Millisecond)
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		if c != nil {
			c.Close()
		}
		t.Fatalf("dial %s: %v; want timeout", addr, err)
	}
}

// waitGoroutines polls (bounded) until the goroutine count is back to at
// most want: an exiting goroutine is still counted for a moment after it
// signalled its WaitGroup, so there is nothing to wait on.
func waitGoroutines(t *testing.T, want int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > want {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines, want <= %d:\n%s", runtime.NumGoroutine(), want, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(time.Millisecond)
	}
}

func TestCloseUnblocksEveryScriptWithoutLeaks(t *testing.T) {
	base := runtime.NumGoroutine()
	scripts := map[string]Script{
		"Never":        Never(),
		"NoRead":       NoRead(),
		"StallMidBody": StallMidBody(),
		"Fixed":        Fixed([]byte(OKResponse)),
		"Pipeline":     PipelineObserver([]byte(OKResponse)),
		"CloseAfter":   CloseAfter(5, []byte(OKResponse), []byte(OKResponse)),
		"Drip":         func(c *Conn, _ int) { c.Drip(bytes.Repeat([]byte("x"), 1000), time.Hour) },
		"Greeting":     Greeting([]byte("hi")),
	}
	var servers []*Server
	for name, script := range scripts {
		s := Start(t, script)
		servers = append(servers, s)
		for range 3 {
			c := dial(t, s.Addr())
			send(t, c, getReq)
			// Wait until the script has produced its first byte (or, for
			// silent scripts, the request is in flight).
			if name == "StallMidBody" || name == "Fixed" || name == "Pipeline" || name == "CloseAfter" || name == "Drip" || name == "Greeting" {
				var b [1]byte
				if _, err := io.ReadFull(c, b[:]); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
			}
		}
	}
	done := make(chan struct{})
	go func() {
		for _, s := range servers {
			s.Close()
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return")
	}
	waitGoroutines(t, base)
}
