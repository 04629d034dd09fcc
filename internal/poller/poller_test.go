//go:build linux || darwin || dragonfly || freebsd

package poller

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func socketpair(t *testing.T) (int, int) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		if err := unix.SetNonblock(fd, true); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { unix.Close(fds[0]); unix.Close(fds[1]) })
	return fds[0], fds[1]
}

// collect waits once and merges the events of fd (kqueue reports read and
// write readiness as separate events).
func collect(t *testing.T, p *Poller, fd int, timeoutMs int) (ev Event, n int) {
	t.Helper()
	evs := make([]Event, 16)
	k, err := p.Wait(evs, timeoutMs)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs[:k] {
		if int(e.Fd) != fd {
			t.Fatalf("event for unknown fd %d", e.Fd)
		}
		ev.Fd = e.Fd
		ev.Readable = ev.Readable || e.Readable
		ev.Writable = ev.Writable || e.Writable
		ev.Hup = ev.Hup || e.Hup
		n++
	}
	return ev, n
}

func TestEdgeTriggeredReadWriteAndHangup(t *testing.T) {
	p, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	a, b := socketpair(t)
	if err := p.Add(a); err != nil {
		t.Fatal(err)
	}
	ev, n := collect(t, p, a, 1000)
	if n == 0 || !ev.Writable || ev.Readable {
		t.Fatalf("first event %+v (n=%d), want writable only", ev, n)
	}
	// Edge-triggered: no new edge, no event.
	if _, n := collect(t, p, a, 10); n != 0 {
		t.Fatalf("%d events without a new edge", n)
	}
	unix.Write(b, []byte("hello"))
	ev, n = collect(t, p, a, 1000)
	if n == 0 || !ev.Readable {
		t.Fatalf("after peer write: %+v, want readable", ev)
	}
	buf := make([]byte, 16)
	if k, _ := unix.Read(a, buf); k != 5 {
		t.Fatalf("read %d bytes", k)
	}
	unix.Close(b)
	ev, n = collect(t, p, a, 1000)
	if n == 0 || !ev.Readable || !ev.Hup {
		t.Fatalf("after peer close: %+v, want readable and hup", ev)
	}
}

func TestWakeInterruptsWait(t *testing.T) {
	p, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	done := make(chan int, 1)
	go func() {
		evs := make([]Event, 4)
		n, _ := p.Wait(evs, 10_000)
		done <- n
	}()
	time.Sleep(20 * time.Millisecond)
	if err := p.Wake(); err != nil {
		t.Fatal(err)
	}
	select {
	case n := <-done:
		if n != 0 {
			t.Fatalf("wake reported %d events, want 0", n)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Wake did not interrupt Wait")
	}
}
