package metrics

import "time"

// ProcessCPU is the client process's CPU time (getrusage RUSAGE_SELF).
type ProcessCPU struct {
	User, System time.Duration
}

// Sub returns p - q.
func (p ProcessCPU) Sub(q ProcessCPU) ProcessCPU {
	return ProcessCPU{User: p.User - q.User, System: p.System - q.System}
}
