// Package metrics keeps brk's per-worker measurements and merges them.
//
// Each worker owns one Recorder per run and resets it at every phase start.
// Nothing in a Recorder is shared while the phase runs except the Live
// counters, which a reporter may read atomically once a second. At phase
// end the controller merges every worker's Recorder into a Phase on its own
// goroutine, after the workers have handed their recorders over.
//
// The files hold one job each: recorder.go the Recorder and the Live
// counters, phase.go the mergeable Phase, wire.go its JSON and histogram
// encoding, distribution.go the percentile distribution, timeline.go the
// per-span timeline, cpu.go the client's CPU time and othercpu.go the
// box's other load as a phase read them. It holds counts only: what reads
// the box (/proc, getrusage, the cgroup) is internal/machine.
package metrics

import "github.com/HdrHistogram/hdrhistogram-go"

// Category is a failure category of an attempted request.
type Category uint8

// The failure categories of an attempted request, each counted separately
// (the "failures" of docs/reports.md).
const (
	Timeout Category = iota
	Transport
	Abandoned
	Connect
	ConnectTimeout
	Status
	Body
	Protocol
	NumCategories
)

var categoryNames = [NumCategories]string{
	"timeout", "transport", "abandoned", "connect", "connect_timeout", "status", "body", "protocol",
}

// String returns the category's report name.
func (c Category) String() string {
	if c < NumCategories {
		return categoryNames[c]
	}
	return "unknown"
}

// Categories lists every category in report order.
func Categories() []Category {
	out := make([]Category, NumCategories)
	for i := range out {
		out[i] = Category(i)
	}
	return out
}

// Histogram range: 1 µs .. 60 s at 3 significant digits.
const (
	histLowest  = 1
	histHighest = 60_000_000
	histSigFigs = 3
)

// NewHistogram returns a latency histogram in microseconds.
func NewHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(histLowest, histHighest, histSigFigs)
}

// recordUs records a duration in µs, clamped to the histogram's range.
func recordUs(h *hdrhistogram.Histogram, ns int64) {
	us := ns / 1000
	if us < histLowest {
		us = histLowest
	}
	if us > histHighest {
		us = histHighest
	}
	h.RecordValue(us)
}
