package testenv

import (
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

func get(t *testing.T, client *http.Client, url string) string {
	t.Helper()
	resp, err := client.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: read body: %v", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: status %d, body %q", url, resp.StatusCode, b)
	}
	return string(b)
}

func TestNginxServesAndLogs(t *testing.T) {
	n := StartNginx(t, NginxOptions{})
	if !strings.HasPrefix(n.Addr, "127.0.0.1:") {
		t.Fatalf("Addr = %q", n.Addr)
	}
	client := &http.Client{Timeout: 5 * time.Second}
	defer client.CloseIdleConnections()
	for range 3 {
		if got := get(t, client, "http://"+n.Addr+"/"); got != "ok" {
			t.Fatalf("body = %q, want ok", got)
		}
	}
	if got := n.WaitRequests(t, 3, 5*time.Second); got != 3 {
		t.Fatalf("access log has %d lines, want 3\nerror log:\n%s", got, n.ErrorLog())
	}
}

func TestNginxOptions(t *testing.T) {
	n := StartNginx(t, NginxOptions{
		Location:          `return 200 "custom";`,
		Workers:           2,
		KeepaliveRequests: 2,
		ExtraHTTP:         "server_tokens off;",
	})
	conf, err := os.ReadFile(n.Prefix + "/nginx.conf")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"worker_processes 2;", "keepalive_requests 2;", "server_tokens off;", "worker_rlimit_nofile 30000;"} {
		if !strings.Contains(string(conf), want) {
			t.Errorf("config lacks %q:\n%s", want, conf)
		}
	}
	client := &http.Client{Timeout: 5 * time.Second}
	defer client.CloseIdleConnections()
	if got := get(t, client, "http://"+n.Addr+"/x"); got != "custom" {
		t.Fatalf("body = %q, want custom", got)
	}
}

func TestNginxConfigDefaults(t *testing.T) {
	conf := nginxConfig("/p", "127.0.0.1:1", NginxOptions{})
	for _, want := range []string{
		"daemon off;", "master_process on;", "worker_processes 1;",
		"error_log /p/error.log;", "pid /p/nginx.pid;", "worker_connections 20000;",
		"access_log /p/access.log;", "client_body_temp_path /p/client_body_temp;",
		"proxy_temp_path /p/proxy_temp;", "fastcgi_temp_path /p/fastcgi_temp;",
		"uwsgi_temp_path /p/uwsgi_temp;", "scgi_temp_path /p/scgi_temp;",
		"listen 127.0.0.1:1;", `location / { return 200 "ok"; }`,
	} {
		if !strings.Contains(conf, want) {
			t.Errorf("config lacks %q:\n%s", want, conf)
		}
	}
	if strings.Contains(conf, "keepalive_requests") {
		t.Errorf("config sets keepalive_requests by default:\n%s", conf)
	}
	if hasUser := strings.Contains(conf, "user root;"); hasUser != (os.Geteuid() == 0) {
		t.Errorf("user root present = %v with euid %d", hasUser, os.Geteuid())
	}
}

func TestFreePort(t *testing.T) {
	a, b := FreePort(t), FreePort(t)
	if !strings.HasPrefix(a, "127.0.0.1:") || a == b {
		t.Fatalf("FreePort = %q, %q", a, b)
	}
}

func TestRequired(t *testing.T) {
	t.Setenv("BRK_REQUIRE_SERVERS", "1")
	if !Required() {
		t.Fatal("Required() = false with BRK_REQUIRE_SERVERS=1")
	}
	t.Setenv("BRK_REQUIRE_SERVERS", "")
	if Required() {
		t.Fatal("Required() = true without BRK_REQUIRE_SERVERS")
	}
}

// recorder captures whether SkipOrFail skipped or failed.
type recorder struct {
	testing.TB
	skipped, failed bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Skipf(string, ...any)  { r.skipped = true }
func (r *recorder) Fatalf(string, ...any) { r.failed = true }

func TestSkipOrFail(t *testing.T) {
	t.Setenv("BRK_REQUIRE_SERVERS", "")
	r := &recorder{TB: t}
	SkipOrFail(r, "no %s", "nginx")
	if !r.skipped || r.failed {
		t.Fatalf("not required: skipped=%v failed=%v", r.skipped, r.failed)
	}
	t.Setenv("BRK_REQUIRE_SERVERS", "1")
	r = &recorder{TB: t}
	SkipOrFail(r, "no %s", "nginx")
	if r.skipped || !r.failed {
		t.Fatalf("required: skipped=%v failed=%v", r.skipped, r.failed)
	}
}

func TestStartNginxSkipsWithoutNginx(t *testing.T) {
	t.Setenv("BRK_REQUIRE_SERVERS", "")
	t.Setenv("PATH", t.TempDir())
	old := fallbackNginx
	fallbackNginx = t.TempDir() + "/nginx"
	t.Cleanup(func() { fallbackNginx = old })
	ran := false
	ok := t.Run("skips", func(t *testing.T) {
		StartNginx(t, NginxOptions{})
		ran = true
	})
	if !ok || ran {
		t.Fatalf("subtest passed=%v, StartNginx returned=%v; want a skip", ok, ran)
	}
}
