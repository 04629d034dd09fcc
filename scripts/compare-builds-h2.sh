#!/usr/bin/env bash
# Two brk builds side by side over HTTP/2 cleartext (h2c, prior knowledge)
# against one h2o: server pinned to CPU 0, clients to CPU 1, 64
# connections, the builds alternating so that both see the same machine.
# Prints requests/s and client CPU µs per response (the report's
# client_cpu.us_per_response) at -m8 and -m32 streams per connection.
# Usage: scripts/compare-builds-h2.sh OLD_BRK NEW_BRK [rounds] [seconds]
set -euo pipefail
old=$1 new=$2
rounds=${3:-3}
secs=${4:-5}
work=$(mktemp -d)
trap 'kill $(cat $work/h2o.pid 2>/dev/null) 2>/dev/null || true; rm -rf "$work"' EXIT
port=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
mkdir -p "$work/docs" && printf ok > "$work/docs/ok.txt" && chmod -R a+rX "$work"
cat > "$work/h2o.conf" <<CONF
listen:
  host: 127.0.0.1
  port: $port
num-threads: 1
$( [ "$(id -u)" = 0 ] && echo "user: root" )
error-log: $work/error.log
hosts:
  default:
    paths:
      /:
        file.dir: $work/docs
CONF
taskset -c 0 h2o -c "$work/h2o.conf" >"$work/h2o.out" 2>&1 &
echo $! > "$work/h2o.pid"
sleep 1
url="http://127.0.0.1:$port/ok.txt"
for r in $(seq "$rounds"); do
  echo "round $r"
  for m in 8 32; do
    pair=("old:$old" "new:$new")
    if [ $((r % 2)) = 0 ]; then pair=("new:$new" "old:$old"); fi
    for e in "${pair[@]}"; do
      taskset -c 1 "${e#*:}" "$url" --http2 --conn 64 --start $m --max $m --phase "${secs}s" \
        --threads 1 --timeout 2s --quiet --json "$work/r.json" >/dev/null || true
      python3 - "$work/r.json" "${e%%:*}" "$m" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))["phases"][0]
print(f"{sys.argv[2]:>4} -m{sys.argv[3]:<3} {p['requests_per_sec']:9.0f} req/s  {p['client_cpu']['us_per_response']:6.2f} µs CPU/response  success {p['success_pct']:.2f} %")
PY
    done
  done
done
