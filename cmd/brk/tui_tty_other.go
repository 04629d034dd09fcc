//go:build !(linux || darwin || dragonfly || freebsd)

package main

import (
	"errors"
	"os"

	"github.com/gdamore/tcell/v2"
)

// newStderrTty: brk does not run on this platform (isTerminal is false
// here, so --tui never gets this far).
func newStderrTty(*os.File) (tcell.Tty, error) {
	return nil, errors.New("no terminal view on this platform")
}

// watchStop: no job control here.
func watchStop(*tuiView, *os.File) func() { return nil }
