package report

import "html/template"

// htmlTmpl is the page: the verdict, the charts, a request mix's table
// (html_mix.go), the phase table, the rate test's schedule and the run
// conditions.
var htmlTmpl = template.Must(template.New("report").Funcs(template.FuncMap{"nowrapFlags": nowrapFlags}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8"/>
<meta name="viewport" content="width=device-width, initial-scale=1"/>
<title>brk report: {{.R.URL}}</title>
<style>
:root { color-scheme: light; }
* { box-sizing: border-box; }
body { margin: 0; padding: 24px 20px 40px; background: #f6f7f9; color: #1f2937;
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 28px 0 10px; }
.sub { color: #4b5563; margin: 0 0 18px; word-break: break-all; }
.charts { display: grid; grid-template-columns: minmax(0, 1fr); gap: 14px; }
.charts svg { background: #ffffff; border: 1px solid #dfe3e8; border-radius: 8px; width: 100%; max-width: 840px; height: auto; }
.charts svg.wide { grid-column: 1 / -1; max-width: 100%; }
.charts svg.tl-wide { display: none; }
@media (min-width: 1180px) {
  .charts { grid-template-columns: repeat(2, minmax(0, 1fr)); }
  .charts svg { max-width: 100%; }
  .charts svg.tl-wide { display: block; }
  .charts svg.tl-narrow { display: none; }
}
.nophases { background: #ffffff; border: 1px dashed #c4c9d0; border-radius: 8px; padding: 28px; font-size: 18px; color: #4b5563; }
.verdict { background: #ffffff; border: 1px solid #dfe3e8; border-left-width: 8px; border-radius: 8px; padding: 14px 18px; margin-top: 22px; }
.verdict .big { font-size: 28px; font-weight: 700; }
.verdict .reason { font-size: 17px; margin-top: 4px; white-space: pre-wrap; overflow-wrap: break-word; }
.verdict .bracket { color: #4b5563; margin-top: 6px; }
.verdict .peak { color: #1f2937; margin-top: 6px; }
.nw { white-space: nowrap; }
.v-done { border-left-color: #0b6e2e; } .v-done .big { color: #0b6e2e; }
.v-broken { border-left-color: #a50f15; } .v-broken .big { color: #a50f15; }
.v-inconclusive { border-left-color: #8a6d00; } .v-inconclusive .big { color: #8a6d00; }
.v-interrupted { border-left-color: #555555; } .v-interrupted .big { color: #555555; }
.tablewrap { overflow-x: auto; background: #ffffff; border: 1px solid #dfe3e8; border-radius: 8px; }
table { border-collapse: collapse; font-size: 12px; font-variant-numeric: tabular-nums; width: 100%; }
th, td { padding: 4px 7px; border-bottom: 1px solid #eceef1; text-align: right; vertical-align: top; }
td { white-space: nowrap; }
thead th { background: #f0f2f5; font-weight: 600; vertical-align: bottom; }
td.l, th.l { text-align: left; }
table.phases tbody.phase tr:first-child td { border-bottom: 0; }
td.fails { white-space: normal; }
td.fails div { white-space: nowrap; }
td.fails .none { color: #6b7280; }
.per { color: #6b7280; font-size: 11px; }
td.note { text-align: left; white-space: normal; overflow-wrap: anywhere; color: #374151; padding-top: 0; }
td.note .reason { font-weight: 600; }
tr.acc td.note .reason { font-weight: 400; }
td.note code { font-size: 11.5px; }
details summary { cursor: pointer; color: #4b5563; font-size: 11.5px; }
.figs { display: grid; grid-template-columns: repeat(auto-fill, minmax(200px, 1fr)); gap: 6px 18px; padding: 6px 0 4px; }
.figs dl { display: grid; grid-template-columns: minmax(7em, 1fr) minmax(0, auto); gap: 1px 10px; margin: 0; align-content: start; }
.figs dt { color: #4b5563; }
.figs dt.g { grid-column: 1 / -1; color: #1f2937; font-weight: 600; border-bottom: 1px solid #eceef1; }
.figs dd { margin: 0; text-align: right; overflow-wrap: anywhere; }
tr.bad td { background: #fdf1f0; }
tr.int td { color: #6b7280; font-style: italic; }
.st-ok { color: #0b6e2e; } .st-bad { color: #a50f15; font-weight: 600; } .st-int { color: #6b7280; }
.tag { display: inline-block; font-size: 11px; font-weight: 600; padding: 0 5px; border-radius: 4px; background: #eef0f3; color: #374151; font-style: normal; }
.cb { color: #8a6d00; font-weight: 600; }
.tag.cb { background: #fbf3d5; }
dl.cond { display: grid; grid-template-columns: max-content 1fr; gap: 4px 18px; background: #ffffff;
  border: 1px solid #dfe3e8; border-radius: 8px; padding: 14px 18px; margin: 0; }
dl.cond dt { color: #4b5563; }
dl.cond dd { margin: 0; overflow-wrap: anywhere; }
table.mix th.grp { text-align: center; border-left: 2px solid #dfe3e8; }
table.mix th.grp.bad { color: #a50f15; }
table.mix td.tname { white-space: normal; overflow-wrap: anywhere; }
table.mix th, table.mix td { padding: 4px 5px; }
table.mix td.none { text-align: center; color: #6b7280; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12.5px; }
</style>
</head>
<body>
<h1>brk {{.R.Test}} test</h1>
<p class="sub"><code>{{.R.URL}}</code></p>
<div class="verdict {{.VerdictClass}}">
<div class="big">{{.Final}}</div>
<div class="held">{{nowrapFlags .Held}}</div>
{{if .Peak}}<div class="peak">{{.Peak}}{{if .Knee}}<br/>{{.Knee}}{{end}}</div>{{end}}
{{if .Reason}}<div class="reason run">{{nowrapFlags .Reason}}</div>{{end}}
<div class="bracket">last accepted: <b>{{.LastAccepted}}</b> · first rejected: <b>{{.FirstRejected}}</b> ({{.Unit}})</div>
</div>
{{if .Charts}}<div class="charts">
{{range .Charts}}{{.}}
{{end}}</div>{{else}}<div class="nophases">no phases ran</div>{{end}}
{{if .Mix}}{{template "mix" .Mix}}{{end}}
<h2>Phases</h2>
{{if .Rows}}<div class="tablewrap"><table class="phases">
<thead>
<tr><th>#</th><th>level</th><th class="l">state</th><th>success %</th><th>successful req/s</th><th>succeeded / attempted</th><th class="l">failures</th>
<th>p50 ms</th><th>p90 ms</th><th>p99 ms</th><th>p99.9 ms</th><th>max ms</th></tr>
</thead>
{{range .Rows}}<tbody class="phase">
<tr class="{{.StateClass}}"><td>{{.Index}}</td><td>{{.Level}}{{if .Per}}<div class="per">{{.Per}}</div>{{end}}</td>
<td class="l {{if eq .StateClass "bad"}}st-bad{{else if eq .StateClass "int"}}st-int{{else}}st-ok{{end}}">{{.State}}{{if .Role}} <span class="tag">{{.Role}}</span>{{else if .Probe}} <span class="tag">probe</span>{{end}}{{if .ClientBound}} <span class="tag cb">client-bound</span>{{end}}</td>
<td>{{.SuccessPct}}</td><td>{{.RPS}}</td><td>{{.Succeeded}}<div class="per">of {{.Attempted}}</div></td>
<td class="l fails">{{range .Failed}}<div>{{.K}} {{.V}}</div>{{else}}<span class="none">none</span>{{end}}</td>
<td>{{.P50}}</td><td>{{.P90}}</td><td>{{.P99}}</td><td>{{.P999}}</td><td>{{.Max}}</td></tr>
<tr class="{{.StateClass}} more"><td></td><td colspan="11" class="note">
{{if .Reason}}<div class="reason">{{.Reason}}</div>{{end}}{{if .Fault}}<div>protocol fault: {{.Fault}}</div>{{end}}{{if .SetupEr}}<div>setup error: {{.SetupEr}}</div>{{end}}{{if .Server}}<div>server: {{.Server}}</div>{{end}}{{if .Statuses}}<div>statuses: {{.Statuses}}</div>{{end}}{{if .BodySample}}<div>first differing body: <code>{{.BodySample}}</code></div>{{end}}
<details><summary>every figure of phase {{.Index}}</summary><div class="figs">
{{range .Groups}}<dl><dt class="g">{{.Title}}</dt>{{range .Items}}<dt>{{.K}}</dt><dd>{{.V}}</dd>{{end}}</dl>
{{end}}</div></details></td></tr>
</tbody>
{{end}}</table></div>{{else}}<p>no phases ran</p>{{end}}
{{if .RateRows}}<h2>Schedule (rate test)</h2>
<p class="sub">Latency above counts from each request's scheduled instant (backlog is latency). Send lag: scheduled → written; service: written → response; client lag: scheduled → taken up by its worker. Above 1 % shortfall the client did not keep its schedule and the phase is unfulfilled.</p>
<div class="tablewrap"><table>
<thead><tr><th>#</th><th>level (requests/s)</th><th>scheduled</th><th>written</th><th>expired unsent</th><th>offered req/s</th><th>achieved req/s</th>
<th>send lag p50 ms</th><th>send lag p99 ms</th><th>send lag max ms</th><th>service p50 ms</th><th>service p99 ms</th><th>client lag p99 ms</th><th>shortfall %</th></tr></thead>
<tbody>
{{range .RateRows}}<tr><td>{{.Index}}</td><td>{{.Level}}</td><td>{{.Scheduled}}</td><td>{{.Written}}</td><td>{{.ExpiredUnsent}}</td><td>{{.Offered}}</td><td>{{.Achieved}}</td>
<td>{{.LagP50}}</td><td>{{.LagP99}}</td><td>{{.LagMax}}</td><td>{{.SvcP50}}</td><td>{{.SvcP99}}</td><td>{{.ClientP99}}</td><td>{{.Shortfall}}</td></tr>
{{end}}</tbody>
</table></div>{{end}}
<h2>Run conditions</h2>
<dl class="cond">
{{range .Conds}}<dt>{{.K}}</dt><dd>{{if .Code}}<code>{{.V}}</code>{{else}}{{.V}}{{end}}</dd>
{{end}}</dl>
</body>
</html>
`))
