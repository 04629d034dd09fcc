//go:build linux

package main

import "golang.org/x/sys/unix"

// The termios requests that read and set a terminal's modes (isTerminal,
// --tui).
const (
	ioctlGetTermios = unix.TCGETS
	ioctlSetTermios = unix.TCSETS
)
