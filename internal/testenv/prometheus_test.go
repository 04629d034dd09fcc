package testenv

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// flags returns the server's command-line flags from its status API.
func flags(t *testing.T, p *Prometheus) map[string]string {
	t.Helper()
	resp, err := http.Get(p.URL + "/api/v1/status/flags")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Status string            `json:"status"`
		Data   map[string]string `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || body.Status != "success" {
		t.Fatalf("flags: %v, status %q", err, body.Status)
	}
	return body.Data
}

func TestPrometheusStartsAndStops(t *testing.T) {
	var p *Prometheus
	t.Run("run", func(t *testing.T) {
		p = StartPrometheus(t, PrometheusOptions{})
		if !strings.HasPrefix(p.Addr, "127.0.0.1:") || p.WriteURL != p.URL+"/api/v1/write" {
			t.Fatalf("Addr %q, WriteURL %q", p.Addr, p.WriteURL)
		}
		f := flags(t, p)
		if f["web.enable-remote-write-receiver"] != "true" || f["web.listen-address"] != p.Addr ||
			!strings.HasPrefix(f["storage.tsdb.path"], p.Dir) || f["enable-feature"] != "" {
			t.Fatalf("flags: %v", f)
		}
		// The remote-write endpoint is there: an empty body is refused
		// as bad input, not as an unknown path.
		resp, err := http.Post(p.WriteURL, "application/x-protobuf", strings.NewReader("x"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusNotFound {
			t.Fatalf("POST %s: 404; remote-write receiver not enabled", p.WriteURL)
		}
	})
	if p == nil {
		return // skipped
	}
	select {
	case <-p.Exited():
	case <-time.After(time.Second):
		t.Fatalf("prometheus (pid %d) still running after the test's cleanup", p.PID())
	}
	if err := syscall.Kill(p.PID(), 0); err == nil {
		t.Fatalf("pid %d still exists", p.PID())
	}
}

func TestPrometheusNativeHistogramsFlag(t *testing.T) {
	p := StartPrometheus(t, PrometheusOptions{NativeHistograms: true})
	if f := flags(t, p)["enable-feature"]; f != "native-histograms" {
		t.Fatalf("enable-feature = %q", f)
	}
}

func TestPrometheusArgs(t *testing.T) {
	got := prometheusArgs("/d", "127.0.0.1:1", PrometheusOptions{NativeHistograms: true})
	want := []string{"--config.file=/d/prometheus.yml", "--storage.tsdb.path=/d/data",
		"--web.listen-address=127.0.0.1:1", "--web.enable-remote-write-receiver", "--enable-feature=native-histograms"}
	if !slices.Equal(got, want) {
		t.Fatalf("args %q, want %q", got, want)
	}
}

func TestStartPrometheusSkipsOrFailsWithoutIt(t *testing.T) {
	old := prometheusBinary
	prometheusBinary = t.TempDir() + "/prometheus"
	t.Cleanup(func() { prometheusBinary = old })

	t.Setenv("BRK_REQUIRE_SERVERS", "")
	r := &recorder{TB: t}
	if p := StartPrometheus(r, PrometheusOptions{}); p != nil || !r.skipped || r.failed {
		t.Fatalf("not required: skipped=%v failed=%v", r.skipped, r.failed)
	}
	t.Setenv("BRK_REQUIRE_SERVERS", "1")
	r = &recorder{TB: t}
	if p := StartPrometheus(r, PrometheusOptions{}); p != nil || r.skipped || !r.failed {
		t.Fatalf("required: skipped=%v failed=%v", r.skipped, r.failed)
	}
}
