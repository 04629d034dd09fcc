//go:build darwin || dragonfly || freebsd

package conn

import (
	"os"

	"golang.org/x/sys/unix"
)

const sockFlags = 0

func prepare(fd int) error {
	unix.CloseOnExec(fd)
	if err := unix.SetNonblock(fd, true); err != nil {
		return os.NewSyscallError("fcntl", err)
	}
	unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_NOSIGPIPE, 1)
	return nil
}
