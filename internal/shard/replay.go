package shard

import (
	"context"
	"fmt"

	"github.com/brk-bench/brk/internal/judge"
)

// Recorded is one shard report's phase as a merge reads it: its index,
// level, depth and role, and the shard's raw measurement (nil: none).
type Recorded struct {
	Index, Level, Depth int
	Role                string
	M                   *judge.Measurement
}

// Report is one shard's recorded phases and, for errors, how its run
// ended ("": no reason given; else "broken, REASON").
type Report struct {
	Phases []Recorded
	Ended  string
}

func (r *Report) phase(n int) *Recorded {
	var out *Recorded
	for i := range r.Phases {
		if r.Phases[i].Index == n {
			out = &r.Phases[i]
		}
	}
	return out
}

// Replay runs plan's ramp again over the shards' reports (in shard
// order): phase n is the merge of every shard's phase n (counts and
// integrals add, histograms merge), judged by the verdict code of a
// single box, so that the verdict and levels are recomputed, never
// averaged. A report that ends early, lacks a raw measurement or ran
// another level than the ramp expects ends the replay inconclusive.
// obs is told of every judged phase.
func Replay(plan judge.Plan, reports []Report, obs judge.Observer) *judge.Outcome {
	return judge.NewRamp(&replay{reports: reports}, plan, obs).Run(context.Background())
}

// Unjudged is the merge of every shard's phase n and shard 0's record of
// it, or nil when a shard did not run it or ran another level: what
// shards without a coordinator ran past a replay's end.
func Unjudged(reports []Report, n int) (*judge.Measurement, *Recorded) {
	var first *Recorded
	ms := make([]*judge.Measurement, 0, len(reports))
	for i := range reports {
		ps := reports[i].phase(n)
		if ps == nil || ps.M == nil || first != nil && ps.Level != first.Level {
			return nil, nil
		}
		if first == nil {
			first = ps
		}
		ms = append(ms, ps.M)
	}
	return Merge(ms), first
}

// replay is a judge.Phaser over recorded shard reports: phase n is the merge of
// every shard's raw measurement of phase n.
type replay struct {
	reports []Report
	n       int
}

func (rp *replay) RunPhase(_ context.Context, spec judge.PhaseSpec) (*judge.Measurement, error) {
	n := rp.n
	rp.n++
	ms := make([]*judge.Measurement, 0, len(rp.reports))
	for k := range rp.reports {
		r := &rp.reports[k]
		ps := r.phase(n)
		switch {
		case ps == nil:
			why := ""
			if r.Ended != "" {
				why = ": it ended " + r.Ended
			}
			return nil, fmt.Errorf("shard %d's report ends before phase %d%s", k, n, why)
		case ps.M == nil:
			return nil, fmt.Errorf("shard %d's report has no raw measurement for phase %d", k, n)
		case ps.Level != spec.Level:
			return nil, fmt.Errorf("shard %d's phase %d ran level %d, the merged ramp expects %d", k, n, ps.Level, spec.Level)
		}
		ms = append(ms, ps.M)
	}
	return Merge(ms), nil
}
