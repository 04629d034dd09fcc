//go:build !linux

package poller

import (
	"github.com/brk-bench/brk/internal/conn"
	"github.com/brk-bench/brk/internal/uring"
)

// NewUring reports that io_uring is Linux only.
func NewUring() (*Poller, error) { return nil, uring.ErrUnavailable }

// Uring reports false: there is no io_uring here.
func (p *Poller) Uring() bool { return false }

// Raw returns nil: transports make their own system calls.
func (p *Poller) Raw(fd int) conn.Raw { return nil }

// Transport returns nil: a conn.Plain makes the system calls.
func (p *Poller) Transport(fd int) conn.Transport { return nil }

// Forget does nothing: closing a descriptor removes it from the poller.
func (p *Poller) Forget(fd int) {}
