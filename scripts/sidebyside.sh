#!/usr/bin/env bash
# Side-by-side client cost: brk (epoll, and io_uring where the kernel has
# it) vs wrk vs h2load against one nginx, server pinned to CPU 0 and
# clients to CPU 1, 10 s at 64 connections.
# Prints requests/s and client CPU µs per response (user+sys ÷ responses).
# Usage: scripts/sidebyside.sh [rounds] [seconds]
set -euo pipefail
rounds=${1:-2}
secs=${2:-10}
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'kill $(cat $work/nginx.pid 2>/dev/null) 2>/dev/null || true; rm -rf "$work"' EXIT
port=$(( 20000 + RANDOM % 20000 ))
cat > "$work/nginx.conf" <<CONF
$( [ "$(id -u)" = 0 ] && echo "user root;" )
worker_processes 1; daemon on; pid $work/nginx.pid; error_log $work/error.log;
events { worker_connections 4096; }
http { access_log off; client_body_temp_path $work/cb; proxy_temp_path $work/p;
  fastcgi_temp_path $work/f; uwsgi_temp_path $work/u; scgi_temp_path $work/s;
  server { listen 127.0.0.1:$port; location / { return 200 "ok"; } } }
CONF
taskset -c 0 nginx -p "$work" -c "$work/nginx.conf"
sleep 0.5
go build -o "$work/brk" ./cmd/brk
url="http://127.0.0.1:$port/"
cat > "$work/pipe8.lua" <<'LUA'
init = function(args)
  local r = {}
  for i = 1, 8 do r[i] = wrk.format(nil, "/") end
  req = table.concat(r)
end
request = function() return req end
LUA

# measure NAME RESPONSES_CMD -- command...: runs under /usr/bin/time on CPU 1.
measure() {
  local name=$1; shift
  /usr/bin/time -f "%U %S" -o "$work/time" taskset -c 1 "$@" > "$work/out" 2>&1 || true
  local cpu resp
  cpu=$(awk '{print $1+$2}' "$work/time" | tail -1)
  case $name in
    brk*) resp=$(python3 -c "import json;d=json.load(open('$work/r.json'));print(sum(p['counts']['succeeded'] for p in d['phases']))") ;;
    wrk*) resp=$(awk '/requests in/ {print $1}' "$work/out") ;;
    h2load*) resp=$(awk '/^requests:/ {print $8}' "$work/out") ;;
  esac
  awk -v n="$name" -v c="$cpu" -v r="$resp" -v s="$secs" \
    'BEGIN { printf "%-22s %10.0f req/s  %6.2f µs CPU/response  (%d responses, %.2f s CPU)\n", n, r/s, c*1e6/r, r, c }'
}

for round in $(seq 1 "$rounds"); do
  echo "round $round"
  measure "brk depth 1" "$work/brk" "$url" --conn 64 --start 1 --max 1 --phase "${secs}s" --threads 1 --json "$work/r.json"
  measure "brk-uring depth 1" "$work/brk" "$url" --conn 64 --start 1 --max 1 --phase "${secs}s" --threads 1 --io uring --json "$work/r.json"
  measure "wrk -t1 -c64" wrk -t1 -c64 -d"${secs}s" "$url"
  measure "brk depth 8" "$work/brk" "$url" --conn 64 --start 8 --max 8 --phase "${secs}s" --threads 1 --json "$work/r.json"
  measure "brk-uring depth 8" "$work/brk" "$url" --conn 64 --start 8 --max 8 --phase "${secs}s" --threads 1 --io uring --json "$work/r.json"
  measure "h2load --h1 -m8" h2load --h1 -c64 -m8 -t1 -D "$secs" "$url"
  measure "wrk pipeline 8" wrk -t1 -c64 -d"${secs}s" -s "$work/pipe8.lua" "$url"
done
