//go:build linux || darwin || dragonfly || freebsd

package conn

import (
	"crypto/tls"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/brk-bench/brk/internal/testenv"
)

// A TLS connection whose peer does not read buffers at most one write's
// ciphertext: a large body is taken 64 KiB at a time, never copied whole
// into the connection.
func TestTLSWriteBuffersBoundedCiphertext(t *testing.T) {
	ca := testenv.NewCA(t)
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{ca.Server(t, "127.0.0.1").Cert}})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			c.(*tls.Conn).Handshake() // then never read
		}
		accepted <- c
	}()
	addrs, _ := Resolve(ln.Addr().String())
	fd, err := NewDialer(addrs[0]).Dial()
	if err != nil {
		t.Fatal(err)
	}
	defer Close(fd)
	for Finish(fd) == ErrWouldBlock {
		time.Sleep(time.Millisecond)
	}
	tr, err := Handshake(fd, &tls.Config{RootCAs: ca.Pool, ServerName: "127.0.0.1"}, time.Now().Add(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if c := <-accepted; c != nil {
		defer c.Close()
	}
	body := make([]byte, 64<<20)
	taken := 0
	for taken < len(body) {
		n, err := tr.Write(body[taken:])
		if errors.Is(err, ErrWouldBlock) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if n > maxTLSWrite {
			t.Fatalf("one write took %d bytes", n)
		}
		taken += n
	}
	if taken == len(body) {
		t.Fatal("a peer that never reads took 64 MiB")
	}
	if len(tr.s.out) > maxTLSWrite+(maxTLSWrite/16384+1)*64 {
		t.Fatalf("%d bytes of ciphertext buffered", len(tr.s.out))
	}
	t.Logf("took %d bytes before the socket filled; %d bytes of ciphertext buffered", taken, len(tr.s.out))
}
