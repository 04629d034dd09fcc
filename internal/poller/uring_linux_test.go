//go:build linux

package poller

import (
	"bytes"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/brk-bench/brk/internal/conn"
	"github.com/brk-bench/brk/internal/uring"
)

// newRing is a ring poller on the test's thread, locked to it.
func newRing(t *testing.T) *Poller {
	t.Helper()
	runtime.LockOSThread()
	t.Cleanup(runtime.UnlockOSThread)
	if err := uring.Available(); err != nil {
		t.Skipf("io_uring: %v", err)
	}
	p, err := NewUring()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// waitFor waits up to a second for an event of fd that satisfies ok.
func waitFor(t *testing.T, p *Poller, fd int, ok func(Event) bool) Event {
	t.Helper()
	evs := make([]Event, 16)
	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) {
		n, err := p.WaitNs(evs, int64(20*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs[:n] {
			if int(e.Fd) == fd && ok(e) {
				return e
			}
		}
	}
	t.Fatalf("no such event for fd %d in 1 s", fd)
	return Event{}
}

// ringPair is a ring poller with one end of a socket pair added (its
// writable event seen) and the raw byte mover of that end; z is the peer.
func ringPair(t *testing.T) (p *Poller, a, z int, raw conn.Raw) {
	t.Helper()
	p = newRing(t)
	a, z = socketpair(t)
	if err := p.Add(a); err != nil {
		t.Fatal(err)
	}
	waitFor(t, p, a, func(e Event) bool { return e.Writable })
	return p, a, z, p.Raw(a)
}

// blockingPeer makes z's reads block for at most a second.
func blockingPeer(z int) {
	unix.SetNonblock(z, false)
	tv := unix.Timeval{Sec: 1}
	unix.SetsockoptTimeval(z, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
}

// A connection on the ring: the connect's poll is a writable event; the
// bytes a peer sends arrive through Raw's Read (would block when none are
// queued); what Raw's Write takes goes out with the next wait; the peer's
// close is a readable hang-up and a Read of 0.
func TestUringConnection(t *testing.T) {
	p, a, z, raw := ringPair(t)
	buf := make([]byte, 64)
	if n, err := raw.Read(buf); n != 0 || err != unix.EAGAIN {
		t.Fatalf("read before any byte: %d, %v; want would block", n, err)
	}
	if n, err := raw.Write([]byte("GET / HTTP/1.1\r\n\r\n")); n != 18 || err != nil {
		t.Fatalf("write: %d, %v", n, err)
	}
	p.WaitNs(make([]Event, 4), 0) // submits the send
	in := make([]byte, 64)
	var got []byte
	for deadline := time.Now().Add(time.Second); len(got) < 18 && time.Now().Before(deadline); {
		n, _ := unix.Read(z, in)
		if n > 0 {
			got = append(got, in[:n]...)
		}
		p.WaitNs(make([]Event, 4), int64(time.Millisecond))
	}
	if string(got) != "GET / HTTP/1.1\r\n\r\n" {
		t.Fatalf("the peer read %q", got)
	}
	resp := bytes.Repeat([]byte("r"), 10000) // three of the ring's 4 KiB buffers
	if _, err := unix.Write(z, resp); err != nil {
		t.Fatal(err)
	}
	var read []byte
	for deadline := time.Now().Add(time.Second); len(read) < len(resp) && time.Now().Before(deadline); {
		waitFor(t, p, a, func(e Event) bool { return e.Readable })
		for {
			n, err := raw.Read(buf)
			if err == unix.EAGAIN {
				break
			}
			if err != nil || n == 0 {
				t.Fatalf("read: %d, %v", n, err)
			}
			read = append(read, buf[:n]...)
		}
	}
	if !bytes.Equal(read, resp) {
		t.Fatalf("read %d bytes, want the %d sent", len(read), len(resp))
	}
	unix.Close(z)
	waitFor(t, p, a, func(e Event) bool { return e.Readable && e.Hup })
	if n, err := raw.Read(buf); n != 0 || err != nil {
		t.Fatalf("read after the peer's close: %d, %v; want 0, nil", n, err)
	}
}

// A plain connection's transport on the ring says what conn.Plain says:
// conn.ErrWouldBlock with nothing received, the bytes with
// conn.ErrWouldBlock when they were all there was (drained), the bytes
// alone when the peer's end is queued behind them, then (0, nil); Write
// is blocked with conn.ErrWouldBlock once sendLimit bytes wait for the
// kernel. Its traits: no Arm per event, nothing to flush, bytes in place.
func TestRingTransport(t *testing.T) {
	p, a, z, _ := ringPair(t)
	tr := p.Transport(a)
	if got := tr.Traits(); got != (conn.Traits{InPlace: true}) {
		t.Fatalf("traits %+v, want in place only", got)
	}
	if _, ok := tr.(conn.Chunker); !ok {
		t.Fatal("the transport is not a conn.Chunker")
	}
	p.WaitNs(make([]Event, 4), 0) // arms the receive
	buf := make([]byte, 64)
	if n, err := tr.Read(buf); n != 0 || err != conn.ErrWouldBlock {
		t.Fatalf("read before any byte: %d, %v; want 0, ErrWouldBlock", n, err)
	}
	if b, err := tr.(conn.Chunker).Chunk(); b != nil || err != conn.ErrWouldBlock {
		t.Fatalf("chunk before any byte: %q, %v; want nil, ErrWouldBlock", b, err)
	}
	unix.Write(z, []byte("hello"))
	waitFor(t, p, a, func(e Event) bool { return e.Readable })
	if n, err := tr.Read(buf); string(buf[:n]) != "hello" || err != conn.ErrWouldBlock {
		t.Fatalf("read: %q, %v; want hello with ErrWouldBlock (drained)", buf[:n], err)
	}
	unix.Write(z, []byte("bye"))
	unix.Close(z)
	waitFor(t, p, a, func(e Event) bool { return e.Hup })
	if n, err := tr.Read(buf); string(buf[:n]) != "bye" || err != nil {
		t.Fatalf("read before the end: %q, %v; want bye, nil (read on)", buf[:n], err)
	}
	if n, err := tr.Read(buf); n != 0 || err != nil {
		t.Fatalf("read at the end: %d, %v; want 0, nil", n, err)
	}

	p2, b, _, _ := ringPair(t)
	tr2 := p2.Transport(b)
	big := make([]byte, sendLimit)
	if n, err := tr2.Write(big); n != len(big) || err != nil {
		t.Fatalf("write of sendLimit bytes: %d, %v", n, err)
	}
	if n, err := tr2.Write([]byte("x")); n != 0 || err != conn.ErrWouldBlock {
		t.Fatalf("write behind sendLimit bytes: %d, %v; want 0, ErrWouldBlock", n, err)
	}
	if pending, err := tr2.Flush(); pending || err != nil {
		t.Fatalf("flush: %v, %v; want nothing pending", pending, err)
	}
}

// Forget cancels the receive armed on a descriptor, so that closing it
// closes the socket (the peer reads its end); a completion of the old
// connection never reaches a new one on the same descriptor number.
func TestUringForgetClosesTheSocket(t *testing.T) {
	p, a, z, _ := ringPair(t)
	p.WaitNs(make([]Event, 4), 0) // arms the receive
	p.Forget(a)
	unix.Close(a)
	blockingPeer(z)
	if n, err := unix.Read(z, make([]byte, 8)); n != 0 || err != nil {
		t.Fatalf("the peer read %d, %v; want its end (0, nil): the ring kept the socket open", n, err)
	}
	evs := make([]Event, 4)
	for i := 0; i < 5; i++ {
		n, _ := p.WaitNs(evs, int64(5*time.Millisecond))
		for _, e := range evs[:n] {
			if int(e.Fd) == a {
				t.Fatalf("an event %+v for a forgotten descriptor", e)
			}
		}
	}
}

// What Raw's Write took before Forget reaches the peer before the close
// (an HTTP/2 GOAWAY before its reset): on epoll a write is in the socket
// when it returns, and the ring keeps that meaning.
func TestUringForgetSendsWhatWriteTook(t *testing.T) {
	p, a, z, raw := ringPair(t)
	p.WaitNs(make([]Event, 4), 0) // arms the receive
	goaway := []byte("\x00\x00\x08\x07\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01")
	if n, err := raw.Write(goaway); n != len(goaway) || err != nil {
		t.Fatalf("write: %d, %v", n, err)
	}
	p.Forget(a) // before the next wait: the bytes are only queued
	unix.Close(a)
	blockingPeer(z)
	got := make([]byte, 0, 64)
	buf := make([]byte, 64)
	for {
		n, err := unix.Read(z, buf)
		if err != nil {
			t.Fatalf("the peer's read after %d bytes: %v", len(got), err)
		}
		if n == 0 {
			break
		}
		got = append(got, buf[:n]...)
	}
	if !bytes.Equal(got, goaway) {
		t.Fatalf("the peer read %q before the end, want the %d bytes written before Forget", got, len(goaway))
	}
}

// A worker holds a ringConn per connection: at 15,000 connections each
// byte of it is 15 KB (docs/measured.md compares the backends' memory).
func TestRingConnSize(t *testing.T) {
	if n := unsafe.Sizeof(ringConn{}); n > 48 {
		t.Fatalf("ringConn is %d bytes, want at most 48", n)
	}
}

// More connections with events than the events slice holds: every
// completion is applied in the wait that sees it (each send's buffer goes
// back at once), the events that did not fit come out of the next waits,
// and one of a connection forgotten meanwhile never does.
func TestUringEventsBeyondTheSlice(t *testing.T) {
	p := newRing(t)
	const n = 40
	var as, zs [n]int
	raws := make([]conn.Raw, n)
	for i := range as {
		as[i], zs[i] = socketpair(t)
		if err := p.Add(as[i]); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[int]bool{}
	evs := make([]Event, 8)
	for deadline := time.Now().Add(time.Second); len(seen) < n && time.Now().Before(deadline); {
		k, err := p.WaitNs(evs, int64(5*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs[:k] {
			if e.Writable {
				seen[int(e.Fd)] = true
			}
		}
	}
	if len(seen) < n {
		t.Fatalf("%d of %d connects reported", len(seen), n)
	}
	for i := range as {
		raws[i] = p.Raw(as[i])
	}
	p.WaitNs(evs, 0) // arms the receives
	for i := range zs {
		if _, err := unix.Write(zs[i], []byte("HTTP/1.1 200 OK\r\n\r\n")); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(10 * time.Millisecond) // the bytes are in the sockets
	k, err := p.WaitNs(evs, int64(5*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if k != len(evs) {
		t.Fatalf("the first wait reported %d events, want %d (the slice full)", k, len(evs))
	}
	readable := map[int]bool{}
	for _, e := range evs[:k] {
		readable[int(e.Fd)] = e.Readable
	}
	// Sends submitted behind the receives not yet reported: their
	// completions are applied in the wait that submits them.
	for i := range as {
		if _, err := raws[i].Write([]byte("GET / HTTP/1.1\r\n\r\n")); err != nil {
			t.Fatal(err)
		}
	}
	k, err = p.WaitNs(evs, int64(5*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range as {
		if c := p.ring.lookup(a); c.tx != nil {
			t.Fatalf("fd %d still holds its send state after a wait that saw its completion", a)
		}
	}
	for _, e := range evs[:k] {
		readable[int(e.Fd)] = e.Readable
	}
	var gone int // a connection whose event is still to be reported
	for _, a := range as {
		if !readable[a] {
			gone = a
			break
		}
	}
	p.Forget(gone)
	for deadline := time.Now().Add(time.Second); len(readable) < n-1 && time.Now().Before(deadline); {
		k, err := p.WaitNs(evs, int64(5*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs[:k] {
			if int(e.Fd) == gone {
				t.Fatalf("an event %+v of a connection forgotten before it was reported", e)
			}
			if readable[int(e.Fd)] {
				t.Fatalf("fd %d reported twice", e.Fd)
			}
			readable[int(e.Fd)] = e.Readable
		}
	}
	if len(readable) != n-1 {
		t.Fatalf("%d connections' answers reported, want %d", len(readable), n-1)
	}
	unix.Close(gone)
}

// Chunk hands out what was received in the provided buffer it landed in,
// a chunk at a time and in order, and gives each back at the next call;
// then would block; at the peer's end (nil, nil).
func TestUringChunkInPlace(t *testing.T) {
	p, a, z, raw := ringPair(t)
	p.WaitNs(make([]Event, 4), 0)                    // arms the receive
	sent := bytes.Repeat([]byte("0123456789"), 1000) // three buffers' worth
	if _, err := unix.Write(z, sent); err != nil {
		t.Fatal(err)
	}
	lo := uintptr(unsafe.Pointer(&p.ring.bufs.Buf(0)[0]))
	hi := uintptr(unsafe.Pointer(&p.ring.bufs.Buf(bufCount - 1)[0])) + bufSize
	var got []byte
	for deadline := time.Now().Add(time.Second); len(got) < len(sent) && time.Now().Before(deadline); {
		waitFor(t, p, a, func(e Event) bool { return e.Readable })
		for {
			b, err := raw.Chunk()
			if err == unix.EAGAIN {
				break
			}
			if err != nil || len(b) == 0 || len(b) > bufSize {
				t.Fatalf("chunk: %d bytes, %v", len(b), err)
			}
			if at := uintptr(unsafe.Pointer(&b[0])); at < lo || at >= hi {
				t.Fatalf("a chunk at %#x, not in the provided buffers (%#x–%#x): copied", at, lo, hi)
			}
			got = append(got, b...)
		}
	}
	if !bytes.Equal(got, sent) {
		t.Fatalf("chunks gave %d bytes, want the %d sent, in order", len(got), len(sent))
	}
	if c := p.ring.lookup(a); c.rx != nil {
		t.Fatalf("the receive queue is still held after Chunk would block: %+v", *c.rx)
	}
	unix.Close(z)
	waitFor(t, p, a, func(e Event) bool { return e.Readable && e.Hup })
	if b, err := raw.Chunk(); b != nil || err != nil {
		t.Fatalf("chunk after the peer's close: %q, %v; want nil, nil", b, err)
	}
}

// Small receives of two connections share provided buffers, each chunk
// read where it landed; a connection forgotten with chunks unread gives
// its holds back; and no buffer is lost: 200 KiB of 100-byte messages,
// many times what the first buffers hold, pass through them without the
// ring ever running out (a buffer not given back would make it hand over
// more).
func TestUringSharedBuffersComeBack(t *testing.T) {
	p, a, za, rawA := ringPair(t)
	b, zb := socketpair(t)
	if err := p.Add(b); err != nil {
		t.Fatal(err)
	}
	waitFor(t, p, b, func(e Event) bool { return e.Writable })
	rawB := p.Raw(b)
	p.WaitNs(make([]Event, 4), 0) // arms the receives
	msg := func(who byte, i int) []byte {
		return bytes.Repeat([]byte{who, byte('0' + i%10)}, 50)
	}
	for i := 0; i < 3; i++ { // a, b, a, b, a, b: one buffer, in turns
		for _, s := range []struct {
			fd  int
			who byte
		}{{za, 'a'}, {zb, 'b'}} {
			if _, err := unix.Write(s.fd, msg(s.who, i)); err != nil {
				t.Fatal(err)
			}
			waitFor(t, p, map[int]int{za: a, zb: b}[s.fd], func(e Event) bool { return e.Readable })
		}
	}
	if b0, err := rawA.Chunk(); err != nil || !bytes.Equal(b0, msg('a', 0)) {
		t.Fatalf("a's first chunk: %q, %v", b0, err)
	}
	p.Forget(a) // with a's chunk out and two unread
	unix.Close(a)
	var got []byte
	read := func() {
		for {
			c, err := rawB.Chunk()
			if err == unix.EAGAIN {
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, c...)
		}
	}
	read()
	if want := bytes.Join([][]byte{msg('b', 0), msg('b', 1), msg('b', 2)}, nil); !bytes.Equal(got, want) {
		t.Fatalf("b read %q, want %q", got, want)
	}
	given := p.ring.bufs.Given()
	var want []byte
	for i := 0; i < 2048; i++ {
		m := msg('b', i)
		want = append(want, m...)
		if _, err := unix.Write(zb, m); err != nil {
			t.Fatal(err)
		}
		for len(got) < 300+len(want) {
			waitFor(t, p, b, func(e Event) bool { return e.Readable })
			read()
		}
	}
	if !bytes.Equal(got[300:], want) {
		t.Fatalf("b read %d bytes after the first 300, want the %d sent, in order", len(got)-300, len(want))
	}
	if g := p.ring.bufs.Given(); g != given {
		t.Fatalf("the ring handed over %d buffers, then %d: one was not given back", given, g)
	}
	if n := p.ring.bufs.Held(); n != 0 {
		t.Fatalf("%d receives still held with every chunk read and a forgotten", n)
	}
}
