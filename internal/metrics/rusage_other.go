//go:build !(linux || darwin || dragonfly || freebsd)

package metrics

// ReadProcessCPU is unavailable on this platform (brk does not run here).
func ReadProcessCPU() ProcessCPU { return ProcessCPU{} }
