//go:build linux || darwin || dragonfly || freebsd

package machine

import (
	"time"

	"github.com/brk-bench/brk/internal/metrics"
	"golang.org/x/sys/unix"
)

// ReadProcessCPU reads the process's user and system CPU time.
func ReadProcessCPU() metrics.ProcessCPU {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return metrics.ProcessCPU{}
	}
	return metrics.ProcessCPU{
		User:   time.Duration(ru.Utime.Nano()),
		System: time.Duration(ru.Stime.Nano()),
	}
}
