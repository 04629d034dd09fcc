package report

import (
	"cmp"
	"fmt"
	"strconv"

	"github.com/brk-bench/brk"
)

// modeWords is what the report says per test mode: one entry per mode,
// read by the text and HTML writers, which never compare modes. Where a
// level is made of a depth per connection (Mode.PerConnPlan: the requests
// test) the report also says what it is made of and shows a
// per-connection column. A report without "test" reads as the requests
// test.
type modeWords struct {
	title       string // the HTML's "Test" condition
	levelsLabel string // the HTML's label of the plan's levels
	levelUnit   string // after a plan's number: "", " connections", " requests/s"
	// setupLines: a phase block gives the setups lines of their own (a
	// level made of setups), not a part of the generator's line.
	setupLines bool
	// rampLine is the text header's line of a linear ramp (maxs: the
	// ceiling or "none").
	rampLine func(p brk.Plan, maxs string, threads int) string
	// oneLevel is what a run of one level holds.
	oneLevel func(t brk.Target, p brk.Plan) string
	// searchOver is what the search's levels run over: "64 connections; ".
	searchOver func(p brk.Plan) string
	// phaseLevel is a phase block's level: "level 8 concurrent connections".
	phaseLevel func(s *brk.PhaseStats) string
	// conditions adds the mode's HTML conditions before the levels
	// (conns: the run's connections, from the report or its plan).
	conditions func(add func(k, v string), r *brk.Result, p brk.Plan, conns int)
	// slots adds the mode's HTML conditions after the levels.
	slots func(add func(k, v string), r *brk.Result, p brk.Plan)
}

var modeTable = map[brk.Mode]*modeWords{
	brk.ModeRequests: {
		title:       "requests: raises concurrent requests phase by phase",
		levelsLabel: "Outstanding requests per connection",
		rampLine: func(p brk.Plan, maxs string, threads int) string {
			return fmt.Sprintf("  %s, start %d, pace %d, max %s per connection; phase %s; %s\n",
				plural(p.Conns, "connection"), p.Start, p.Pace, maxs, p.Phase, workers(p, threads))
		},
		oneLevel: func(t brk.Target, p brk.Plan) string {
			n := p.Start * p.Conns
			return fmt.Sprintf("%d %s (%s)", n, brk.ModeRequests.Noun(), t.Proto().LevelMadeOf(n, p.Conns))
		},
		searchOver: func(p brk.Plan) string { return plural(p.Conns, "connection") + "; " },
		phaseLevel: func(s *brk.PhaseStats) string {
			if s.Level%max(s.Depth, 1) == 0 {
				return fmt.Sprintf("level %d concurrent requests (%d per connection)", s.Level, s.Depth)
			}
			return fmt.Sprintf("level %d concurrent requests (at most %d per connection)", s.Level, s.Depth)
		},
		conditions: connsOpenedOnce,
		slots:      func(func(k, v string), *brk.Result, brk.Plan) {},
	},
	brk.ModeConnections: {
		title:       "connections: raises concurrent connections phase by phase",
		levelsLabel: "Concurrent connections",
		levelUnit:   " connections",
		setupLines:  true,
		rampLine: func(p brk.Plan, maxs string, threads int) string {
			if p.Requests == 0 {
				p.Requests = 1
			}
			return fmt.Sprintf("  concurrent connections: start %d, pace %d, max %s; %s; phase %s; %s\n",
				p.Start, p.Pace, maxs, perConnection(p), p.Phase, workers(p, threads))
		},
		oneLevel: func(_ brk.Target, p brk.Plan) string {
			if p.KeepAlive {
				return fmt.Sprintf("%s, each kept open carrying requests one at a time", plural(p.Start, "connection"))
			}
			return fmt.Sprintf("%s, %s per connection", plural(p.Start, "connection"), plural(max(p.Requests, 1), "request"))
		},
		searchOver: func(p brk.Plan) string { return perConnection(p) + "; " },
		phaseLevel: func(s *brk.PhaseStats) string {
			return fmt.Sprintf("level %d concurrent connections", s.Level)
		},
		conditions: func(add func(k, v string), r *brk.Result, p brk.Plan, _ int) {
			n := r.Requests
			if n == 0 {
				n = p.Requests
			}
			if n > 0 {
				add("Requests per connection", strconv.Itoa(n))
			}
		},
		slots: func(func(k, v string), *brk.Result, brk.Plan) {},
	},
	brk.ModeRate: {
		title:       "rate: raises the offered requests/s phase by phase (an open model)",
		levelsLabel: "Offered rate",
		levelUnit:   " requests/s",
		rampLine: func(p brk.Plan, maxs string, threads int) string {
			depth, arrivals := rateSlots(p)
			return fmt.Sprintf("  offered rate: start %d, pace %d, max %s requests/s, %s arrivals; %s × %d outstanding at most; phase %s; %s\n",
				p.Start, p.Pace, maxs, arrivals, plural(p.Conns, "connection"), depth, p.Phase, workers(p, threads))
		},
		oneLevel: func(_ brk.Target, p brk.Plan) string {
			depth, arrivals := rateSlots(p)
			return fmt.Sprintf("%d requests/s offered, %s arrivals, over %s × %d outstanding at most", p.Start, arrivals, plural(p.Conns, "connection"), depth)
		},
		searchOver: func(p brk.Plan) string {
			depth, arrivals := rateSlots(p)
			return fmt.Sprintf("%s arrivals; %s × %d outstanding at most; ", arrivals, plural(p.Conns, "connection"), depth)
		},
		phaseLevel: func(s *brk.PhaseStats) string { return fmt.Sprintf("level %d requests/s", s.Level) },
		conditions: connsOpenedOnce,
		slots:      rateConditions,
	},
}

// wordsOf is m's entry; a report without "test" (or of a test this
// version does not know) reads as the requests test.
func wordsOf(m brk.Mode) *modeWords {
	if w, ok := modeTable[m]; ok {
		return w
	}
	return modeTable[brk.ModeRequests]
}

// rateSlots is a rate plan's depth per connection and arrivals, their
// defaults filled in.
func rateSlots(p brk.Plan) (depth int, arrivals string) {
	depth, arrivals = max(p.RateDepth, 1), p.Arrivals
	if arrivals == "" {
		arrivals = "uniform"
	}
	return depth, arrivals
}

// connsOpenedOnce is the HTML condition of connections opened once.
func connsOpenedOnce(add func(k, v string), _ *brk.Result, _ brk.Plan, conns int) {
	if conns > 0 {
		add("Connections", fmt.Sprintf("%d, opened once", conns))
	}
}

// rateConditions are the rate test's slots and arrivals.
func rateConditions(add func(k, v string), r *brk.Result, p brk.Plan) {
	if depth := cmp.Or(r.RateDepth, p.RateDepth); depth > 0 {
		add("Outstanding requests per connection, at most", strconv.Itoa(depth))
	}
	if arr := cmp.Or(r.Arrivals, p.Arrivals); arr != "" {
		if seed := cmp.Or(r.Seed, p.Seed); seed != 0 {
			arr += fmt.Sprintf(" (seed %d)", seed)
		}
		add("Arrivals", arr)
	}
}
