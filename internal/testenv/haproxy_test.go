package testenv

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestHAProxyServes: haproxy answers itself without a backend, and
// forwards to one when given.
func TestHAProxyServes(t *testing.T) {
	client := &http.Client{Timeout: 5 * time.Second}
	defer client.CloseIdleConnections()
	h := StartHAProxy(t, HAProxyOptions{})
	if !strings.HasPrefix(h.Addr, "127.0.0.1:") || !strings.Contains(h.Config, "bind fd@3") {
		t.Fatalf("Addr %q, config:\n%s", h.Addr, h.Config)
	}
	if got := get(t, client, "http://"+h.Addr+"/"); got != "ok" {
		t.Fatalf("body %q, want ok", got)
	}
	be := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "backend") }))
	defer be.Close()
	h = StartHAProxy(t, HAProxyOptions{Backend: be.Listener.Addr().String()})
	if got := get(t, client, "http://"+h.Addr+"/"); got != "backend" {
		t.Fatalf("body %q, want the backend's", got)
	}
}

// TestHAProxyIdleTimeout408: what the idle-close tests rely on: a
// connection that sends nothing within `timeout http-request` gets 408
// Request Time-out with Connection: close, and then the close.
func TestHAProxyIdleTimeout408(t *testing.T) {
	h := StartHAProxy(t, HAProxyOptions{RequestTimeout: 200 * time.Millisecond})
	c, err := net.Dial("tcp", h.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	b, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(b); !strings.HasPrefix(s, "HTTP/1.1 408 ") || !strings.Contains(strings.ToLower(s), "\r\nconnection: close\r\n") {
		t.Fatalf("an idle connection got %q, want a 408 with Connection: close", s)
	}
}

func TestStartHAProxySkipsWithoutHAProxy(t *testing.T) {
	t.Setenv("BRK_REQUIRE_SERVERS", "")
	t.Setenv("PATH", t.TempDir())
	old := fallbackHAProxy
	fallbackHAProxy = t.TempDir() + "/haproxy"
	t.Cleanup(func() { fallbackHAProxy = old })
	ran := false
	ok := t.Run("skips", func(t *testing.T) {
		StartHAProxy(t, HAProxyOptions{})
		ran = true
	})
	if !ok || ran {
		t.Fatalf("subtest passed=%v, StartHAProxy returned=%v; want a skip", ok, ran)
	}
}
