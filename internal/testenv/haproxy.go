package testenv

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// HAProxyOptions configures StartHAProxy.
type HAProxyOptions struct {
	// Backend is the "host:port" haproxy forwards every request to; empty
	// has haproxy answer every request itself (200, body "ok").
	Backend string
	// RequestTimeout is `timeout http-request`: how long haproxy waits for
	// a request on a connection (a new one, or a keep-alive one between
	// requests) before it gives up: on a new connection with a 408
	// Request Time-out and Connection: close, on a keep-alive one by
	// closing it. 0 means 10s.
	RequestTimeout time.Duration
}

// HAProxy is a private haproxy instance started by a test, in HTTP mode on
// 127.0.0.1.
type HAProxy struct {
	Addr   string // "127.0.0.1:PORT"
	Config string // the configuration it runs
	cmd    *exec.Cmd
	out    bytes.Buffer // haproxy's stdout and stderr
	exited chan struct{}
}

// fallbackHAProxy is where StartHAProxy looks when haproxy is not in
// PATH; tests point it elsewhere to simulate a machine without haproxy.
var fallbackHAProxy = "/usr/sbin/haproxy"

// haproxyConfig renders the configuration for opt: one frontend on the
// socket haproxy inherits as descriptor 3 (`bind fd@3`).
func haproxyConfig(opt HAProxyOptions) string {
	tmo := opt.RequestTimeout
	if tmo <= 0 {
		tmo = 10 * time.Second
	}
	var b strings.Builder
	b.WriteString("global\n  maxconn 4096\n")
	b.WriteString("defaults\n  mode http\n  timeout connect 5s\n  timeout client 30s\n  timeout server 30s\n")
	fmt.Fprintf(&b, "  timeout http-request %dms\n", tmo.Milliseconds())
	b.WriteString("frontend fe\n  bind fd@3\n")
	if opt.Backend == "" {
		b.WriteString("  http-request return status 200 content-type text/plain string ok\n")
		return b.String()
	}
	fmt.Fprintf(&b, "  default_backend be\nbackend be\n  server s1 %s\n", opt.Backend)
	return b.String()
}

// StartHAProxy starts haproxy on a listener the test opens on
// 127.0.0.1:0 and hands over as haproxy's descriptor 3, so no other
// process can take the port in between, and stops it when the test ends.
// It skips the test (or fails it when Required) if haproxy is not
// installed, and waits at most 5 s for haproxy to answer a request.
func StartHAProxy(tb testing.TB, opt HAProxyOptions) *HAProxy {
	tb.Helper()
	bin, err := lookBinary("haproxy", fallbackHAProxy)
	if err != nil {
		SkipOrFail(tb, "testenv: %v", err)
	}
	path := filepath.Join(tb.TempDir(), "haproxy.cfg")
	h := &HAProxy{Config: haproxyConfig(opt), exited: make(chan struct{})}
	if err := os.WriteFile(path, []byte(h.Config), 0o644); err != nil {
		tb.Fatal(err)
	}
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		tb.Fatalf("testenv: listen: %v", err)
	}
	h.Addr = ln.Addr().String()
	f, err := ln.File()
	ln.Close() // f holds the socket on
	if err != nil {
		tb.Fatalf("testenv: listener file: %v", err)
	}
	// -db: foreground, one process.
	h.cmd = exec.Command(bin, "-db", "-f", path)
	h.cmd.ExtraFiles = []*os.File{f} // descriptor 3
	h.cmd.Stdout, h.cmd.Stderr = &h.out, &h.out
	h.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	h.cmd.WaitDelay = time.Second
	err = h.cmd.Start()
	f.Close() // haproxy has its own copy
	if err != nil {
		tb.Fatalf("testenv: start haproxy: %v", err)
	}
	go func() { h.cmd.Wait(); close(h.exited) }()
	if err := h.ready(5 * time.Second); err != nil {
		h.stop()
		tb.Fatalf("testenv: haproxy: %v\n%s\n%s", err, h.Config, h.out.String())
	}
	tb.Cleanup(h.stop)
	return h
}

// ready waits until haproxy answers a request on its socket. The socket
// listens from the start (the kernel queues connections until haproxy
// accepts them), so a response, not a connect, tells that it runs.
func (h *HAProxy) ready(within time.Duration) error {
	c, err := net.DialTimeout("tcp", h.Addr, within)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(within))
	if _, err := c.Write([]byte("GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	select {
	case <-h.exited:
		return fmt.Errorf("exited (%v)", h.cmd.ProcessState)
	default:
	}
	if err != nil {
		return fmt.Errorf("no answer within %v: %v", within, err)
	}
	if !strings.HasPrefix(line, "HTTP/1.1 ") {
		return fmt.Errorf("answered %q", line)
	}
	return nil
}

// stop sends SIGTERM (haproxy's hard stop) and waits up to 5 s for it to
// exit, then kills its process group.
func (h *HAProxy) stop() {
	h.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-h.exited:
		return
	case <-time.After(5 * time.Second):
	}
	syscall.Kill(-h.cmd.Process.Pid, syscall.SIGKILL)
	<-h.exited
}
