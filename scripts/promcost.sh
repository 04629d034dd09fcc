#!/usr/bin/env bash
# The client's CPU per response with and without --prometheus-remote-write,
# side by side against one nginx: nginx and a private Prometheus (the
# receiver) pinned to CPU 0, brk to CPU 1, 64 connections at depth 1 on one
# worker thread, the two kinds of run alternating so that both see the same
# machine. CPU per response is the brk process's user+sys (GNU time) over
# its successful responses. Prints each run and the medians.
# Usage: scripts/promcost.sh [BRK] [runs] [seconds]
set -euo pipefail
cd "$(dirname "$0")/.."
brk=${1:-}
runs=${2:-5}
secs=${3:-5}
work=$(mktemp -d)
cleanup() {
  kill "$(cat "$work/nginx.pid" 2>/dev/null)" 2>/dev/null || true
  [ -f "$work/prom.pid" ] && kill "$(cat "$work/prom.pid")" 2>/dev/null || true
  sleep 0.3
  rm -rf "$work"
}
trap cleanup EXIT
if [ -z "$brk" ]; then
  brk=$work/brk
  go build -o "$brk" ./cmd/brk
fi
port=$(( 20000 + RANDOM % 20000 ))
pport=$(( port + 1 ))
cat > "$work/nginx.conf" <<CONF
$( [ "$(id -u)" = 0 ] && echo "user root;" )
worker_processes 1; daemon on; pid $work/nginx.pid; error_log $work/error.log;
events { worker_connections 4096; }
http { access_log off; client_body_temp_path $work/cb; proxy_temp_path $work/p;
  fastcgi_temp_path $work/f; uwsgi_temp_path $work/u; scgi_temp_path $work/s;
  server { listen 127.0.0.1:$port; location / { return 200 "ok"; } } }
CONF
taskset -c 0 nginx -p "$work" -c "$work/nginx.conf"
printf 'global:\n  scrape_interval: 1m\n' > "$work/prometheus.yml"
taskset -c 0 prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/data" \
  --web.listen-address="127.0.0.1:$pport" --web.enable-remote-write-receiver > "$work/prom.log" 2>&1 &
echo $! > "$work/prom.pid"
for _ in $(seq 1 100); do
  curl -fs "http://127.0.0.1:$pport/-/ready" > /dev/null 2>&1 && break
  sleep 0.2
done
url="http://127.0.0.1:$port/"

# measure NAME ARGS...: one brk run; appends "µs/response" to $work/NAME.
measure() {
  local name=$1; shift
  /usr/bin/time -f "%U %S" -o "$work/time" taskset -c 1 "$brk" "$url" --conn 64 --start 1 --max 1 \
    --phase "${secs}s" --threads 1 --quiet --json "$work/r.json" "$@" > "$work/out" 2>&1 || true
  python3 - "$work" "$name" <<'PY'
import json, sys
work, name = sys.argv[1], sys.argv[2]
u, s = (float(x) for x in open(work + "/time").read().split()[-2:])
d = json.load(open(work + "/r.json"))
resp = sum(p["counts"]["succeeded"] for p in d["phases"])
us = (u + s) * 1e6 / resp
pushed = d.get("prometheus") or {}
print(f"{name:10s} {resp / d['phases'][0]['duration_s']:9.0f} req/s  {us:6.2f} µs CPU/response  ({resp} responses, {u + s:.2f} s CPU; pushed {pushed})")
open(f"{work}/{name}", "a").write(f"{us}\n")
PY
}

for run in $(seq 1 "$runs"); do
  order=(off on)
  if [ $((run % 2)) = 0 ]; then order=(on off); fi
  for kind in "${order[@]}"; do
    if [ "$kind" = on ]; then
      measure push --prometheus-remote-write "http://127.0.0.1:$pport/api/v1/write"
    else
      measure no-push
    fi
  done
done
python3 - "$work" <<'PY'
import statistics, sys
work = sys.argv[1]
off = [float(x) for x in open(work + "/no-push")]
on = [float(x) for x in open(work + "/push")]
mo, mn = statistics.median(off), statistics.median(on)
print(f"median of {len(off)}: without the push {mo:.2f} µs CPU/response, with it {mn:.2f} µs ({100 * (mn - mo) / mo:+.1f} %)")
PY
