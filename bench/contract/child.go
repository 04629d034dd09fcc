package contract

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

var errClosed = errors.New("the child closed its stdout (exited?)")

// StartTimeout bounds the wait for a child's Hello.
const StartTimeout = 10 * time.Second

// replyTimeout bounds the wait for the answer to a command.
const replyTimeout = 5 * time.Second

// Child is a responder child process seen from the parent.
type Child struct {
	Hello Hello

	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan []byte // the child's stdout lines; closed at EOF
	done  chan error  // the child's exit
	mu    sync.Mutex
	once  sync.Once
	err   error
}

// Start runs name with args, writes cfg on its stdin and waits for its
// Hello. The child's stderr goes to stderr (nil discards it). On Linux the
// child is killed if the parent dies.
func Start(name string, args []string, cfg Config, stderr io.Writer) (*Child, error) {
	cmd := exec.Command(name, args...)
	cmd.Stderr = stderr
	cmd.SysProcAttr = childAttr()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("fixture child %s: %w", name, err)
	}
	c := &Child{cmd: cmd, stdin: stdin, lines: make(chan []byte, 4), done: make(chan error, 1)}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 4096), maxLine)
		for sc.Scan() {
			c.lines <- append([]byte(nil), sc.Bytes()...)
		}
		close(c.lines)
		c.done <- cmd.Wait()
	}()
	line, err := json.Marshal(cfg)
	if err != nil {
		c.kill()
		return nil, err
	}
	// A child that exits at once fails the write or the hello; either way
	// its exit status says more than the pipe's error.
	_, werr := stdin.Write(append(line, '\n'))
	reply, err := c.next(StartTimeout)
	if err != nil {
		if exit := c.kill(); exit != nil && err == errClosed {
			err = exit
		} else if werr != nil {
			err = werr
		}
		return nil, fmt.Errorf("fixture child %s: no hello: %w", name, err)
	}
	if err := json.Unmarshal(reply, &c.Hello); err != nil {
		c.kill()
		return nil, fmt.Errorf("fixture child %s: bad hello %q: %w", name, reply, err)
	}
	if c.Hello.Error != "" {
		c.kill()
		return nil, fmt.Errorf("fixture child %s: %s", name, c.Hello.Error)
	}
	if c.Hello.Addr == "" {
		c.kill()
		return nil, fmt.Errorf("fixture child %s: its hello names no address", name)
	}
	return c, nil
}

// next waits for the child's next stdout line.
func (c *Child) next(within time.Duration) ([]byte, error) {
	t := time.NewTimer(within)
	defer t.Stop()
	select {
	case l, ok := <-c.lines:
		if !ok {
			return nil, errClosed
		}
		return l, nil
	case <-t.C:
		return nil, fmt.Errorf("no answer within %v", within)
	}
}

// command writes one command and reads its answer.
func (c *Child) command(cmd string) (Sample, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var s Sample
	if _, err := io.WriteString(c.stdin, `{"cmd":"`+cmd+`"}`+"\n"); err != nil {
		if errors.Is(err, os.ErrClosed) || errors.Is(err, syscall.EPIPE) {
			err = errClosed // os/exec closed the pipe once the child exited
		}
		return s, fmt.Errorf("fixture child: %s: %w", cmd, err)
	}
	l, err := c.next(replyTimeout)
	if err != nil {
		return s, fmt.Errorf("fixture child: %s: %w", cmd, err)
	}
	if err := json.Unmarshal(l, &s); err != nil {
		return s, fmt.Errorf("fixture child: %s: bad answer %q", cmd, l)
	}
	if s.Error != "" {
		return s, fmt.Errorf("fixture child: %s: %s", cmd, strings.TrimSpace(s.Error))
	}
	return s, nil
}

// Sample asks the child for its CPU time so far.
func (c *Child) Sample() (Sample, error) { return c.command(CmdSample) }

// Stop asks the child to drain and exit and waits for it; a child that
// does not exit within the drain timeout and a few seconds is killed.
// It is safe to call more than once.
func (c *Child) Stop() error {
	c.once.Do(func() {
		_, err := c.command(CmdStop)
		c.stdin.Close()
		go func() {
			for range c.lines { // anything after the answer; lets the reader reach EOF
			}
		}()
		select {
		case werr := <-c.done:
			if err == nil && werr != nil {
				err = fmt.Errorf("fixture child: %w", werr)
			}
		case <-time.After(DrainTimeout + 3*time.Second):
			c.cmd.Process.Kill()
			<-c.done
			if err == nil {
				err = errors.New("fixture child: did not exit after stop; killed")
			}
		}
		c.err = err
	})
	return c.err
}

// kill ends a child that failed to start and returns its exit error.
func (c *Child) kill() error {
	c.once.Do(func() {
		c.stdin.Close()
		c.cmd.Process.Kill()
		go func() {
			for range c.lines {
			}
		}()
		c.err = <-c.done
	})
	return c.err
}
