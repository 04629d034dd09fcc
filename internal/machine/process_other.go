//go:build !linux

package machine

import "errors"

// readProcStat finds no process: /proc/PID/stat is Linux's.
func readProcStat(int) procStat { return procStat{} }

// CheckProcesses refuses any pids: a ProcessSampler reads /proc, which is
// Linux's. Its message follows the PIDs' name.
func CheckProcesses(pids []int) error {
	if len(pids) == 0 {
		return nil
	}
	return errors.New("reads /proc and works on Linux only")
}
