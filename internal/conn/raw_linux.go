//go:build linux

package conn

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// rawRead and rawWrite call read(2) and write(2) without telling the Go
// scheduler: the sockets are nonblocking, so the calls never block, and the
// scheduler's syscall bookkeeping (entersyscall/exitsyscall) would be a
// measurable share of a small response's cost. Writes use send(2) with
// MSG_NOSIGNAL so that a peer's reset never raises SIGPIPE.
func rawRead(fd int, b []byte) (int, error) {
	var p unsafe.Pointer
	if len(b) > 0 {
		p = unsafe.Pointer(&b[0])
	}
	n, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(p), uintptr(len(b)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

func rawWrite(fd int, b []byte) (int, error) {
	var p unsafe.Pointer
	if len(b) > 0 {
		p = unsafe.Pointer(&b[0])
	}
	n, _, e := unix.RawSyscall6(unix.SYS_SENDTO, uintptr(fd), uintptr(p), uintptr(len(b)), unix.MSG_NOSIGNAL, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}
