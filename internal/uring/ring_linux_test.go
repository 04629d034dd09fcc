//go:build linux

package uring

import (
	"bytes"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// ring sets up a ring and a buffer group of n buffers of size bytes on
// the test's thread, locked to it for the test.
func ring(t *testing.T, n, size int) (*Ring, *BufRing) {
	t.Helper()
	return ringGiving(t, n, size, n)
}

// ringGiving is ring with only the first initial buffers handed over.
func ringGiving(t *testing.T, n, size, initial int) (*Ring, *BufRing) {
	t.Helper()
	runtime.LockOSThread()
	t.Cleanup(runtime.UnlockOSThread)
	if err := Available(); err != nil {
		t.Skipf("io_uring: %v", err)
	}
	r, err := New(64)
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewBufRing(r, 1, n, size, initial)
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
func TestRecvMultishotAndSend(t *testing.T) {
	r, b := ring(t, 8, 64)
	a, z := pair(t)
	PrepRecvMultishot(r.SQE(), a, b.Group(), 7)
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
		if got := b.Buf(c.BufferID())[:c.Res]; string(got) != msg {
			t.Fatalf("chunk %d: buffer %d holds %q, want %q", i, c.BufferID(), got, msg)
		}
		b.Recycle(c.BufferID())
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
func TestRecvSplitAndOutOfBuffers(t *testing.T) {
	r, b := ring(t, 2, 16)
	a, z := pair(t)
	msg := bytes.Repeat([]byte("0123456789abcdef"), 4) // 64 bytes: four buffers' worth, two buffers
	if _, err := unix.Write(z, msg); err != nil {
		t.Fatal(err)
	}
	PrepRecvMultishot(r.SQE(), a, b.Group(), 3)
	var got []byte
	ended := false
	for rounds := 0; len(got) < len(msg) && rounds < 10; rounds++ {
		if ended {
			PrepRecvMultishot(r.SQE(), a, b.Group(), 3)
			ended = false
		}
		for _, c := range reap(t, r, 1) {
			switch {
			case c.Res > 0:
				got = append(got, b.Buf(c.BufferID())[:c.Res]...)
				b.Recycle(c.BufferID())
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
func TestProvideMore(t *testing.T) {
	r, b := ringGiving(t, 8, 16, 2)
	a, z := pair(t)
	PrepRecvMultishot(r.SQE(), a, b.Group(), 5)
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
	PrepRecvMultishot(r.SQE(), a, b.Group(), 5)
	c := reap(t, r, 1)[0]
	if c.Res != 16 || (c.BufferID() != 2 && c.BufferID() != 3) {
		t.Fatalf("after Provide: %+v, want the last 16 bytes in buffer 2 or 3", c)
	}
	if k := b.Provide(100); k != 4 || b.Given() != 8 {
		t.Fatalf("Provide(100) handed over %d, given %d; want the 4 left, 8", k, b.Given())
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
