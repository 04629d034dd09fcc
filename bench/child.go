package bench

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// FixtureProcess is a fixture responder running as a child process, so
// that its CPU and its goroutines never compete with the client's inside
// one Go runtime.
type FixtureProcess struct {
	cmd    *exec.Cmd
	addr   string
	scheme string // "http" or "https", as the child reported
	done   chan error
	once   sync.Once
}

// StartFixtureProcess runs `exe fixture` with cfg's flags (--tls and
// --ca-out PATH for TLS and CAPath) and waits until it reports its address
// ("listening on https://ADDR" with TLS, by which time CAPath is written). exe is a brk binary (os.Executable() for brk
// itself).
func StartFixtureProcess(exe string, cfg FixtureConfig) (*FixtureProcess, error) {
	addr := cfg.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	args := []string{"fixture", "--listen", addr}
	if cfg.Capacity > 0 {
		args = append(args, "--capacity", fmt.Sprint(cfg.Capacity))
	}
	if cfg.Service > 0 {
		args = append(args, "--service", cfg.Service.String())
	}
	if cfg.DelayDist != "" {
		args = append(args, "--delay-dist", cfg.DelayDist)
	}
	if cfg.KeepWorking {
		args = append(args, "--keep-working")
	}
	if cfg.TLS {
		args = append(args, "--tls")
	}
	if cfg.CAPath != "" {
		args = append(args, "--ca-out", cfg.CAPath)
	}
	cmd := exec.Command(exe, args...)
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = childAttr()
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("fixture child: %w", err)
	}
	p := &FixtureProcess{cmd: cmd, done: make(chan error, 1)}
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		if sc.Scan() {
			line <- sc.Text()
		}
		close(line)
		for sc.Scan() {
		}
		p.done <- cmd.Wait()
	}()
	select {
	case l, ok := <-line:
		want := "http"
		if cfg.TLS {
			want = "https"
		}
		prefix := "listening on " + want + "://"
		if !ok || !strings.HasPrefix(l, prefix) {
			p.Close()
			return nil, errors.New("fixture child did not report its address")
		}
		p.addr = strings.TrimPrefix(l, prefix)
		p.scheme = want
	case <-time.After(10 * time.Second):
		p.Close()
		return nil, errors.New("fixture child did not start within 10 s")
	}
	return p, nil
}

// Addr is the child's listen address.
func (p *FixtureProcess) Addr() string { return p.addr }

// PID is the child's process id (to pause it, or read its CPU).
func (p *FixtureProcess) PID() int { return p.cmd.Process.Pid }

// URL returns "http://" (or "https://" with TLS) + Addr() + path.
func (p *FixtureProcess) URL(path string) string { return p.scheme + "://" + p.addr + path }

// Close stops the child (SIGTERM to its PID, SIGKILL after 5 s) and waits.
func (p *FixtureProcess) Close() error {
	if p.cmd.Process == nil {
		return nil
	}
	p.once.Do(func() {
		p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(5 * time.Second):
			p.cmd.Process.Kill()
			<-p.done
		}
	})
	return nil
}
