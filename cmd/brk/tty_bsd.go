//go:build darwin || dragonfly || freebsd

package main

import "golang.org/x/sys/unix"

// The termios requests that read and set a terminal's modes (isTerminal,
// --tui).
const (
	ioctlGetTermios = unix.TIOCGETA
	ioctlSetTermios = unix.TIOCSETA
)
