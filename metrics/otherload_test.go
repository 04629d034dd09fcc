package metrics

import (
	"os"
	"runtime"
	"testing"
	"time"
)

// /proc/stat's aggregate line and a /proc/PID/stat are read from literal
// bytes: busy is everything but idle and iowait; a process's ticks are
// utime + stime, counted after a command name with spaces and
// parentheses; a zombie is not read.
func TestProcParsers(t *testing.T) {
	m := machineCPUOf([]byte("cpu  100 5 50 1000 20 3 2 1 9 9\ncpu0 1 2 3 4\n"))
	if !m.OK || m.Busy != 161 || m.Total != 1181 {
		t.Fatalf("machine %+v, want busy 161 of 1181", m)
	}
	for _, bad := range []string{"", "cpu0 1 2 3", "cpu x 1 2 3 4"} {
		if machineCPUOf([]byte(bad)).OK {
			t.Errorf("%q read as a machine reading", bad)
		}
	}
	stat := "4242 (my (odd) server) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 70 0 0 20 0 1 0 100 1000 50\n"
	if ticks, ok := cpuTicksOf([]byte(stat)); !ok || ticks != 320 {
		t.Fatalf("ticks %d %v, want 320", ticks, ok)
	}
	if _, ok := cpuTicksOf([]byte("4242 (x) Z 1 4242 4242 0 -1 4194560 100 0 0 0 250 70 0 0\n")); ok {
		t.Fatal("a zombie read")
	}
}

// The other load reads windows while this process keeps a core busy, and a
// reading allocates nothing after the first.
func TestOtherLoadWindows(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	o := NewOtherLoad([]int{os.Getpid()})
	defer o.Close()
	o.Start()
	o.Sample()
	allocs := testing.AllocsPerRun(20, func() {
		o.last.at = time.Time{} // force a window
		o.Sample()
	})
	if allocs > 0 {
		t.Fatalf("%.1f allocations per reading", allocs)
	}
	o.Start()
	stop := time.Now().Add(350 * time.Millisecond)
	for time.Now().Before(stop) {
		o.Sample()
	}
	got := o.Finish()
	if !got.OK || got.Windows < 3 {
		t.Fatalf("reading %+v", got)
	}
	t.Logf("other load %.2f cores (this process's busy loop excluded)", got.MeanCores)
}
