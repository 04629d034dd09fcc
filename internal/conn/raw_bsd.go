//go:build darwin || dragonfly || freebsd

package conn

import "golang.org/x/sys/unix"

// rawRead and rawWrite use the ordinary wrappers outside Linux (SO_NOSIGPIPE
// is set on the socket).
func rawRead(fd int, b []byte) (int, error)  { return unix.Read(fd, b) }
func rawWrite(fd int, b []byte) (int, error) { return unix.Write(fd, b) }
