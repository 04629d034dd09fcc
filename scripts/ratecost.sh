#!/usr/bin/env bash
# The rate test's client against one nginx (1 worker, `return 200 "ok"`),
# server pinned to CPU 0 and clients to CPU 1, 64 connections:
#  1. a sweep of brk rate levels (2 s phases): each level's send lag p99
#     and client lag p99, to find the highest rate kept with send lag p99
#     under 1 ms;
#  2. client CPU µs per response at 12,500 requests/s for 10 s, brk rate
#     beside vegeta (`vegeta attack -rate 12500/s -connections 64
#     -max-connections 64 -duration 10s`), CPU = user+sys of the client
#     process (/usr/bin/time) ÷ responses.
# Usage: scripts/ratecost.sh [rounds] [sweep-start] [sweep-pace] [sweep-max]
set -euo pipefail
rounds=${1:-2}
start=${2:-10000}
pace=${3:-10000}
max=${4:-100000}
cd "$(dirname "$0")/.."
vegeta=${VEGETA:-$(go env GOPATH)/bin/vegeta}
. scripts/nginx.sh
start_nginx 4096 1000000
go build -o "$work/brk" ./cmd/brk

echo "sweep: brk rate --start $start --pace $pace --max $max --phase 2s --conn 64 --threads 1 (CPU 1)"
taskset -c 1 "$work/brk" rate "$url" --start "$start" --pace "$pace" --max "$max" --phase 2s --conn 64 \
  --threads 1 --quiet --json "$work/sweep.json" > "$work/sweep.out" 2>&1 || true
python3 - "$work/sweep.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for p in d["phases"]:
    r = p["rate"]
    print(f'  {p["level"]:>7} req/s: accepted {p["accepted"]!s:5}  offered {r["offered_per_sec"]:9.0f}  achieved {r["achieved_per_sec"]:9.0f}  '
          f'send lag p99 {r["send_lag_ms"]["p99"]:8.3f} ms  client lag p99 {r["client_lag_ms"]["p99"]:8.3f} ms  '
          f'latency p99 {p["latency_ms"]["p99"]:8.3f} ms  shortfall {r["shortfall_pct"]:.3f} %  worker busy {p["worker_busy_pct"]}')
print("  verdict:", d["verdict"], "-", d["reason"])
PY

for round in $(seq 1 "$rounds"); do
  echo "round $round: 12,500 requests/s, 10 s, 64 connections"
  /usr/bin/time -f "%U %S" -o "$work/time" taskset -c 1 "$work/brk" rate "$url" --start 12500 --max 12500 \
    --phase 10s --conn 64 --threads 1 --quiet --json "$work/r.json" > "$work/out" 2>&1 || true
  python3 - "$work/r.json" "$work/time" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); p = d["phases"][0]; r = p["rate"]
u, s = map(float, open(sys.argv[2]).read().split()[-2:])
n = p["counts"]["succeeded"]
print(f'  brk rate     {n} responses, {(u+s)*1e6/n:6.2f} µs CPU/response ({u+s:.2f} s CPU); send lag p99 {r["send_lag_ms"]["p99"]:.3f} ms, latency p99 {p["latency_ms"]["p99"]:.3f} ms')
PY
  echo "GET $url" > "$work/targets"
  /usr/bin/time -f "%U %S" -o "$work/time" taskset -c 1 "$vegeta" attack -targets "$work/targets" -rate 12500/s \
    -connections 64 -max-connections 64 -duration 10s > "$work/results.bin" 2> "$work/vegeta.err" || true
  "$vegeta" report -type json "$work/results.bin" > "$work/vr.json"
  python3 - "$work/vr.json" "$work/time" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
u, s = map(float, open(sys.argv[2]).read().split()[-2:])
n = round(d["requests"] * d["success"])
print(f'  vegeta       {n} responses, {(u+s)*1e6/n:6.2f} µs CPU/response ({u+s:.2f} s CPU); latency p99 {d["latencies"]["99th"]/1e6:.3f} ms')
PY
done
