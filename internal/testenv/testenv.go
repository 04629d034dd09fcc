// Package testenv starts real servers (nginx, h2o, haproxy) for integration
// tests and decides whether a missing server skips or fails a test.
package testenv

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Required reports whether missing servers must fail tests instead of
// skipping them: true when the environment sets BRK_REQUIRE_SERVERS=1 (CI
// does).
func Required() bool { return os.Getenv("BRK_REQUIRE_SERVERS") == "1" }

// SkipOrFail skips the test with the formatted reason, or fails it when
// Required reports true.
func SkipOrFail(tb testing.TB, format string, args ...any) {
	tb.Helper()
	if Required() {
		tb.Fatalf("BRK_REQUIRE_SERVERS=1: "+format, args...)
		return
	}
	tb.Skipf(format, args...)
}

// FreePort returns a "127.0.0.1:PORT" address that was free a moment ago:
// it listens on 127.0.0.1:0 and closes the listener. Another process may
// take the port before the caller binds it, so callers retry on bind
// failure and check that their server holds the listener (ListensOn); a
// server that can take a listener is handed one instead (StartH2O).
func FreePort(tb testing.TB) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("testenv: listen: %v", err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// NginxOptions configures StartNginx.
type NginxOptions struct {
	// Location is the body of `location / { ... }`; empty means
	// `return 200 "ok";`.
	Location string
	// Workers is worker_processes; 0 means 1.
	Workers int
	// KeepaliveRequests is keepalive_requests; 0 leaves the directive out,
	// so nginx's default (1000 in 1.22) applies.
	KeepaliveRequests int
	// ExtraHTTP holds extra directives for the http block.
	ExtraHTTP string
	// ListenSuffix is appended to the listen directive's address, e.g.
	// "ssl" gives `listen 127.0.0.1:PORT ssl;`; empty adds nothing.
	ListenSuffix string
	// ServerExtra holds extra directives for the server block (placed
	// before the location); empty adds nothing.
	ServerExtra string
}

// Nginx is a private nginx instance started by a test.
type Nginx struct {
	Addr      string // "127.0.0.1:PORT"
	AccessLog string // path of the unbuffered access log
	Prefix    string // temporary prefix directory holding config, logs and temp paths

	cmd    *exec.Cmd
	exited chan struct{} // closed when cmd.Wait returned
}

// fallbackNginx is where nginxBinary looks when nginx is not in PATH; tests
// point it elsewhere to simulate a machine without nginx.
var fallbackNginx = "/usr/sbin/nginx"

// nginxBinary returns the nginx executable from PATH or fallbackNginx.
func nginxBinary() (string, error) { return lookBinary("nginx", fallbackNginx) }

// lookBinary returns the executable name from PATH, or fallback (a
// distribution's sbin path, often outside a user's PATH) when it is one.
func lookBinary(name, fallback string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	if st, err := os.Stat(fallback); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
		return fallback, nil
	}
	return "", fmt.Errorf("%s not found in PATH or at %s", name, fallback)
}

// nginxConfig renders the configuration for prefix and addr.
func nginxConfig(prefix, addr string, opt NginxOptions) string {
	workers := opt.Workers
	if workers <= 0 {
		workers = 1
	}
	location := opt.Location
	if location == "" {
		location = `return 200 "ok";`
	}
	var b strings.Builder
	if os.Geteuid() == 0 {
		// As root the workers would switch to nobody, who cannot write
		// the logs in the test's temp dir.
		b.WriteString("user root;\n")
	}
	fmt.Fprintf(&b, "daemon off;\nmaster_process on;\nworker_processes %d;\nworker_rlimit_nofile 30000;\n", workers)
	fmt.Fprintf(&b, "error_log %s;\npid %s;\n", filepath.Join(prefix, "error.log"), filepath.Join(prefix, "nginx.pid"))
	b.WriteString("events { worker_connections 20000; }\n")
	b.WriteString("http {\n")
	fmt.Fprintf(&b, "  access_log %s;\n", filepath.Join(prefix, "access.log"))
	for _, d := range []string{"client_body", "proxy", "fastcgi", "uwsgi", "scgi"} {
		fmt.Fprintf(&b, "  %s_temp_path %s;\n", d, filepath.Join(prefix, d+"_temp"))
	}
	if opt.KeepaliveRequests > 0 {
		fmt.Fprintf(&b, "  keepalive_requests %d;\n", opt.KeepaliveRequests)
	}
	if opt.ExtraHTTP != "" {
		fmt.Fprintf(&b, "  %s\n", opt.ExtraHTTP)
	}
	listen := addr
	if opt.ListenSuffix != "" {
		listen += " " + opt.ListenSuffix
	}
	fmt.Fprintf(&b, "  server {\n    listen %s;\n", listen)
	if opt.ServerExtra != "" {
		fmt.Fprintf(&b, "    %s\n", opt.ServerExtra)
	}
	fmt.Fprintf(&b, "    location / { %s }\n  }\n}\n", location)
	return b.String()
}

// StartNginx starts a private nginx in a fresh temporary prefix, listening
// on a free 127.0.0.1 port, and stops it when the test ends. It skips the
// test (or fails it when Required) if nginx is not installed. It retries up
// to 5 times with a new port when the bind fails (nginx cannot be handed a
// listener: it binds the port itself, and another process may take the
// port first), and waits at most 5 s for nginx itself to listen there (see
// ListensOn: a connection accepted by whoever took the port is no sign).
func StartNginx(tb testing.TB, opt NginxOptions) *Nginx {
	tb.Helper()
	bin, err := nginxBinary()
	if err != nil {
		SkipOrFail(tb, "testenv: %v", err)
	}
	var lastErr error
	for range 5 {
		n, err := startNginxOnce(tb, bin, opt)
		if err == nil {
			return n
		}
		lastErr = err
		if !errors.Is(err, errBind) {
			break
		}
	}
	tb.Fatalf("testenv: start nginx: %v", lastErr)
	return nil
}

var errBind = errors.New("bind failed")

func startNginxOnce(tb testing.TB, bin string, opt NginxOptions) (*Nginx, error) {
	prefix := tb.TempDir()
	addr := pickPort(tb)
	conf := filepath.Join(prefix, "nginx.conf")
	if err := os.WriteFile(conf, []byte(nginxConfig(prefix, addr, opt)), 0o644); err != nil {
		return nil, err
	}
	errorLog := filepath.Join(prefix, "error.log")
	cmd := exec.Command(bin, "-e", errorLog, "-p", prefix+"/", "-c", conf)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	// Own process group, so a forced stop also takes the workers.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// Workers inherit the output pipe; don't let Wait hang on them.
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	n := &Nginx{
		Addr:      addr,
		AccessLog: filepath.Join(prefix, "access.log"),
		Prefix:    prefix,
		cmd:       cmd,
		exited:    make(chan struct{}),
	}
	go func() {
		cmd.Wait()
		close(n.exited)
	}()

	// nginx retries a taken port for 2.5 s before it exits; meanwhile the
	// port answers for whoever took it, so readiness is nginx's own
	// listener (ListensOn), not an accepted connection.
	switch err := awaitListener(cmd.Process.Pid, addr, n.exited, 5*time.Second); {
	case errors.Is(err, errExited):
		log, _ := os.ReadFile(errorLog)
		msg := fmt.Sprintf("nginx exited (%v): %s%s", cmd.ProcessState, out.Bytes(), log)
		if strings.Contains(msg, "Address already in use") {
			return nil, fmt.Errorf("%w: %s", errBind, msg)
		}
		return nil, errors.New(msg)
	case err != nil:
		n.stop()
		log, _ := os.ReadFile(errorLog)
		return nil, fmt.Errorf("nginx: %v\n%s", err, log)
	}
	tb.Cleanup(n.stop)
	return n, nil
}

// stop sends SIGTERM (fast shutdown) to the master process and waits up to
// 5 s for it to exit, then kills the whole process group.
func (n *Nginx) stop() {
	n.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-n.exited:
		return
	case <-time.After(5 * time.Second):
	}
	syscall.Kill(-n.cmd.Process.Pid, syscall.SIGKILL)
	<-n.exited
}

// Requests returns the number of lines in the access log, that is the
// number of requests nginx has finished logging. nginx writes each line
// (unbuffered) after sending the response, so a client that just read a
// response may be a moment ahead: use WaitRequests to wait for a count.
func (n *Nginx) Requests(tb testing.TB) int {
	tb.Helper()
	b, err := os.ReadFile(n.AccessLog)
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil {
		tb.Fatalf("testenv: read access log: %v", err)
	}
	return bytes.Count(b, []byte("\n"))
}

// WaitRequests polls the access log until it holds at least want lines or
// timeout passes, and returns the last count. Polling is needed because
// nginx logs a request only after the client may have seen its response.
func (n *Nginx) WaitRequests(tb testing.TB, want int, timeout time.Duration) int {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for {
		got := n.Requests(tb)
		if got >= want || time.Now().After(deadline) {
			return got
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// ErrorLog returns the contents of nginx's error log, for test diagnostics.
func (n *Nginx) ErrorLog() string {
	b, _ := os.ReadFile(filepath.Join(n.Prefix, "error.log"))
	return string(b)
}

// WorkerPIDs returns the PIDs of nginx's worker processes (the master's
// children), read from /proc.
func (n *Nginx) WorkerPIDs(tb testing.TB) []int {
	tb.Helper()
	master := n.cmd.Process.Pid
	entries, err := os.ReadDir("/proc")
	if err != nil {
		tb.Fatalf("testenv: /proc: %v", err)
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(b, ')')
		f := bytes.Fields(b[i+1:])
		if len(f) > 1 && string(f[1]) == strconv.Itoa(master) {
			pids = append(pids, pid)
		}
	}
	return pids
}
