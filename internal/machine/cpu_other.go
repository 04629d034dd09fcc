//go:build !linux

package machine

// ReadMachineCPU is unavailable outside Linux.
func ReadMachineCPU() MachineCPU { return MachineCPU{} }

// ReadThreadCPU is unavailable outside Linux.
func ReadThreadCPU(tid int) ThreadCPU { return ThreadCPU{} }
