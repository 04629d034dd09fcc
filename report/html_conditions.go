package report

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/brk-bench/brk"
)

// htmlCond is one run condition as a person reads it: a label in words,
// the value with its unit.
type htmlCond struct {
	K, V string
	Code bool // the value is typed text (a command line, a URL)
}

// conditions are the run's conditions, from the Result (the plan as run,
// the top level where the plan has nothing) and c.
func conditions(r *brk.Result, c HTMLConditions, baseline string) []htmlCond {
	p := r.Plan
	unknown := func(s string) string {
		if s == "" {
			return "unknown"
		}
		return s
	}
	out := []htmlCond{
		{K: "Command line", V: unknown(cmp.Or(c.Command, r.Command)), Code: true},
		{K: "Target URL", V: r.URL, Code: true},
		{K: "Test", V: testName(r.Test)},
		{K: "HTTP version", V: httpVersion(r)},
	}
	add := func(k, v string) { out = append(out, htmlCond{K: k, V: v}) }
	threads := r.Threads
	if threads == 0 {
		threads = p.Threads
	}
	if threads > 0 {
		add("Worker threads", strconv.Itoa(threads))
	}
	conns := r.Conns
	if conns == 0 {
		conns = p.Conns
	}
	words := wordsOf(r.Test)
	words.conditions(add, r, p, conns)
	if v := levels(r.Test, p, conns); v != "" {
		add(words.levelsLabel, v)
	}
	words.slots(add, r, p)
	if p.Phase > 0 {
		add("Phase length", fmtMs(p.Phase.Seconds()*1000)+" of admission, then the drain")
	}
	out = append(out, judgeConditions(r)...)
	return append(out, machineConditions(r, c, baseline)...)
}

// judgeConditions are the rules a phase was judged by: the timeout, the
// success needed, the latency limits, the search or the refinement, the
// budget.
func judgeConditions(r *brk.Result) []htmlCond {
	p := r.Plan
	var out []htmlCond
	add := func(k, v string) { out = append(out, htmlCond{K: k, V: v}) }
	timeout := msOf(p.Timeout)
	if !(timeout > 0) {
		timeout = r.TimeoutMs
	}
	if timeout > 0 && finite(timeout) {
		add("Timeout per request", fmtMs(timeout))
	}
	accept := strings.TrimSpace(r.Accept)
	if accept == "" && p.Accept > 0 {
		accept = strconv.FormatFloat(p.Accept, 'f', -1, 64)
	}
	if accept != "" {
		add("Success needed", "at least "+accept+" % of requests in a phase")
	}
	var lim []string
	if p.MaxP99 > 0 {
		lim = append(lim, "p99 at most "+fmtMs(msOf(p.MaxP99)))
	}
	if p.MaxP999 > 0 {
		lim = append(lim, "p99.9 at most "+fmtMs(msOf(p.MaxP999)))
	}
	if len(lim) > 0 {
		add("Latency limits", strings.Join(lim, "; "))
	}
	if s := p.Search; s != nil {
		res := fmt.Sprintf("%d", s.Resolution)
		if s.Resolution == 0 {
			res = strconv.FormatFloat(s.ResolutionPct, 'f', -1, 64) + " % of the last accepted level (at least 1)"
		}
		add("Search", fmt.Sprintf("×%s per phase until a phase is rejected (halving when the first is), then bisection to a resolution of %s; a level that must be confirmed runs up to %s",
			strconv.FormatFloat(s.Growth, 'f', -1, 64), res, times(max(p.Repeat, 1))))
	}
	if p.Budget > 0 {
		add("Budget", fmt.Sprintf("no phase starts that could end past %s of phases", p.Budget))
	}
	if p.Refine && p.Search == nil {
		rep := p.Repeat
		if rep < 1 {
			rep = 1
		}
		add("Refinement", fmt.Sprintf("after the break, bisect down to adjacent levels; a level that must be confirmed runs up to %s", times(rep)))
	}
	return out
}

// machineConditions are the idle baseline, the load machine, the start
// and the versions.
func machineConditions(r *brk.Result, c HTMLConditions, baseline string) []htmlCond {
	var out []htmlCond
	add := func(k, v string) { out = append(out, htmlCond{K: k, V: v}) }
	if baseline != "" {
		add("Idle baseline", baseline)
	}
	add("Load machine", cmp.Or(c.Host, "unknown"))
	if c.CPUs > 0 {
		add("CPUs on the load machine", strconv.Itoa(c.CPUs))
	}
	if c.OS != "" || c.Arch != "" {
		add("Operating system", strings.TrimSpace(c.OS+" / "+c.Arch))
	}
	started := "unknown"
	if !c.Started.IsZero() {
		started = c.Started.Format(time.RFC3339)
	}
	add("Started", started)
	if r.Version != "" {
		add("brk version", r.Version)
	}
	add("Report schema version", strconv.Itoa(r.Schema))
	return out
}

func times(n int) string {
	if n == 1 {
		return "once"
	}
	return fmt.Sprintf("%d times (the majority decides)", n)
}

func testName(m brk.Mode) string {
	if w, ok := modeTable[cmp.Or(m, brk.ModeRequests)]; ok {
		return w.title
	}
	return string(m)
}

func httpVersion(r *brk.Result) string {
	v := r.Protocol
	if p, ok := brk.ProtocolNamed(v); ok || v == "" { // none named: HTTP/1.1
		v = p.Title()
	}
	if r.TLS {
		v += " over TLS"
	} else if strings.HasPrefix(r.URL, "http://") {
		v += ", plain TCP"
	}
	return v
}

// levels describes the schedule: where it starts, the step, the ceiling.
func levels(m brk.Mode, p brk.Plan, conns int) string {
	if p.Start <= 0 && p.Pace <= 0 {
		return ""
	}
	unit, top := wordsOf(m).levelUnit, "no maximum: until a phase is rejected"
	if p.Max > 0 {
		top = fmt.Sprintf("up to %d%s", p.Max, unit)
	}
	s := fmt.Sprintf("%d%s, then +%d each phase; %s", p.Start, unit, p.Pace, top)
	if p.Search != nil {
		s = fmt.Sprintf("from %d%s, searched (below); %s", p.Start, unit, top)
	}
	if m.PerConnPlan() && conns > 0 {
		s += fmt.Sprintf(" (level = %d connections × this)", conns)
	}
	return s
}
