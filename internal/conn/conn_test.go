//go:build linux || darwin || dragonfly || freebsd

package conn

import (
	"errors"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/brk-bench/brk/internal/testenv"
)

func TestResolve(t *testing.T) {
	a, err := Resolve("127.0.0.1:8080")
	if err != nil || len(a) != 1 || a[0].String() != "127.0.0.1:8080" {
		t.Fatalf("got %v %v", a, err)
	}
	a, err = Resolve("[::1]:80")
	if err != nil || a[0].String() != "[::1]:80" {
		t.Fatalf("got %v %v", a, err)
	}
	if _, err := Resolve("no-port"); err == nil {
		t.Fatal("accepted an address without a port")
	}
}

func TestExhaustedNamesTheLimit(t *testing.T) {
	for _, errno := range []unix.Errno{unix.EMFILE, unix.ENFILE, unix.EADDRNOTAVAIL} {
		msg, ok := Exhausted(os.NewSyscallError("socket", errno))
		if !ok || !strings.Contains(msg, "client") {
			t.Errorf("%v: %q %v", errno, msg, ok)
		}
	}
	if _, ok := Exhausted(os.NewSyscallError("connect", unix.ECONNREFUSED)); ok {
		t.Error("a refused connect is not a client resource failure")
	}
	if msg, _ := Exhausted(unix.EMFILE); !strings.Contains(msg, "RLIMIT_NOFILE") {
		t.Errorf("EMFILE message %q does not name the limit", msg)
	}
}

func TestDialFinishAndTransfer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addrs, _ := Resolve(ln.Addr().String())
	fd, err := NewDialer(addrs[0]).Dial()
	if err != nil {
		t.Fatal(err)
	}
	var p Plain
	p.Open(fd)
	defer Close(fd)
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := Finish(fd); err != nil {
		t.Fatalf("Finish after accept: %v", err)
	}
	if _, err := p.Read(make([]byte, 8)); !errors.Is(err, ErrWouldBlock) {
		t.Fatalf("empty read: %v, want ErrWouldBlock", err)
	}
	if n, err := p.Write([]byte("ping")); n != 4 || err != nil {
		t.Fatalf("write %d %v", n, err)
	}
	buf := make([]byte, 4)
	if _, err := c.Read(buf); err != nil || string(buf) != "ping" {
		t.Fatalf("server read %q %v", buf, err)
	}
	// A short read returns its bytes with ErrWouldBlock: the socket is
	// drained, and the reader need not ask again in this event. A read
	// that fills the buffer says nothing of what is left.
	if _, err := c.Write([]byte("pong")); err != nil {
		t.Fatal(err)
	}
	waitReadable(t, fd)
	if n, err := p.Read(make([]byte, 64)); n != 4 || !errors.Is(err, ErrWouldBlock) {
		t.Fatalf("short read %d %v, want 4 bytes and ErrWouldBlock", n, err)
	}
	if _, err := c.Write([]byte("more")); err != nil {
		t.Fatal(err)
	}
	waitReadable(t, fd)
	if n, err := p.Read(make([]byte, 4)); n != 4 || err != nil {
		t.Fatalf("full read %d %v, want 4 bytes and no error", n, err)
	}
	if _, err := p.Read(make([]byte, 64)); !errors.Is(err, ErrWouldBlock) {
		t.Fatalf("read of a drained socket: %v, want ErrWouldBlock", err)
	}
	// After a hang-up the transport reads to the end.
	c.Write([]byte("last"))
	c.Close()
	waitReadable(t, fd)
	p.Arm(true)
	if n, err := p.Read(make([]byte, 64)); n != 4 || err != nil {
		t.Fatalf("short read after hup: %d %v, want 4 bytes and no error (read to the end)", n, err)
	}
	if n, err := p.Read(make([]byte, 64)); n != 0 || err != nil {
		t.Fatalf("read at the end: %d %v, want 0, nil", n, err)
	}
}

func waitReadable(t *testing.T, fd int) {
	t.Helper()
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	if n, err := unix.Poll(fds, 2000); n != 1 || err != nil {
		t.Fatalf("poll: %d %v", n, err)
	}
	time.Sleep(5 * time.Millisecond) // let a close follow its data
}

func TestDialRefused(t *testing.T) {
	addrs, _ := Resolve(testenv.RefusingAddr(t))
	fd, err := NewDialer(addrs[0]).Dial()
	if err != nil {
		return // refused at once
	}
	defer Close(fd)
	for i := 0; i < 1000; i++ {
		err = Finish(fd)
		if err != ErrWouldBlock {
			break
		}
	}
	if err == nil || !errors.Is(err, unix.ECONNREFUSED) {
		t.Fatalf("Finish on a closed port: %v, want ECONNREFUSED", err)
	}
}
