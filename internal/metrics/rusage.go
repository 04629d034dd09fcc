//go:build linux || darwin || dragonfly || freebsd

package metrics

import (
	"time"

	"golang.org/x/sys/unix"
)

// ReadProcessCPU reads the process's user and system CPU time.
func ReadProcessCPU() ProcessCPU {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return ProcessCPU{}
	}
	return ProcessCPU{
		User:   time.Duration(ru.Utime.Nano()),
		System: time.Duration(ru.Stime.Nano()),
	}
}
