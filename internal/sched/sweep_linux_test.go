package sched

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/brk-bench/brk/internal/conn"
	"github.com/brk-bench/brk/internal/exchange"
	"github.com/brk-bench/brk/internal/h1"
)

// silentListener listens on 127.0.0.1 and never accepts: Linux completes
// each connect into its accept queue (somaxconn deep), so a connect ends
// as soon as the kernel has answered it, whatever the server does.
func silentListener(t *testing.T) (net.Listener, conn.Addr) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	addrs, err := conn.Resolve(ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	return ln, addrs[0]
}

// connectPass sets up conns connections to a listener that never
// accepts, on one worker with the given timeout, and returns how many
// were established, how many failed, and how long the pass took.
func connectPass(t *testing.T, io IO, conns int, timeout time.Duration) (established, failed uint64, took time.Duration) {
	t.Helper()
	_, addr := silentListener(t)
	tpl, err := h1.NewTemplate(exchange.Request{Host: "127.0.0.1", Target: "/plain"}, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	e, err := Start(Config{
		Threads: 1, Conns: conns, Addr: addr, Replay: true, Timeout: timeout, IO: io,
		NewSession: func() Session { return h1.NewSession(tpl) },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	start := time.Now()
	e.Connect(context.Background(), 30*time.Second)
	s := e.Snapshot()
	return s.Established, s.SetupFailed, time.Since(start)
}

// TestThousandsOfConnectsHeardInTime: a worker that sets up thousands of
// connections at once polls between slices of them, so each connect is
// heard as soon as the kernel answered it. Dialed all before one poll, a
// pass of 3,000 loopback connects outlasted a 100 ms timeout, and every
// connect fired as timed out, though the server had answered each within
// microseconds: a flagless run against the fixture with --conn 3000
// --timeout 100ms said "Broken" on 3,000 connect timeouts. The model: the
// pass costs this machine what a pass with a long timeout took just
// before; a timeout of half that fails every connect of a pass done
// before one poll, and none of a pass that polls between slices. The
// timeout is at least 50 ms, longer than a busy box keeps a runnable
// thread off its CPU.
func TestThousandsOfConnectsHeardInTime(t *testing.T) {
	for _, io := range []IO{IOEpoll, IOUring} {
		t.Run(ioName(io), func(t *testing.T) {
			skipWithoutRing(t, io)
			thousandsOfConnects(t, io)
		})
	}
}

func thousandsOfConnects(t *testing.T, io IO) {
	const conns = 3000 // below the accept queue's 4096
	ok, failed, pass := connectPass(t, io, conns, 30*time.Second)
	if ok != conns || failed != 0 {
		t.Fatalf("with a 30 s timeout %d of %d connects established, %d failed", ok, conns, failed)
	}
	timeout := max(pass/2, 50*time.Millisecond)
	ok, failed, took := connectPass(t, io, conns, timeout)
	t.Logf("a pass of %d connects took %v; at a timeout of %v: %d established, %d failed in %v", conns, pass, timeout, ok, failed, took)
	if ok != conns || failed != 0 {
		t.Fatalf("%d of %d connects established, %d failed (timed out): the kernel answered each at once", ok, conns, failed)
	}
}
