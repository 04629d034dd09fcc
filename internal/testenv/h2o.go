package testenv

import (
	"bytes"
	"errors"
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

// H2O is a private h2o instance started by a test: HTTPS with ALPN h2 on
// 127.0.0.1, one thread, serving the file /ok.txt ("ok") and logging every
// request.
type H2O struct {
	Addr      string // "127.0.0.1:PORT"
	AccessLog string
	ErrorLog  string
	cmd       *exec.Cmd
	exited    chan struct{}
}

// StartH2O starts h2o over TLS with leaf (nil: a fresh CA's
// Server("localhost", "127.0.0.1")) and stops it when the test ends. It
// skips the test (or fails it when Required) if h2o is not installed.
// extra is appended to the configuration's top level (e.g.
// "http2-max-concurrent-requests-per-connection: 4").
func StartH2O(tb testing.TB, leaf *Leaf, extra string) *H2O {
	tb.Helper()
	bin, err := exec.LookPath("h2o")
	if err != nil {
		SkipOrFail(tb, "testenv: h2o not found in PATH")
	}
	if leaf == nil {
		leaf = NewCA(tb).Server(tb, "localhost", "127.0.0.1")
	}
	dir := tb.TempDir()
	docs := filepath.Join(dir, "docs")
	if err := os.Mkdir(docs, 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(docs, "ok.txt"), []byte("ok"), 0o644); err != nil {
		tb.Fatal(err)
	}
	user := ""
	if os.Geteuid() == 0 {
		// As root h2o would switch to nobody, who cannot read the test's
		// temp dir.
		user = "user: root\n"
	}
	// h2o takes its listener from the environment as Server::Starter
	// hands it over (SERVER_STARTER_PORT="ADDR=FD"): the port is held from
	// choosing it to serving it, and no other process can take it between.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("testenv: listen: %v", err)
	}
	defer ln.Close() // the child holds its own copy
	lnFile, err := ln.(*net.TCPListener).File()
	if err != nil {
		tb.Fatalf("testenv: listener file: %v", err)
	}
	defer lnFile.Close()
	addr := ln.Addr().String()
	_, port, _ := net.SplitHostPort(addr)
	h := &H2O{Addr: addr, AccessLog: filepath.Join(dir, "access.log"), ErrorLog: filepath.Join(dir, "error.log"), exited: make(chan struct{})}
	conf := fmt.Sprintf(`listen:
  host: 127.0.0.1
  port: %s
  ssl:
    certificate-file: %s
    key-file: %s
num-threads: 1
%serror-log: %s
access-log: %s
%s
hosts:
  default:
    paths:
      /:
        file.dir: %s
`, port, leaf.CertPath, leaf.KeyPath, user, h.ErrorLog, h.AccessLog, extra, docs)
	path := filepath.Join(dir, "h2o.conf")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		tb.Fatal(err)
	}
	out := &lockedBuffer{}
	h.cmd = exec.Command(bin, "-c", path)
	h.cmd.ExtraFiles = []*os.File{lnFile} // fd 3
	h.cmd.Env = append(os.Environ(), "SERVER_STARTER_PORT="+addr+"=3")
	h.cmd.Stdout, h.cmd.Stderr = out, out
	h.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	h.cmd.WaitDelay = time.Second
	if err := h.cmd.Start(); err != nil {
		tb.Fatalf("testenv: start h2o: %v", err)
	}
	go func() { h.cmd.Wait(); close(h.exited) }()
	// The listener accepts from the start (the kernel queues connections
	// until h2o serves them); h2o says when it serves.
	deadline := time.Now().Add(5 * time.Second)
	for !h.serving(out) {
		select {
		case <-h.exited:
			log, _ := os.ReadFile(h.ErrorLog)
			tb.Fatalf("testenv: h2o exited (%v): %s%s", h.cmd.ProcessState, out.String(), log)
		default:
		}
		if time.Now().After(deadline) {
			h.stop()
			tb.Fatalf("testenv: h2o did not say it serves within 5s: %s", out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	tb.Cleanup(h.stop)
	return h
}

// serving reports whether h2o said it serves requests, on its output or
// in its error log (where it writes once error-log is set).
func (h *H2O) serving(out *lockedBuffer) bool {
	log, _ := os.ReadFile(h.ErrorLog)
	return strings.Contains(out.String()+string(log), "is ready to serve requests")
}

func (h *H2O) stop() {
	h.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-h.exited:
		return
	case <-time.After(5 * time.Second):
	}
	syscall.Kill(-h.cmd.Process.Pid, syscall.SIGKILL)
	<-h.exited
}

// WaitRequests polls the access log until it holds at least want lines or
// timeout passes, and returns the last count.
func (h *H2O) WaitRequests(tb testing.TB, want int, timeout time.Duration) int {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for {
		b, err := os.ReadFile(h.AccessLog)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			tb.Fatalf("testenv: read access log: %v", err)
		}
		n := bytes.Count(b, []byte("\n"))
		if n >= want || time.Now().After(deadline) {
			return n
		}
		time.Sleep(10 * time.Millisecond)
	}
}
