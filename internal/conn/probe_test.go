package conn

import (
	"net"
	"testing"
	"time"

	"github.com/brk-bench/brk/internal/testenv"
)

// TestProbeTLS: a port whose server answers a ClientHello with a TLS
// record speaks TLS; one that closes, answers plain bytes or refuses the
// connect does not.
func TestProbeTLS(t *testing.T) {
	for _, c := range []struct {
		name   string
		answer []byte
		want   bool
	}{
		{"alert", []byte{0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x28}, true},
		{"plain HTTP", []byte("HTTP/1.1 400 Bad Request\r\n\r\n"), false},
		{"hang-up", nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			go func() {
				s, err := ln.Accept()
				if err != nil {
					return
				}
				defer s.Close()
				b := make([]byte, 4096)
				s.Read(b)
				s.Write(c.answer)
			}()
			addrs, err := Resolve(ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			if got := ProbeTLS(addrs[0], time.Second); got != c.want {
				t.Fatalf("ProbeTLS = %v, want %v", got, c.want)
			}
		})
	}
	addrs, _ := Resolve(testenv.RefusingAddr(t))
	if ProbeTLS(addrs[0], time.Second) {
		t.Fatal("a closed port probed as TLS")
	}
}
