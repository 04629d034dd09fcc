//go:build linux

package uring

import (
	"bytes"
	"errors"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// ring sets up a ring and a buffer group of n buffers of size bytes on
// the test's thread, locked to it for the test.
func ring(t *testing.T, n, size int) (*Ring, *BufRing) {
	t.Helper()
	return ringGiving(t, n, size, n, pbufRingInc)
}

// ringGiving is ring with only the first initial buffers handed over and
// the buffer group registered with flags (pbufRingInc: filled in pieces,
// where the kernel can; 0: one receive per buffer).
func ringGiving(t *testing.T, n, size, initial int, flags uint16) (*Ring, *BufRing) {
	t.Helper()
	runtime.LockOSThread()
	t.Cleanup(runtime.UnlockOSThread)
	if err := Available(); err != nil {
		t.Skipf("io_uring: %v", err)
	}
	r, err := New(64, 256)
	if err != nil {
		t.Fatal(err)
	}
	b, err := newBufRing(r, 1, n, size, initial, flags)
	if errors.Is(err, unix.EINVAL) && flags != 0 {
		r.Close()
		t.Skipf("buffers filled in pieces: %v (Linux 6.12 has them)", err)
	}
	if err != nil {
		r.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Error(err)
		}
		if err := r.Close(); err != nil {
			t.Error(err)
		}
	})
	return r, b
}

// The probe knows a receive (Linux 5.6) and no opcode 255.
func TestSupports(t *testing.T) {
	r, err := New(8, 32)
	if err != nil {
		t.Skipf("io_uring: %v", err)
	}
	defer r.Close()
	if !r.Supports(OpRecv) || r.Supports(255) {
		t.Fatalf("supports receive %v, opcode 255 %v; want true, false", r.Supports(OpRecv), r.Supports(255))
	}
}

// arm prepares a multishot receive: PrepRecvMultishot or PrepReadMultishot.
type arm func(s *SQE, fd int, group uint16, userData uint64)

// modes runs f with buffers filled in pieces and with one receive per
// buffer, each with a multishot receive and a multishot read (where the
// kernel has it).
func modes(t *testing.T, f func(t *testing.T, flags uint16, recv arm)) {
	for _, m := range []struct {
		name  string
		flags uint16
	}{{"incremental", pbufRingInc}, {"whole", 0}} {
		for _, op := range []struct {
			name string
			arm  arm
			op   uint8
		}{{"recv", PrepRecvMultishot, OpRecv}, {"read", PrepReadMultishot, OpReadMultishot}} {
			t.Run(m.name+"/"+op.name, func(t *testing.T) {
				r, err := New(8, 32)
				if err != nil {
					t.Skipf("io_uring: %v", err)
				}
				ok := r.Supports(op.op)
				r.Close()
				if !ok {
					t.Skipf("this kernel has no opcode %d", op.op)
				}
				f(t, m.flags, op.arm)
			})
		}
	}
}

// received records completion c's bytes with b and returns them.
func received(b *BufRing, c CQE) []byte {
	off := b.Received(c.BufferID(), int(c.Res), c.Flags&CQEBufMore != 0)
	return b.Buf(c.BufferID())[off : off+int(c.Res)]
}

// pair is a connected pair of nonblocking stream sockets.
func pair(t *testing.T) (int, int) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fds[0]); unix.Close(fds[1]) })
	return fds[0], fds[1]
}

// reap waits up to a second for completions and returns them, copied.
func reap(t *testing.T, r *Ring, want int) []CQE {
	t.Helper()
	var got []CQE
	deadline := time.Now().Add(time.Second)
	for len(got) < want && time.Now().Before(deadline) {
		if err := r.Enter(1, int64(10*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		for c := r.Peek(); c != nil; c = r.Peek() {
			got = append(got, *c)
			r.Consume()
		}
	}
	if len(got) < want {
		t.Fatalf("%d completions in 1 s, want %d: %+v", len(got), want, got)
	}
	return got
}

// A multishot receive completes once per chunk, each in a provided
// buffer that holds its bytes, and stays armed (CQEMore); a send through
// the ring arrives whole; the peer's close ends the receive with 0.
func TestRecvMultishotAndSend(t *testing.T) { modes(t, testRecvMultishotAndSend) }

func testRecvMultishotAndSend(t *testing.T, flags uint16, recv arm) {
	r, b := ringGiving(t, 8, 64, 8, flags)
	a, z := pair(t)
	recv(r.SQE(), a, b.Group(), 7)
	if err := r.Submit(); err != nil {
		t.Fatal(err)
	}
	for i, msg := range []string{"hello", "world, again"} {
		if _, err := unix.Write(z, []byte(msg)); err != nil {
			t.Fatal(err)
		}
		c := reap(t, r, 1)[0]
		if c.UserData != 7 || c.Res != int32(len(msg)) || c.Flags&CQEBuffer == 0 || c.Flags&CQEMore == 0 {
			t.Fatalf("chunk %d: completion %+v, want user data 7, %d bytes in a buffer, still armed", i, c, len(msg))
		}
		if got := received(b, c); string(got) != msg {
			t.Fatalf("chunk %d: buffer %d holds %q, want %q", i, c.BufferID(), got, msg)
		}
		b.Release(c.BufferID())
		b.Publish()
	}
	out := bytes.Repeat([]byte("x"), 1000)
	PrepSend(r.SQE(), a, out, 9)
	if c := reap(t, r, 1)[0]; c.UserData != 9 || c.Res != 1000 {
		t.Fatalf("send: %+v, want user data 9, 1000 bytes", c)
	}
	in := make([]byte, 2000)
	if n, err := unix.Read(z, in); err != nil || n != 1000 {
		t.Fatalf("the peer read %d bytes (%v), want 1000", n, err)
	}
	unix.Close(z)
	if c := reap(t, r, 1)[0]; c.UserData != 7 || c.Res != 0 || c.Flags&CQEMore != 0 {
		t.Fatalf("after the peer's close: %+v, want a last completion of 0 bytes", c)
	}
}

// A response larger than a buffer arrives in several buffers, in order;
// when the group runs out of buffers the multishot receive ends with
// -ENOBUFS (no CQEMore) and, re-armed after buffers are recycled, goes on
// with the bytes the socket kept.
func TestRecvSplitAndOutOfBuffers(t *testing.T) { modes(t, testRecvSplitAndOutOfBuffers) }

func testRecvSplitAndOutOfBuffers(t *testing.T, flags uint16, recv arm) {
	r, b := ringGiving(t, 2, 16, 2, flags)
	a, z := pair(t)
	msg := bytes.Repeat([]byte("0123456789abcdef"), 4) // 64 bytes: four buffers' worth, two buffers
	if _, err := unix.Write(z, msg); err != nil {
		t.Fatal(err)
	}
	recv(r.SQE(), a, b.Group(), 3)
	var got []byte
	ended := false
	for rounds := 0; len(got) < len(msg) && rounds < 10; rounds++ {
		if ended {
			recv(r.SQE(), a, b.Group(), 3)
			ended = false
		}
		for _, c := range reap(t, r, 1) {
			switch {
			case c.Res > 0:
				got = append(got, received(b, c)...)
				b.Release(c.BufferID())
			case c.Res == -int32(unix.ENOBUFS):
				if c.Flags&CQEMore != 0 {
					t.Fatalf("-ENOBUFS with CQEMore: %+v", c)
				}
			default:
				t.Fatalf("completion %+v", c)
			}
			if c.Flags&CQEMore == 0 {
				ended = true
			}
		}
		b.Publish()
	}
	if !bytes.Equal(got, msg) {
		t.Fatalf("received %q, want %q", got, msg)
	}
}

// A ring that handed the kernel 2 of its 8 buffers runs out after 2
// chunks; Provide hands over the next ones (ids 2 and 3, never touched
// before), and a receive armed again goes on in them.
func TestProvideMore(t *testing.T) { modes(t, testProvideMore) }

func testProvideMore(t *testing.T, flags uint16, recv arm) {
	r, b := ringGiving(t, 8, 16, 2, flags)
	a, z := pair(t)
	recv(r.SQE(), a, b.Group(), 5)
	if _, err := unix.Write(z, bytes.Repeat([]byte("x"), 48)); err != nil {
		t.Fatal(err)
	}
	var ids []uint16
	got := 0
	for _, c := range reap(t, r, 3) {
		if c.Res > 0 {
			ids = append(ids, c.BufferID())
			got += int(c.Res)
		} else if c.Res != -int32(unix.ENOBUFS) {
			t.Fatalf("completion %+v", c)
		}
	}
	if got != 32 || len(ids) != 2 || b.Given() != 2 {
		t.Fatalf("%d bytes in buffers %v with %d given, want 32 in 2, then -ENOBUFS", got, ids, b.Given())
	}
	if k := b.Provide(2); k != 2 || b.Given() != 4 {
		t.Fatalf("Provide(2) handed over %d, given %d; want 2 and 4", k, b.Given())
	}
	recv(r.SQE(), a, b.Group(), 5)
	c := reap(t, r, 1)[0]
	if c.Res != 16 || (c.BufferID() != 2 && c.BufferID() != 3) {
		t.Fatalf("after Provide: %+v, want the last 16 bytes in buffer 2 or 3", c)
	}
	if k := b.Provide(100); k != 4 || b.Given() != 8 {
		t.Fatalf("Provide(100) handed over %d, given %d; want the 4 left, 8", k, b.Given())
	}
}

// Filled in pieces, a buffer takes the receives of two connections one
// after the other: each completion's bytes are where Received says, the
// kernel keeps the buffer (CQEBufMore) while it has room, and it goes back
// only once it is full and every receive in it was released; the next
// receive then lands in the other buffer.
func TestIncrementalShares(t *testing.T) {
	r, b := ringGiving(t, 2, 16, 2, pbufRingInc)
	if !b.Incremental() {
		t.Fatal("registered with pbufRingInc, not Incremental")
	}
	a1, z1 := pair(t)
	a2, z2 := pair(t)
	PrepRecvMultishot(r.SQE(), a1, b.Group(), 1)
	PrepRecvMultishot(r.SQE(), a2, b.Group(), 2)
	if err := r.Submit(); err != nil {
		t.Fatal(err)
	}
	var cs []CQE
	for i, m := range []struct {
		fd  int
		msg string
	}{{z1, "abcde"}, {z2, "fghij"}, {z1, "klmnop"}} { // 16 bytes: buffer 0, full
		if _, err := unix.Write(m.fd, []byte(m.msg)); err != nil {
			t.Fatal(err)
		}
		c := reap(t, r, 1)[0]
		if got := string(received(b, c)); got != m.msg || c.BufferID() != 0 {
			t.Fatalf("receive %d: %q in buffer %d, want %q in buffer 0", i, got, c.BufferID(), m.msg)
		}
		if full := i == 2; (c.Flags&CQEBufMore == 0) != full {
			t.Fatalf("receive %d: flags %#x; want CQEBufMore while the buffer has room", i, c.Flags)
		}
		cs = append(cs, c)
	}
	if got := string(b.Buf(0)); got != "abcdefghijklmnop" {
		t.Fatalf("buffer 0 holds %q, want the three receives in order", got)
	}
	for _, c := range cs {
		if b.tail != 2 {
			t.Fatalf("buffer 0 went back to the kernel with a receive still held (tail %d)", b.tail)
		}
		b.Release(c.BufferID())
	}
	if b.tail != 3 {
		t.Fatalf("buffer 0 full and released: tail %d, want 3 (given back)", b.tail)
	}
	b.Publish()
	if _, err := unix.Write(z2, []byte("q")); err != nil {
		t.Fatal(err)
	}
	if c := reap(t, r, 1)[0]; c.BufferID() != 1 || string(received(b, c)) != "q" {
		t.Fatalf("after buffer 0 filled: %+v, want buffer 1", c)
	}
}

// A buffer the kernel filled in one receive goes back at that receive's
// release; a buffer filled in pieces whose receives were all released
// stays the kernel's, not handed over twice, until it is full.
func TestReleaseGivesBack(t *testing.T) {
	_, whole := ringGiving(t, 4, 16, 4, 0)
	whole.Received(0, 5, false)
	whole.Release(0)
	if whole.tail != 5 {
		t.Fatalf("one receive per buffer: tail %d after the release, want 5", whole.tail)
	}
	_, inc := ringGiving(t, 4, 16, 4, pbufRingInc)
	inc.Received(0, 5, true)
	inc.Release(0)
	inc.Received(0, 0, false) // a receive of no bytes leaves the buffer as it was
	inc.Release(0)
	if inc.tail != 4 {
		t.Fatalf("in pieces: tail %d with the buffer still filling, want 4", inc.tail)
	}
	if off := inc.Received(0, 11, false); off != 5 {
		t.Fatalf("second receive at %d, want 5", off)
	}
	inc.Release(0)
	if inc.tail != 5 {
		t.Fatalf("in pieces: tail %d once full and released, want 5", inc.tail)
	}
}

// A poll completes when the socket turns writable; a cancel by user data
// ends that request alone (-ECANCELED), not another on the same socket.
func TestPollAndCancel(t *testing.T) {
	r, b := ring(t, 4, 64)
	a, _ := pair(t)
	PrepPoll(r.SQE(), a, unix.POLLOUT, false, 1)
	if c := reap(t, r, 1)[0]; c.UserData != 1 || c.Res&unix.POLLOUT == 0 {
		t.Fatalf("poll: %+v, want POLLOUT", c)
	}
	PrepRecvMultishot(r.SQE(), a, b.Group(), 2)
	PrepPoll(r.SQE(), a, unix.POLLIN, false, 4)
	if err := r.Submit(); err != nil {
		t.Fatal(err)
	}
	PrepCancel(r.SQE(), 2, 3)
	var recv, cancel *CQE
	for _, c := range reap(t, r, 2) {
		switch c.UserData {
		case 2:
			recv = &c
		case 3:
			cancel = &c
		default:
			t.Fatalf("completion %+v: only the receive was cancelled", c)
		}
	}
	if recv == nil || recv.Res != -int32(unix.ECANCELED) || cancel == nil || cancel.Res != 0 {
		t.Fatalf("receive %+v, cancel %+v: want -ECANCELED and the cancel done", recv, cancel)
	}
	if err := r.Enter(1, int64(20*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if c := r.Peek(); c != nil {
		t.Fatalf("completion %+v: the poll on the same socket was not to end", *c)
	}
}

// Enter with a timeout and nothing to complete returns after about that
// long, without an error.
func TestEnterTimeout(t *testing.T) {
	r, _ := ring(t, 2, 64)
	start := time.Now()
	if err := r.Enter(1, int64(20*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 15*time.Millisecond {
		t.Fatalf("returned after %v, want about 20 ms", d)
	}
	if r.Peek() != nil {
		t.Fatal("a completion with nothing submitted")
	}
}
