package brk

import (
	"bytes"
	"os"
	"runtime"
	"strconv"
)

// serverSampler reads the CPU and memory of Plan.ServerPIDs processes at each
// phase's start and end.
type serverSampler struct {
	pids   []int
	before []procStat
}

// procStat is one reading of a process: CPU in clock ticks, RSS in pages.
type procStat struct {
	user, system, rss uint64
	ok                bool
}

func newServerSampler(pids []int) *serverSampler {
	if len(pids) == 0 {
		return nil
	}
	return &serverSampler{pids: pids, before: make([]procStat, len(pids))}
}

func (s *serverSampler) start() {
	if s == nil {
		return
	}
	for i, pid := range s.pids {
		s.before[i] = readProcStat(pid)
	}
}

// finish returns each process's use over the phase; a process that could
// not be read at either end is reported gone, never fatal.
func (s *serverSampler) finish(succeeded uint64) []ServerCPU {
	if s == nil {
		return nil
	}
	out := make([]ServerCPU, len(s.pids))
	for i, pid := range s.pids {
		a, b := s.before[i], readProcStat(pid)
		out[i].PID = pid
		if !a.ok || !b.ok || b.user < a.user || b.system < a.system {
			out[i].Gone = true
			continue
		}
		out[i].UserS = float64(b.user-a.user) / clockTicks
		out[i].SystemS = float64(b.system-a.system) / clockTicks
		out[i].RSSBytes = b.rss * uint64(os.Getpagesize())
		if succeeded > 0 {
			out[i].UsPerResponse = (out[i].UserS + out[i].SystemS) * 1e6 / float64(succeeded)
		}
	}
	return out
}

// clockTicks is USER_HZ, the unit of /proc/PID/stat's CPU times: 100 on
// every Linux architecture Go supports.
const clockTicks = 100

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

// checkServerPIDs refuses Plan.ServerPIDs where /proc cannot answer, or for a
// process that does not exist when the run starts.
func checkServerPIDs(pids []int) error {
	if len(pids) == 0 {
		return nil
	}
	if runtime.GOOS != "linux" {
		return refuse("%s reads /proc and works on Linux only", fServerPIDs)
	}
	for _, pid := range pids {
		if pid <= 0 {
			return refuse("%s %d: not a process ID", fServerPIDs, pid)
		}
		if !readProcStat(pid).ok {
			return refuse("%s %d: no such process (or /proc/%d/stat is unreadable)", fServerPIDs, pid, pid)
		}
	}
	return nil
}
