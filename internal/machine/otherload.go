package machine

import (
	"strconv"
	"time"

	"github.com/brk-bench/brk/internal/metrics"
)

// The box's other load: the CPU that processes other than brk and the
// server used while a phase ran, and what the hypervisor took for other
// machines (steal), read in windows of OtherWindow. A box is
// busy in a window when that CPU exceeded metrics.BusyCores; the search re-runs a
// phase judged on a busy box (docs/search.md).

// OtherWindow is the width of one reading of the box's other load.
const OtherWindow = 100 * time.Millisecond

// OtherLoad samples the box's other load: the machine's busy CPU less
// this process's and the server processes'.
type OtherLoad struct {
	stat    procFile
	servers []procFile
	last    otherReading
	acc     metrics.OtherCPU
	sum     float64
	steal   float64 // the windows' steal, summed
}

type otherReading struct {
	at      time.Time
	machine MachineCPU
	self    time.Duration
	servers uint64 // clock ticks; readable processes only
	ok      bool
}

// NewOtherLoad samples the box's load beside this process and servers.
// Its readings allocate nothing after the first: it keeps the files it
// reads open until Close.
func NewOtherLoad(servers []int) *OtherLoad {
	o := &OtherLoad{stat: procFile{path: "/proc/stat"}}
	for _, pid := range servers {
		o.servers = append(o.servers, procFile{path: "/proc/" + strconv.Itoa(pid) + "/stat"})
	}
	return o
}

// Close closes the files the readings keep open.
func (o *OtherLoad) Close() {
	o.stat.close()
	for i := range o.servers {
		o.servers[i].close()
	}
}

func (o *OtherLoad) read() otherReading {
	r := otherReading{at: time.Now(), machine: machineCPUOf(o.stat.read())}
	c := ReadProcessCPU()
	r.self = c.User + c.System
	for i := range o.servers {
		if t, ok := cpuTicksOf(o.servers[i].read()); ok {
			r.servers += t
		}
	}
	r.ok = r.machine.OK
	return r
}

// Start begins a phase's reading.
func (o *OtherLoad) Start() {
	o.acc, o.sum, o.steal = metrics.OtherCPU{}, 0, 0
	o.last = o.read()
}

// Sample closes a window when OtherWindow has passed since the last one;
// call it at least every OtherWindow.
func (o *OtherLoad) Sample() {
	if time.Since(o.last.at) < OtherWindow {
		return
	}
	r := o.read()
	if o.last.ok && r.ok {
		o.window(o.last, r)
	}
	o.last = r
}

// window adds the window between readings a and b.
func (o *OtherLoad) window(a, b otherReading) {
	wall := b.at.Sub(a.at).Seconds()
	if wall <= 0 || b.machine.Busy < a.machine.Busy {
		return
	}
	machine := float64(b.machine.Busy-a.machine.Busy) / clockTicks / wall
	self := (b.self - a.self).Seconds() / wall
	var servers float64
	if b.servers >= a.servers {
		servers = float64(b.servers-a.servers) / clockTicks / wall
	}
	other := max(machine-self-servers, 0)
	steal := min(float64(b.machine.Steal-min(a.machine.Steal, b.machine.Steal))/clockTicks/wall, other)
	o.acc.Windows++
	o.sum += other
	o.steal += steal
	o.acc.PeakCores = max(o.acc.PeakCores, other)
	if other > metrics.BusyCores {
		o.acc.Busy++
	}
}

// Finish ends the phase's reading.
func (o *OtherLoad) Finish() metrics.OtherCPU {
	o.Sample()
	out := o.acc
	out.OK = out.Windows > 0
	if out.OK {
		out.MeanCores = o.sum / float64(out.Windows)
		out.StealCores = o.steal / float64(out.Windows)
	}
	return out
}
