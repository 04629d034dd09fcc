//go:build !(linux || darwin || dragonfly || freebsd)

package machine

import "github.com/brk-bench/brk/internal/metrics"

// ReadProcessCPU is unavailable on this platform (brk does not run here).
func ReadProcessCPU() metrics.ProcessCPU { return metrics.ProcessCPU{} }
