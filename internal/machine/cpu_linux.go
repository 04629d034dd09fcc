//go:build linux

package machine

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
	return machineCPUOf(b)
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
