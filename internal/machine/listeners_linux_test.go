//go:build linux

package machine

import (
	"maps"
	"net"
	"strconv"
	"testing"
)

// The kernel's sock_diag answer names the same listening sockets as
// /proc/net/tcp{,6}: IPv4 and IPv6 listeners this test opens on one port,
// and none once they closed.
func TestListeningInodesDiag(t *testing.T) {
	ln4, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln4.Close()
	port := ln4.Addr().(*net.TCPAddr).Port
	lns := []net.Listener{ln4}
	if ln6, err := net.Listen("tcp6", net.JoinHostPort("::1", strconv.Itoa(port))); err == nil {
		defer ln6.Close()
		lns = append(lns, ln6)
	}
	want := map[string]bool{}
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		listeningInodes(f, port, want)
	}
	if len(want) == 0 {
		t.Skip("/proc/net/tcp is not readable here")
	}
	got, err := listeningInodesDiag(port)
	if err != nil {
		t.Fatalf("sock_diag: %v (LoopbackServers falls back to /proc/net/tcp)", err)
	}
	if !maps.Equal(got, want) || len(got) != len(lns) {
		t.Fatalf("sock_diag found %v, /proc/net/tcp %v", got, want)
	}
	for _, ln := range lns {
		ln.Close()
	}
	if got, err := listeningInodesDiag(port); err != nil || len(got) != 0 {
		t.Fatalf("after the listener closed: %v, %v", got, err)
	}
}
