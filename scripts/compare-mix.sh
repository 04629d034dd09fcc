#!/usr/bin/env bash
# One brk build against one nginx, one target against a 16-target request
# mix (--targets), side by side: server pinned to CPU 0, client to CPU 1,
# 64 connections, one worker thread, the two alternating run by run so that
# both see the same machine. Prints, per run, requests/s and the client's
# CPU µs per response (the JSON's client_cpu.us_per_response: user+sys of
# the phase ÷ its responses), then the median of each at depth 1 and 8.
# Usage: scripts/compare-mix.sh BRK [rounds] [seconds]
set -euo pipefail
brk=$(realpath "$1")
rounds=${2:-5}
secs=${3:-5}
cd "$(dirname "$0")/.."
. scripts/nginx.sh
start_nginx 4096 100000000
base="http://127.0.0.1:$port"
: > "$work/targets.txt"
for i in $(seq 0 15); do
  printf '# weight %d\nGET %s/t%d\n\n' $((i % 4 + 1)) "$base" "$i" >> "$work/targets.txt"
done

measure() { # name depth args...
  local name=$1 d=$2; shift 2
  taskset -c 1 "$brk" "$@" --conn 64 --start "$d" --max "$d" --phase "${secs}s" --threads 1 --quiet --json "$work/r.json" > /dev/null 2>&1 || true
  python3 - "$work/r.json" "$name" "$d" >> "$work/results" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); p = d["phases"][0]
n = len(p.get("targets") or []) or 1
print(sys.argv[2], sys.argv[3], p["requests_per_sec"], p["client_cpu"]["us_per_response"], n)
PY
  tail -1 "$work/results"
}

: > "$work/results"
for round in $(seq 1 "$rounds"); do
  for d in 1 8; do
    if [ $((round % 2)) = 1 ]; then order="one mix"; else order="mix one"; fi
    for e in $order; do
      case $e in
        one) measure one "$d" "$base/t0" ;;
        mix) measure mix "$d" --targets "$work/targets.txt" ;;
      esac
    done
  done
done
echo "medians of $rounds runs (name depth req/s µs-CPU/response):"
python3 - "$work/results" <<'PY'
import sys, statistics
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
for d in ("1", "8"):
    med = {}
    for name in ("one", "mix"):
        r = [(float(x[2]), float(x[3])) for x in rows if x[0] == name and x[1] == d]
        med[name] = (statistics.median(a for a, _ in r), statistics.median(b for _, b in r))
        print(f"{name:4} depth {d}: {med[name][0]:10.0f} req/s  {med[name][1]:6.3f} µs CPU/response  (runs: {', '.join(f'{b:.3f}' for _, b in r)})")
    print(f"     depth {d}: mix/one CPU per response = {med['mix'][1] / med['one'][1]:.3f}")
PY
