#!/usr/bin/env bash
# Side-by-side client cost: brk on epoll and on io_uring vs wrk, h2load and
# gcannon (when GCANNON names its binary) against one nginx, server pinned
# to CPU 0 and clients to CPU 1, 64 connections, depth 1 and depth 8, the
# clients taking turns within each round.
# Prints requests/s and client CPU µs per response (user+sys of the whole
# process ÷ responses), then per pair the median over the rounds of the
# ratio of their CPU per response.
# Usage: [GCANNON=path/to/gcannon] scripts/sidebyside.sh [rounds] [seconds]
set -euo pipefail
rounds=${1:-2}
secs=${2:-10}
cd "$(dirname "$0")/.."
. scripts/nginx.sh
start_nginx
go build -o "$work/brk" ./cmd/brk
cat > "$work/pipe8.lua" <<'LUA'
init = function(args)
  local r = {}
  for i = 1, 8 do r[i] = wrk.format(nil, "/") end
  req = table.concat(r)
end
request = function() return req end
LUA

# measure NAME command...: runs the command under /usr/bin/time on CPU 1
# and appends "round name µs" to $work/results.
measure() {
  local name=$1; shift
  /usr/bin/time -f "%U %S" -o "$work/time" timeout -s KILL $((secs + 30)) taskset -c 1 "$@" > "$work/out" 2>&1 || true
  local cpu resp
  cpu=$(awk '{print $1+$2}' "$work/time" | tail -1)
  case $name in
    brk*) resp=$(python3 -c "import json;d=json.load(open('$work/r.json'));print(sum(p['counts']['succeeded'] for p in d['phases']))") ;;
    wrk*) resp=$(awk '/requests in/ {print $1}' "$work/out") ;;
    h2load*) resp=$(awk '/^requests:/ {print $8}' "$work/out") ;;
    gcannon*) resp=$(awk -F'=' '/Status codes:/ {split($2, a, ","); print a[1]}' "$work/out") ;;
  esac
  if [ -z "$resp" ] || [ "$resp" = 0 ]; then
    echo "$name: no responses counted (not in the medians); its output:"; tail -5 "$work/out"
    return
  fi
  local dur=$secs
  case $name in h2load*) dur=$(awk '/^finished in/ {print $3 + 0}' "$work/out") ;; esac
  awk -v n="$name" -v c="$cpu" -v r="$resp" -v s="$dur" \
    'BEGIN { printf "%-22s %10.0f req/s  %6.2f µs CPU/response  (%d responses, %.2f s CPU)\n", n, r/s, c*1e6/r, r, c }'
  awk -v n="$name" -v c="$cpu" -v r="$resp" -v k="$round" 'BEGIN { printf "%s\t%s\t%.4f\n", k, n, c*1e6/r }' >> "$work/results"
}

for round in $(seq 1 "$rounds"); do
  echo "round $round"
  for depth in 1 8; do
    measure "brk-epoll d$depth" "$work/brk" "$url" --conn 64 --start $depth --max $depth --phase "${secs}s" --threads 1 --io epoll --json "$work/r.json"
    measure "brk-uring d$depth" "$work/brk" "$url" --conn 64 --start $depth --max $depth --phase "${secs}s" --threads 1 --io uring --json "$work/r.json"
    if [ $depth = 1 ]; then
      measure "wrk d1" wrk -t1 -c64 -d"${secs}s" "$url"
    else
      measure "wrk d8" wrk -t1 -c64 -d"${secs}s" -s "$work/pipe8.lua" "$url"
      # A request count, not -D: h2load 1.52 with -D and --h1 -m8 at times
      # never exits after its duration.
      measure "h2load d8" h2load --h1 -c64 -m8 -t1 -n $((secs * 140000)) "$url"
    fi
    if [ -n "${GCANNON:-}" ]; then
      measure "gcannon d$depth" "$GCANNON" "$url" -c 64 -t 1 -d "${secs}s" -p $depth
    fi
  done
done

pairs=()
for d in d1 d8; do
  for a in brk-uring brk-epoll; do
    for b in brk-epoll wrk h2load gcannon; do
      [ $a = $b ] || pairs+=("$a $d|$b $d")
    done
  done
done
python3 scripts/ratios.py "$work/results" "${pairs[@]}"
