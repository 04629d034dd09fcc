//go:build !linux

package uring

import "errors"

// ErrUnavailable is why a ring cannot be set up on this system.
var ErrUnavailable = errors.New("io_uring is Linux only")

// Available reports whether this kernel sets up the ring brk needs, and
// why not.
func Available() error { return ErrUnavailable }
