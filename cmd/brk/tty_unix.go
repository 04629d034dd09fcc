//go:build linux || darwin || dragonfly || freebsd

package main

import "golang.org/x/sys/unix"

// isTerminal reports whether fd is a terminal.
func isTerminal(fd uintptr) bool {
	_, err := unix.IoctlGetTermios(int(fd), ioctlGetTermios)
	return err == nil
}

// termWidth is the terminal's width in columns, 0 when unknown.
func termWidth(fd uintptr) int {
	cols, _ := termSize(fd)
	return cols
}

// termSize is the terminal's columns and rows, 0 0 when unknown.
func termSize(fd uintptr) (cols, rows int) {
	ws, err := unix.IoctlGetWinsize(int(fd), unix.TIOCGWINSZ)
	if err != nil {
		return 0, 0
	}
	return int(ws.Col), int(ws.Row)
}
