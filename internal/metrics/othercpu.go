package metrics

// The box's other load, as a phase read it (internal/machine samples it;
// the judge weighs it, docs/search.md).

// BusyCores is the CPU (in cores) that other processes must exceed in a
// window for the box to be busy in it.
const BusyCores = 0.25

// OtherCPU is a phase's reading of the box's other load.
type OtherCPU struct {
	// MeanCores is the mean CPU (cores) other processes used, steal
	// included.
	MeanCores float64 `json:"mean_cores"`
	// StealCores is the part of MeanCores the hypervisor gave to other
	// machines (/proc/stat's steal): no process of this box used it.
	StealCores float64 `json:"steal_cores"`
	// PeakCores is the most they used in one window.
	PeakCores float64 `json:"peak_cores"`
	// Busy of Windows were above BusyCores.
	Busy    int  `json:"busy_windows"`
	Windows int  `json:"windows"`
	OK      bool `json:"ok"` // false where the machine's CPU cannot be read
}

// BusyShare is the share of the windows in which the box was busy.
func (o OtherCPU) BusyShare() float64 {
	if o.Windows == 0 {
		return 0
	}
	return float64(o.Busy) / float64(o.Windows)
}
