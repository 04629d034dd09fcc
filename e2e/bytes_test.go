package e2e

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"testing"
	"time"

	"github.com/brk-bench/brk"
	"github.com/brk-bench/brk/bench"
	"github.com/brk-bench/brk/internal/testenv"
)

// The bytes a phase received are its responses' bytes: against the
// fixture's /hello, whose every response has the same length (its Date
// header is fixed-width), a fixed load on kept-alive connections with
// nothing lost received exactly succeeded × that length.
func TestBytesReceived(t *testing.T) {
	testenv.Parallel(t, testenv.Busy)
	fx := startFixtureT(t, bench.FixtureConfig{})
	one := rawResponse(t, fx.Addr(), "/hello")
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	res, err := brk.Run(ctx, brk.Target{URL: fx.URL("/hello"), ExpectBody: []byte("Hello, World!")},
		brk.Plan{Conns: 4, Start: 2, Max: 2, Phase: 300 * time.Millisecond, Timeout: time.Second, Threads: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkAccounting(t, res)
	p := res.Phases[0]
	c := p.Counts
	if c.Succeeded == 0 || c.Succeeded != c.Attempted || p.Setups.Attempted != 4 {
		t.Fatalf("counts %+v setups %+v: want every request answered on 4 connections", c, p.Setups)
	}
	if want := c.Succeeded * uint64(len(one)); p.BytesReceived != want {
		t.Fatalf("received %d bytes for %d responses of %d bytes (%d)", p.BytesReceived, c.Succeeded, len(one), want)
	}
}

// rawResponse is one response to GET path, as its bytes.
func rawResponse(t *testing.T, addr, path string) []byte {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte("GET " + path + " HTTP/1.1\r\nHost: brk\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(c)
	var b bytes.Buffer
	for !bytes.HasSuffix(b.Bytes(), []byte("Hello, World!")) {
		x, err := r.ReadByte()
		if err != nil {
			t.Fatalf("after %q: %v", b.Bytes(), err)
		}
		b.WriteByte(x)
	}
	return b.Bytes()
}
