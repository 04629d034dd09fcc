//go:build !(linux || darwin || dragonfly || freebsd)

package main

// isTerminal reports false: brk does not run on this platform, and the
// live progress line is never shown here.
func isTerminal(fd uintptr) bool { return false }

func termWidth(fd uintptr) int { return 0 }
