package judge

import (
	"fmt"
	"math"

	"github.com/brk-bench/brk/internal/metrics"
)

// MaxLimitShare is the share of a connection's time in a phase that the
// peer's stream limit may stay below the target before the phase is
// unfulfilled.
const MaxLimitShare = 0.01

// streamLimitRule names why a requests-test phase is unfulfilled by the
// peer's stream limit: some connection's limit in force stayed below its
// target for more than MaxLimitShare of its time in the phase. "" when
// none did.
func streamLimitRule(s *metrics.Phase, plan Plan, level int) string {
	l := &s.StreamLimit
	if !plan.Mode.spec().perConnPlan || !l.Known || l.Share() <= MaxLimitShare {
		return ""
	}
	return fmt.Sprintf("target unfulfilled: a connection's stream limit stayed below %d for %.3g %% of its time in the phase (the server's SETTINGS_MAX_CONCURRENT_STREAMS fell to %d)",
		plan.depth(level), 100*l.Share(), l.Lowest)
}

// StreamCap is the highest level the server's stream limit admits in the
// requests test, read from the judged phases: the connections × the lowest
// limit a phase's connection had in force for all but MaxLimitShare of
// its time (metrics.StreamLimit.Floor), so that a dip of a few
// milliseconds caps nothing. ok is false in the other tests and while no
// phase knew a limit.
func StreamCap(p Plan, judged []*Judged) (limit int, ok bool) {
	if !p.Mode.spec().perConnPlan {
		return 0, false
	}
	for _, j := range judged {
		if j.Run == nil || j.Run.Stats == nil || !j.Run.Stats.StreamLimit.FloorKnown {
			continue
		}
		c := int(min(j.Run.Stats.StreamLimit.Floor, math.MaxInt32)) * max(p.Conns, 1)
		if !ok || c < limit {
			limit, ok = c, true
		}
	}
	return limit, ok
}

// maxLevel is the search's cap: Levels.Max, or StreamCap when it is lower, with
// the reason a run that held it ends done.
func (s *levelState) maxLevel(b Bracket) (int, string) {
	m := s.p.Levels.Max
	c, ok := StreamCap(s.p, s.judged)
	if !ok || c < 1 || m > 0 && m <= c {
		return m, s.doneReason(b)
	}
	conns := max(s.p.Conns, 1)
	return c, fmt.Sprintf("%s completed and accepted: the server's stream limit capped the search at %d (SETTINGS_MAX_CONCURRENT_STREAMS %d × %d connections); more %s goes further",
		s.p.levelText(b.Held), c, c/conns, conns, s.p.Names.Filled().Conns)
}
