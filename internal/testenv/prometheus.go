package testenv

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// PrometheusOptions configures StartPrometheus.
type PrometheusOptions struct {
	// NativeHistograms starts Prometheus with
	// --enable-feature=native-histograms, so that it stores native
	// histograms received over remote write.
	NativeHistograms bool
}

// Prometheus is a private Prometheus server started by a test, with the
// remote-write receiver enabled, no scrape targets and its TSDB in a
// temporary directory.
type Prometheus struct {
	Addr     string // "127.0.0.1:PORT"
	URL      string // "http://127.0.0.1:PORT"
	WriteURL string // the remote-write endpoint, URL + "/api/v1/write"
	Dir      string // holds prometheus.yml and data/

	cmd    *exec.Cmd
	out    *lockedBuffer
	exited chan struct{}
}

// prometheusBinary is the executable StartPrometheus runs; tests point it
// elsewhere to simulate a machine without Prometheus.
var prometheusBinary = "prometheus"

// prometheusConfig is the minimal configuration: no scrape jobs, nothing
// but what arrives over remote write.
const prometheusConfig = "global:\n  scrape_interval: 1m\n  evaluation_interval: 1m\n"

// StartPrometheus starts a private Prometheus (Debian's prometheus package)
// on a free 127.0.0.1 port with --web.enable-remote-write-receiver, waits
// until /-/ready answers 200 (at most 20 s), and stops it by PID when the
// test ends. It skips the test (or fails it when Required) if prometheus is
// not installed, and retries with a new port when the bind fails.
func StartPrometheus(tb testing.TB, opt PrometheusOptions) *Prometheus {
	tb.Helper()
	bin, err := exec.LookPath(prometheusBinary)
	if err != nil {
		SkipOrFail(tb, "testenv: prometheus not found in PATH (Debian: apt-get install prometheus)")
		return nil
	}
	var lastErr error
	for range 5 {
		p, err := startPrometheusOnce(tb, bin, opt)
		if err == nil {
			return p
		}
		lastErr = err
		if !errors.Is(err, errBind) {
			break
		}
	}
	tb.Fatalf("testenv: start prometheus: %v", lastErr)
	return nil
}

// prometheusArgs returns the command line for a server in dir on addr.
func prometheusArgs(dir, addr string, opt PrometheusOptions) []string {
	args := []string{
		"--config.file=" + filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path=" + filepath.Join(dir, "data"),
		"--web.listen-address=" + addr,
		"--web.enable-remote-write-receiver",
	}
	if opt.NativeHistograms {
		args = append(args, "--enable-feature=native-histograms")
	}
	return args
}

func startPrometheusOnce(tb testing.TB, bin string, opt PrometheusOptions) (*Prometheus, error) {
	dir := tb.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(prometheusConfig), 0o644); err != nil {
		return nil, err
	}
	addr := pickPort(tb)
	p := &Prometheus{
		Addr: addr, URL: "http://" + addr, WriteURL: "http://" + addr + "/api/v1/write", Dir: dir,
		out: &lockedBuffer{}, exited: make(chan struct{}),
	}
	p.cmd = exec.Command(bin, prometheusArgs(dir, addr, opt)...)
	p.cmd.Dir = dir // Debian's console paths are relative; keep them in dir
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p.cmd.WaitDelay = time.Second
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { p.cmd.Wait(); close(p.exited) }()

	deadline := time.Now().Add(20 * time.Second)
	// Whoever took the port between FreePort and Prometheus's bind would
	// answer /-/ready too: first the listener must be Prometheus's own.
	switch err := awaitListener(p.cmd.Process.Pid, addr, p.exited, time.Until(deadline)); {
	case errors.Is(err, errExited):
		msg := fmt.Sprintf("prometheus exited (%v): %s", p.cmd.ProcessState, p.out.String())
		if strings.Contains(msg, "address already in use") {
			return nil, fmt.Errorf("%w: %s", errBind, msg)
		}
		return nil, errors.New(msg)
	case err != nil:
		p.stop()
		return nil, fmt.Errorf("prometheus: %v:\n%s", err, p.out.String())
	}
	client := &http.Client{Timeout: time.Second}
	defer client.CloseIdleConnections()
	for {
		select {
		case <-p.exited:
			return nil, fmt.Errorf("prometheus exited (%v): %s", p.cmd.ProcessState, p.out.String())
		default:
		}
		if resp, err := client.Get(p.URL + "/-/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				tb.Cleanup(p.stop)
				return p, nil
			}
		}
		if time.Now().After(deadline) {
			p.stop()
			return nil, fmt.Errorf("prometheus not ready on %s within 20s:\n%s", addr, p.out.String())
		}
		// Polling /-/ready is the readiness signal Prometheus offers.
		time.Sleep(50 * time.Millisecond)
	}
}

// Log returns what Prometheus has written to stdout and stderr, for test
// diagnostics.
func (p *Prometheus) Log() string { return p.out.String() }

// PID returns the server's process id.
func (p *Prometheus) PID() int { return p.cmd.Process.Pid }

// Exited is closed when the server's process has exited.
func (p *Prometheus) Exited() <-chan struct{} { return p.exited }

// stop sends SIGTERM to the server and waits up to 10 s for it to exit,
// then kills its process group.
func (p *Prometheus) stop() {
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		return
	case <-time.After(10 * time.Second):
	}
	syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.exited
}

// lockedBuffer is a bytes.Buffer safe for the process's writes and the
// test's reads at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
