//go:build !linux

package brk

import "runtime"

// usableCPUs counts the CPUs the process may use.
func usableCPUs() int { return runtime.NumCPU() }
