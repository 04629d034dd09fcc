//go:build linux || darwin || dragonfly || freebsd

package main

import (
	"errors"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/gdamore/tcell/v2"
	"golang.org/x/sys/unix"
)

// stderrTty is the tcell.Tty of --tui: it draws on stderr's terminal
// and reads nothing from it. It is not put in raw mode: only echo is
// turned off (so that typed keys do not scribble on the view), and ISIG
// stays on, so Ctrl-C raises SIGINT as without --tui and the run is
// interrupted the usual way (exit 130, what was measured reported).
type stderrTty struct {
	f  *os.File
	fd int

	mu      sync.Mutex
	saved   *unix.Termios // the modes at Start, restored by Stop
	drained chan struct{} // closed by Drain: Read returns
	winch   chan os.Signal
	stop    chan struct{}
	cb      func()
	wg      sync.WaitGroup
}

// newStderrTty is stderr's terminal as a tcell.Tty, refused when brk is
// not in the terminal's foreground process group (a background job, or
// under a command such as timeout that starts it in a group of its own):
// setting the terminal's modes would stop it (SIGTTOU).
func newStderrTty(f *os.File) (tcell.Tty, error) {
	fd := int(f.Fd())
	if pg, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP); err != nil || pg != unix.Getpgrp() {
		return nil, errors.New("brk is not in the foreground of stderr's terminal")
	}
	return &stderrTty{f: f, fd: fd}, nil
}

// Start turns echo off and watches SIGWINCH.
func (t *stderrTty) Start() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	tio, err := unix.IoctlGetTermios(t.fd, ioctlGetTermios)
	if err != nil {
		return err
	}
	saved := *tio
	tio.Lflag &^= unix.ECHO | unix.ECHONL
	if err := unix.IoctlSetTermios(t.fd, ioctlSetTermios, tio); err != nil {
		return err
	}
	t.saved = &saved
	t.drained = make(chan struct{})
	t.stop = make(chan struct{})
	t.winch = make(chan os.Signal, 1)
	signal.Notify(t.winch, syscall.SIGWINCH)
	t.wg.Add(1)
	go func(stop chan struct{}, winch chan os.Signal) {
		defer t.wg.Done()
		for {
			select {
			case <-stop:
				return
			case <-winch:
				t.mu.Lock()
				cb := t.cb
				t.mu.Unlock()
				if cb != nil {
					cb()
				}
			}
		}
	}(t.stop, t.winch)
	return nil
}

// Drain wakes Read, which then returns io.EOF.
func (t *stderrTty) Drain() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.drained != nil {
		select {
		case <-t.drained:
		default:
			close(t.drained)
		}
	}
	return nil
}

// Stop restores the terminal's modes as Start found them.
func (t *stderrTty) Stop() error {
	t.mu.Lock()
	if t.stop == nil {
		t.mu.Unlock()
		return nil
	}
	signal.Stop(t.winch)
	close(t.stop)
	t.stop = nil
	saved := t.saved
	t.mu.Unlock()
	t.wg.Wait()
	if saved == nil {
		return nil
	}
	// Put in the background since (Ctrl-Z, bg), brk would be stopped by
	// SIGTTOU for restoring the modes; ignored, the restore goes ahead.
	signal.Ignore(syscall.SIGTTOU)
	defer signal.Reset(syscall.SIGTTOU)
	return unix.IoctlSetTermios(t.fd, ioctlSetTermios, saved)
}

// Read reads nothing: it blocks until Drain. brk takes no keys from the
// terminal; Ctrl-C reaches it as SIGINT.
func (t *stderrTty) Read([]byte) (int, error) {
	t.mu.Lock()
	d := t.drained
	t.mu.Unlock()
	if d != nil {
		<-d
	}
	return 0, io.EOF
}

func (t *stderrTty) Write(b []byte) (int, error) { return t.f.Write(b) }

// Close leaves stderr open: brk writes its messages there after the view.
func (t *stderrTty) Close() error { return nil }

func (t *stderrTty) NotifyResize(cb func()) {
	t.mu.Lock()
	t.cb = cb
	t.mu.Unlock()
}

func (t *stderrTty) WindowSize() (tcell.WindowSize, error) {
	cols, rows := termSize(uintptr(t.fd))
	if cols <= 0 || rows <= 0 {
		cols, rows = 80, 24
	}
	return tcell.WindowSize{Width: cols, Height: rows}, nil
}

// watchStop restores the terminal when brk is stopped from it (Ctrl-Z,
// SIGTSTP): the view is suspended, then brk stops (SIGSTOP: the shell
// reports it "Stopped (signal)", fg and bg work as for any job). Continued in the terminal's foreground (fg) it draws the view
// again; continued in the background (bg) it draws nothing until it is
// brought to the foreground. The returned function ends the watch.
func watchStop(v *tuiView, f *os.File) (unwatch func()) {
	fd := int(f.Fd())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTSTP, syscall.SIGCONT)
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		for {
			select {
			case <-done:
				return
			case sig := <-sigs:
				if sig == syscall.SIGTSTP {
					v.suspend()
					// Stop as SIGTSTP's default action would. Once
					// notified, Go ignores SIGTSTP without a channel
					// (signal.Reset does not restore its default), so
					// brk stops itself with SIGSTOP; the kill returns
					// once brk is continued.
					_ = unix.Kill(unix.Getpid(), unix.SIGSTOP)
				}
				if pg, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP); err == nil && pg == unix.Getpgrp() {
					v.resume()
				}
			}
		}
	}()
	return func() {
		signal.Stop(sigs)
		close(done)
		<-finished
	}
}
