//go:build linux

package machine

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// readProcStat reads /proc/PID/stat: utime and stime (fields 14 and 15)
// and rss (field 24), counted after the command name, which may contain
// spaces and parentheses. A process that exited but is not yet reaped
// (state Z, zombie, or X, dead) keeps its entry with RSS 0: it is not
// there either.
func readProcStat(pid int) procStat {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 22 || len(f[0]) == 1 && (f[0][0] == 'Z' || f[0][0] == 'X') {
		return procStat{}
	}
	var st procStat
	var e1, e2, e3 error
	st.user, e1 = strconv.ParseUint(string(f[11]), 10, 64)
	st.system, e2 = strconv.ParseUint(string(f[12]), 10, 64)
	st.rss, e3 = strconv.ParseUint(string(f[21]), 10, 64)
	st.ok = e1 == nil && e2 == nil && e3 == nil
	return st
}

// CheckProcesses refuses pids for a ProcessSampler where one is not a
// process that exists now. Its message follows the PIDs' name: "5: not a
// process ID".
func CheckProcesses(pids []int) error {
	for _, pid := range pids {
		if pid <= 0 {
			return fmt.Errorf("%d: not a process ID", pid)
		}
		if !readProcStat(pid).ok {
			return fmt.Errorf("%d: no such process (or /proc/%d/stat is unreadable)", pid, pid)
		}
	}
	return nil
}
