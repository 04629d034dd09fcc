#!/usr/bin/env bash
# Memory per connection on each backend: brk's peak resident set at N
# concurrent connections (depth 1, one worker, a 5 s phase) against one
# nginx, server pinned to CPU 0 and brk to CPU 1, the backends taking turns.
# Prints each run's peak RSS, then per backend the KB each connection adds
# (the slope between the smallest and the largest count) and the peak RSS
# per connection at the largest.
# Usage: scripts/connmem.sh [rounds] [counts...]   (default: 2 1000 5000 15000)
set -euo pipefail
rounds=${1:-2}
shift || true
counts=("$@")
[ ${#counts[@]} -gt 0 ] || counts=(1000 5000 15000)
cd "$(dirname "$0")/.."
. scripts/nginx.sh
start_nginx 40000 1000000 65535
go build -o "$work/brk" ./cmd/brk
for round in $(seq 1 "$rounds"); do
  for n in "${counts[@]}"; do
    for io in epoll uring; do
      /usr/bin/time -f "%M" -o "$work/time" timeout -s KILL 60 taskset -c 1 "$work/brk" "http://127.0.0.1:$port/" \
        --conn "$n" --max 1 --phase 5s --timeout 5s --threads 1 --io "$io" --quiet --json "$work/r.json" >/dev/null 2>&1 || true
      ok=$(python3 -c "import json;print(json.load(open('$work/r.json'))['phases'][0]['counts']['succeeded'])" 2>/dev/null || echo 0)
      printf "round %d  %-6s %6d connections  peak RSS %7d KB  (%d responses)\n" "$round" "$io" "$n" "$(tail -1 "$work/time")" "$ok"
      printf "%s\t%s\t%s\n" "$io" "$n" "$(tail -1 "$work/time")" >> "$work/results"
      rm -f "$work/r.json"
    done
  done
done
python3 - "$work/results" <<'PY'
import collections, statistics, sys
rss = collections.defaultdict(list)
for line in open(sys.argv[1]):
    io, n, kb = line.split()
    rss[io, int(n)].append(int(kb))
for io in ("epoll", "uring"):
    ns = sorted(n for (b, n) in rss if b == io)
    lo, hi = ns[0], ns[-1]
    a, b = statistics.median(rss[io, lo]), statistics.median(rss[io, hi])
    slope = (b - a) / (hi - lo) if hi > lo else float("nan")
    print(f"{io}: {slope:.2f} KB per connection from {lo} to {hi} connections; at {hi}: {b / 1024:.1f} MB, {b / hi:.2f} KB per connection (medians)")
PY
