package machine

// MachineCPU is a reading of machine-wide CPU time counters (Linux
// /proc/stat, in clock ticks). OK is false where it is unavailable.
type MachineCPU struct {
	Busy, Total uint64
	// Steal is the part of Busy the hypervisor gave to other machines
	// (/proc/stat's steal): CPU this box's processes waited for.
	Steal uint64
	OK    bool
}

// BusyPct returns the busy share between two readings, or false when
// either is unavailable or no time passed.
func (m MachineCPU) BusyPct(before MachineCPU) (float64, bool) {
	if !m.OK || !before.OK || m.Total <= before.Total {
		return 0, false
	}
	return 100 * float64(m.Busy-before.Busy) / float64(m.Total-before.Total), true
}

// ThreadCPU is one thread's CPU time and run-queue wait (Linux
// /proc/self/task/TID/schedstat, ns). OK is false where unavailable.
type ThreadCPU struct {
	Run, Wait int64
	OK        bool
}
