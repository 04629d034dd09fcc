package machine

import (
	"os"
	"runtime"
	"testing"
	"time"
)

// /proc/stat's aggregate line and a /proc/PID/stat are read from literal
// bytes: busy is everything but idle and iowait, steal (the eighth
// number) is part of it; a process's ticks are
// utime + stime, counted after a command name with spaces and
// parentheses; a zombie is not read.
func TestProcParsers(t *testing.T) {
	m := machineCPUOf([]byte("cpu  100 5 50 1000 20 3 2 1 9 9\ncpu0 1 2 3 4\n"))
	if !m.OK || m.Busy != 161 || m.Total != 1181 || m.Steal != 1 {
		t.Fatalf("machine %+v, want busy 161 of 1181, steal 1", m)
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

// A window's other load is the machine's busy CPU less this process's and
// the servers'; the hypervisor's steal is part of it, counted apart, and
// never more than the other load itself.
func TestOtherLoadSteal(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(when time.Time, busy, steal uint64, self time.Duration) otherReading {
		return otherReading{at: when, machine: MachineCPU{Busy: busy, Steal: steal, Total: 1000, OK: true}, self: self, ok: true}
	}
	for _, c := range []struct {
		name              string
		busy, steal       uint64 // hundredths of a core over the 1 s window
		self              time.Duration
		wantOther, wantSt float64
	}{
		{"processes only", 60, 0, 100 * time.Millisecond, 0.5, 0},
		{"steal within", 60, 40, 100 * time.Millisecond, 0.5, 0.4},
		{"steal capped", 60, 40, 400 * time.Millisecond, 0.2, 0.2},
	} {
		o := &OtherLoad{}
		o.window(at(t0, 0, 0, 0), at(t0.Add(time.Second), c.busy*clockTicks/100, c.steal*clockTicks/100, c.self))
		if o.acc.Windows != 1 || abs(o.sum-c.wantOther) > 1e-9 || abs(o.steal-c.wantSt) > 1e-9 {
			t.Errorf("%s: other %.3f steal %.3f in %d windows, want %.3f and %.3f in 1", c.name, o.sum, o.steal, o.acc.Windows, c.wantOther, c.wantSt)
		}
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
