#!/usr/bin/env bash
# Two brk builds side by side with wrk against one nginx: server pinned to
# CPU 0, clients to CPU 1, 64 connections, the builds alternating so that
# both see the same machine. Prints requests/s and client CPU µs per
# response (user+sys ÷ responses) at depth 1 and depth 8.
# Usage: scripts/compare-builds.sh OLD_BRK NEW_BRK [rounds] [seconds]
set -euo pipefail
old=$1 new=$2
rounds=${3:-3}
secs=${4:-5}
cd "$(dirname "$0")/.."
. scripts/nginx.sh
start_nginx

measure() {
  local name=$1; shift
  /usr/bin/time -f "%U %S" -o "$work/time" taskset -c 1 "$@" > "$work/out" 2>&1 || true
  local cpu resp
  cpu=$(awk '{print $1+$2}' "$work/time" | tail -1)
  case $name in
    wrk*) resp=$(awk '/requests in/ {print $1}' "$work/out") ;;
    *) resp=$(python3 -c "import json;d=json.load(open('$work/r.json'));print(sum(p['counts']['succeeded'] for p in d['phases']))") ;;
  esac
  awk -v n="$name" -v c="$cpu" -v r="$resp" -v s="$secs" \
    'BEGIN { printf "%-16s %10.0f req/s  %6.2f µs CPU/response  (%d responses, %.2f s CPU)\n", n, r/s, c*1e6/r, r, c }'
}

for round in $(seq 1 "$rounds"); do
  echo "round $round"
  for d in 1 8; do
    pair=("old:$old" "new:$new")
    if [ $((round % 2)) = 0 ]; then pair=("new:$new" "old:$old"); fi
    for e in "${pair[@]}"; do
      measure "${e%%:*} depth $d" "${e#*:}" "$url" --conn 64 --start "$d" --max "$d" --phase "${secs}s" --threads 1 --json "$work/r.json"
    done
  done
  measure "wrk -t1 -c64" wrk -t1 -c64 -d"${secs}s" "$url"
done
