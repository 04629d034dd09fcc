//go:build linux

package conn

import "golang.org/x/sys/unix"

const sockFlags = unix.SOCK_NONBLOCK | unix.SOCK_CLOEXEC

func prepare(fd int) error { return nil }
