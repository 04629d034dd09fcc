//go:build !linux

package machine

import "runtime"

// UsableCPUs counts the CPUs the process may use.
func UsableCPUs() int { return runtime.NumCPU() }
