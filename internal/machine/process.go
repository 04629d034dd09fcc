package machine

import "os"

// ProcessSampler reads the CPU and memory of other processes (a server
// under test, by PID) at each phase's start and end.
type ProcessSampler struct {
	pids   []int
	before []procStat
}

// procStat is one reading of a process: CPU in clock ticks, RSS in pages.
type procStat struct {
	user, system, rss uint64
	ok                bool
}

// ProcessUse is one process's use over a phase.
type ProcessUse struct {
	PID           int
	UserS         float64
	SystemS       float64
	UsPerResponse float64 // per successful response
	RSSBytes      uint64  // at the phase's end
	// Gone is set when the process could not be read at either end of
	// the phase (it exited); its figures are then zero.
	Gone bool
}

// NewProcessSampler returns a sampler of pids, or nil (which samples
// nothing) when there are none.
func NewProcessSampler(pids []int) *ProcessSampler {
	if len(pids) == 0 {
		return nil
	}
	return &ProcessSampler{pids: pids, before: make([]procStat, len(pids))}
}

// Start reads every process at a phase's start.
func (s *ProcessSampler) Start() {
	if s == nil {
		return
	}
	for i, pid := range s.pids {
		s.before[i] = readProcStat(pid)
	}
}

// Finish returns each process's use since Start, per succeeded response;
// a process that could not be read at either end is reported gone, never
// fatal.
func (s *ProcessSampler) Finish(succeeded uint64) []ProcessUse {
	if s == nil {
		return nil
	}
	out := make([]ProcessUse, len(s.pids))
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
