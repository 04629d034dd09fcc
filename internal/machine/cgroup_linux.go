//go:build linux

package machine

import (
	"os"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// UsableCPUs counts the CPUs the process may use: its affinity mask,
// lowered by a cgroup v2 CPU quota (cpu.max) when one is set.
func UsableCPUs() int {
	n := runtime.NumCPU()
	var set unix.CPUSet
	if unix.SchedGetaffinity(0, &set) == nil {
		if c := set.Count(); c > 0 {
			n = c
		}
	}
	if b, err := os.ReadFile("/sys/fs/cgroup/cpu.max"); err == nil {
		f := strings.Fields(string(b))
		if len(f) == 2 && f[0] != "max" {
			quota, err1 := strconv.ParseFloat(f[0], 64)
			period, err2 := strconv.ParseFloat(f[1], 64)
			if err1 == nil && err2 == nil && period > 0 {
				q := int(quota/period + 0.999)
				if q >= 1 && q < n {
					n = q
				}
			}
		}
	}
	if n < 1 {
		n = 1
	}
	return n
}
