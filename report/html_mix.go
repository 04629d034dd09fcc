package report

import (
	"fmt"
	"html/template"
	"sort"
	"strconv"
	"strings"

	"github.com/brk-bench/brk"
)

// The request mix's table: one row per target, the final pair's two
// phases side by side (the last accepted, the first rejected), the rows by
// the rejected phase's failure share, highest first (then the accepted
// one's, then mix order), so which endpoint broke first is the first row.
// Absent without a mix.

// htmlMix is the table's data.
type htmlMix struct {
	Held, Broke string // the columns' headings: "phase 1 · 32 (last accepted)"; "" when the pair lacks it
	Rows        []htmlMixRow
}

// htmlMixRow is one target in the final pair's two phases.
type htmlMixRow struct {
	Name   string // method and path
	Weight int
	H, B   *htmlMixCell // nil: the phase is not in the pair, or lacks the target
}

// htmlMixCell is one target's figures in one phase.
type htmlMixCell struct {
	Attempted           uint64
	SuccessPct, FailPct string
	Bad                 bool     // some of its requests failed
	Failed              []htmlKV // the failure categories that happened
	Statuses            string   // status codes other than 2xx
	P50, P99, Max       string
}

// mixTable is the final pair's per-target table, nil when neither phase
// of the pair has targets.
func mixTable(r *brk.Result) *htmlMix {
	held, broke := PairPhases(r)
	hasTargets := func(p *brk.PhaseStats) bool { return p != nil && len(p.Targets) > 0 }
	if !hasTargets(held) && !hasTargets(broke) {
		return nil
	}
	m := &htmlMix{}
	unit := r.Test.Unit()
	byIndex := map[int]*htmlMixRow{}
	var order []int
	add := func(p *brk.PhaseStats, cell func(*htmlMixRow, *htmlMixCell)) {
		for i := range p.Targets {
			t := &p.Targets[i]
			row := byIndex[t.Index]
			if row == nil {
				row = &htmlMixRow{Name: TargetName(t), Weight: t.Weight}
				byIndex[t.Index] = row
				order = append(order, t.Index)
			}
			cell(row, mixCell(t))
		}
	}
	var heldShare, brokeShare map[int]float64
	if hasTargets(held) {
		m.Held = fmt.Sprintf("phase %d · %d %s (last accepted)", held.Index, held.Level, unit)
		add(held, func(row *htmlMixRow, c *htmlMixCell) { row.H = c })
		heldShare = shares(held.Targets)
	}
	if hasTargets(broke) {
		m.Broke = fmt.Sprintf("phase %d · %d %s (first rejected)", broke.Index, broke.Level, unit)
		add(broke, func(row *htmlMixRow, c *htmlMixCell) { row.B = c })
		brokeShare = shares(broke.Targets)
	}
	sort.SliceStable(order, func(i, j int) bool {
		a, b := order[i], order[j]
		if brokeShare[a] != brokeShare[b] {
			return brokeShare[a] > brokeShare[b]
		}
		if heldShare[a] != heldShare[b] {
			return heldShare[a] > heldShare[b]
		}
		return a < b
	})
	for _, i := range order {
		m.Rows = append(m.Rows, *byIndex[i])
	}
	return m
}

// shares is each target's failure share by its index.
func shares(ts []brk.TargetStats) map[int]float64 {
	m := make(map[int]float64, len(ts))
	for i := range ts {
		m[ts[i].Index] = TargetFailureShare(&ts[i])
	}
	return m
}

func mixCell(t *brk.TargetStats) *htmlMixCell {
	l := t.LatencyMs
	c := &htmlMixCell{Attempted: t.Counts.Attempted, Bad: TargetFailed(t) > 0,
		SuccessPct: strings.TrimSuffix(targetPct(t, t.SuccessPct), " %"),
		FailPct:    strings.TrimSuffix(targetPct(t, 100*TargetFailureShare(t)), " %"),
		P50:        strings.TrimSuffix(MsOf(l, l.P50), " ms"), P99: strings.TrimSuffix(MsOf(l, l.P99), " ms"),
		Statuses: nonSuccessCodes(t.StatusCodes)}
	for _, name := range brk.FailureCategories() {
		if n := t.Counts.Failure(name); n > 0 {
			c.Failed = append(c.Failed, htmlKV{name, strconv.FormatUint(n, 10)})
		}
	}
	return c
}

// The table's template, called by the page (html_page.go) with an
// *htmlMix.
var _ = template.Must(htmlTmpl.New("mix").Parse(`<h2>Request mix: which target broke first</h2>
<p class="sub">Each target of the mix in the final pair's phases, by the rejected phase's failure share (failed ÷ attempted), highest first. The verdict is judged on all targets together.</p>
<div class="tablewrap"><table class="mix">
<thead>
<tr><th class="l" rowspan="2">target</th>
{{if .Held}}<th colspan="5" class="grp">{{.Held}}</th>{{end}}{{if .Broke}}<th colspan="5" class="grp bad">{{.Broke}}</th>{{end}}</tr>
<tr>{{if .Held}}<th>attempted</th><th>success %</th><th>p50 ms</th><th>p99 ms</th><th class="l">failures</th>{{end}}{{if .Broke}}<th>attempted</th><th>failed %</th><th>p50 ms</th><th>p99 ms</th><th class="l">failures</th>{{end}}</tr>
</thead>
<tbody>
{{$held := .Held}}{{$broke := .Broke}}{{range .Rows}}<tr>
<td class="l tname"><code>{{.Name}}</code><div class="per">weight {{.Weight}}</div></td>
{{if $held}}{{with .H}}<td>{{.Attempted}}</td><td>{{.SuccessPct}}</td><td>{{.P50}}</td><td>{{.P99}}</td>{{template "mixfails" .}}{{else}}<td colspan="5" class="none">—</td>{{end}}{{end}}
{{if $broke}}{{with .B}}<td>{{.Attempted}}</td><td class="{{if .Bad}}st-bad{{end}}">{{.FailPct}}</td><td>{{.P50}}</td><td>{{.P99}}</td>{{template "mixfails" .}}{{else}}<td colspan="5" class="none">—</td>{{end}}{{end}}
</tr>
{{end}}</tbody>
</table></div>
{{define "mixfails"}}<td class="l fails">{{range .Failed}}<div>{{.K}} {{.V}}</div>{{else}}<span class="none">none</span>{{end}}{{if .Statuses}}<div class="per">non-2xx {{.Statuses}}</div>{{end}}</td>{{end}}`))
