//go:build linux

package metrics

import (
	"bytes"
	"os"
	"strconv"
)

// ReadMachineCPU reads the aggregate "cpu" line of /proc/stat. Busy is
// everything but idle and iowait.
func ReadMachineCPU() MachineCPU {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return MachineCPU{}
	}
	line, _, _ := bytes.Cut(b, []byte{'\n'})
	f := bytes.Fields(line)
	if len(f) < 5 || string(f[0]) != "cpu" {
		return MachineCPU{}
	}
	var m MachineCPU
	for i, v := range f[1:] {
		n, err := strconv.ParseUint(string(v), 10, 64)
		if err != nil {
			return MachineCPU{}
		}
		// user nice system idle iowait irq softirq steal guest guest_nice;
		// guest time is already inside user.
		if i >= 8 {
			break
		}
		m.Total += n
		if i != 3 && i != 4 {
			m.Busy += n
		}
	}
	m.OK = true
	return m
}

// ReadThreadCPU reads a thread's CPU time and run-queue wait.
func ReadThreadCPU(tid int) ThreadCPU {
	if tid <= 0 {
		return ThreadCPU{}
	}
	b, err := os.ReadFile("/proc/self/task/" + strconv.Itoa(tid) + "/schedstat")
	if err != nil {
		return ThreadCPU{}
	}
	f := bytes.Fields(b)
	if len(f) < 2 {
		return ThreadCPU{}
	}
	run, err1 := strconv.ParseInt(string(f[0]), 10, 64)
	wait, err2 := strconv.ParseInt(string(f[1]), 10, 64)
	if err1 != nil || err2 != nil {
		return ThreadCPU{}
	}
	return ThreadCPU{Run: run, Wait: wait, OK: true}
}
