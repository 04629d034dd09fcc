package testenv

import (
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// procNeeded skips a test of ListensOn where there is no /proc.
func procNeeded(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/proc/self/net/tcp"); err != nil {
		t.Skip("no /proc/self/net/tcp: ListensOn needs Linux's /proc")
	}
}

// TestListensOn: the kernel names the listener's owner: this process for
// its own listeners (IPv4 and IPv6), no one once it is closed, and not a
// process that merely runs.
func TestListensOn(t *testing.T) {
	procNeeded(t)
	for _, network := range []string{"tcp4", "tcp6"} {
		host := map[string]string{"tcp4": "127.0.0.1", "tcp6": "[::1]"}[network]
		ln, err := net.Listen(network, host+":0")
		if err != nil {
			t.Logf("%s: %v (skipped)", network, err)
			continue
		}
		addr := ln.Addr().String()
		if ok, err := ListensOn(os.Getpid(), addr); !ok || err != nil {
			t.Errorf("%s: ListensOn(self, %s) = %v, %v; want true", network, addr, ok, err)
		}
		ln.Close()
		if ok, err := ListensOn(os.Getpid(), addr); ok || err != nil {
			t.Errorf("%s: ListensOn(self, %s) after Close = %v, %v; want false", network, addr, ok, err)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	other := exec.Command("sleep", "10")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { other.Process.Kill(); other.Wait() }()
	if ok, err := ListensOn(other.Process.Pid, ln.Addr().String()); ok || err != nil {
		t.Errorf("ListensOn(sleep, this process's listener) = %v, %v; want false", ok, err)
	}
}

// takenPort holds a listener that answers every connection "HTTP/1.0 200
// OK" with body "impostor" (as another process's server on the port would)
// and makes pickPort return its address first, then free ports. It
// returns the address and how many ports were picked so far.
func takenPort(t *testing.T) (string, func() int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("HTTP/1.0 200 OK\r\nContent-Length: 8\r\n\r\nimpostor"))
			c.Close()
		}
	}()
	picks := 0
	old := pickPort
	pickPort = func(tb testing.TB) string {
		picks++
		if picks == 1 {
			return ln.Addr().String()
		}
		return FreePort(tb)
	}
	t.Cleanup(func() { pickPort = old })
	return ln.Addr().String(), func() int { return picks }
}

// TestStartNginxRetriesATakenPort: when another process holds the port
// chosen first, nginx fails to bind it, and StartNginx starts it again on
// another port instead of handing the test the other process's server.
func TestStartNginxRetriesATakenPort(t *testing.T) {
	procNeeded(t)
	taken, picks := takenPort(t)
	n := StartNginx(t, NginxOptions{})
	if n.Addr == taken || picks() != 2 {
		t.Fatalf("nginx on %s after %d picks; the first pick %s was taken, want a second port", n.Addr, picks(), taken)
	}
	client := &http.Client{Timeout: 5 * time.Second}
	defer client.CloseIdleConnections()
	if got := get(t, client, "http://"+n.Addr+"/"); got != "ok" {
		t.Fatalf("body %q, want nginx's ok", got)
	}
}

// TestStartPrometheusRetriesATakenPort: as for nginx, a taken first port
// gives a Prometheus on a second port, not the taken port's server.
func TestStartPrometheusRetriesATakenPort(t *testing.T) {
	procNeeded(t)
	taken, picks := takenPort(t)
	p := StartPrometheus(t, PrometheusOptions{})
	if p.Addr == taken || picks() != 2 {
		t.Fatalf("prometheus on %s after %d picks; the first pick %s was taken, want a second port", p.Addr, picks(), taken)
	}
	if f := flags(t, p); f["web.listen-address"] != p.Addr {
		t.Fatalf("flags %v, want web.listen-address %s", f, p.Addr)
	}
}

// TestStartH2OHandsItsListenerOver: h2o serves on the listener the helper
// opened (its own process holds it: no other process could have bound the
// port in between) and answers over TLS with ALPN h2.
func TestStartH2OHandsItsListenerOver(t *testing.T) {
	procNeeded(t)
	ca := NewCA(t)
	h := StartH2O(t, ca.Server(t, "localhost", "127.0.0.1"), "")
	if ok, err := ListensOn(h.cmd.Process.Pid, h.Addr); !ok || err != nil {
		t.Fatalf("ListensOn(h2o, %s) = %v, %v; want true", h.Addr, ok, err)
	}
	if ok, _ := ListensOn(os.Getpid(), h.Addr); ok {
		t.Errorf("the test process still holds h2o's listener %s", h.Addr)
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool, ServerName: "localhost"}, ForceAttemptHTTP2: true}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr, Timeout: 5 * time.Second}).Get("https://" + h.Addr + "/ok.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.ProtoMajor != 2 || strings.TrimSpace(string(b)) != "ok" || !strings.HasPrefix(resp.Header.Get("Server"), "h2o") {
		t.Fatalf("%s %d %q (server %q), want HTTP/2 200 ok from h2o", resp.Proto, resp.StatusCode, b, resp.Header.Get("Server"))
	}
}

// TestRefusingAddr: connections to the address are refused, and no
// listener can take its port while the test holds it.
func TestRefusingAddr(t *testing.T) {
	addr := RefusingAddr(t)
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Fatalf("dial %s: connected, want refused", addr)
	} else if !strings.Contains(err.Error(), "refused") {
		t.Fatalf("dial %s: %v, want refused", addr, err)
	}
	if ln, err := net.Listen("tcp", addr); err == nil {
		ln.Close()
		t.Fatalf("listen %s: bound a port RefusingAddr holds", addr)
	}
}
