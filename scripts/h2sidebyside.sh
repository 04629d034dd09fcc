#!/usr/bin/env bash
# HTTP/2 side by side: brk --http2 on epoll and on io_uring vs h2load
# against one h2o, over TLS (h2) and cleartext with prior knowledge (h2c),
# server pinned to CPU 0 and clients to CPU 1, 64 connections, -m8 and -m32.
# Prints requests/s and client CPU µs per response (user+sys of the whole
# process ÷ responses),
# then the median over the rounds of each pair's ratio.
# Usage: scripts/h2sidebyside.sh [rounds] [seconds]
set -euo pipefail
rounds=${1:-2}
secs=${2:-5}
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'kill $(cat $work/h2o.pid 2>/dev/null) 2>/dev/null || true; rm -rf "$work"' EXIT
port=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
cport=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$work/key.pem" \
  -out "$work/cert.pem" -days 1 -subj /CN=localhost 2>/dev/null
mkdir -p "$work/docs" && printf ok > "$work/docs/ok.txt" && chmod -R a+rX "$work"
cat > "$work/h2o.conf" <<CONF
listen:
  host: 127.0.0.1
  port: $cport
listen:
  host: 127.0.0.1
  port: $port
  ssl:
    certificate-file: $work/cert.pem
    key-file: $work/key.pem
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
go build -o "$work/brk" ./cmd/brk
for r in $(seq "$rounds"); do
 for url in "https://127.0.0.1:$port/ok.txt" "http://127.0.0.1:$cport/ok.txt"; do
  proto=h2 tls=--insecure
  if [ "${url%%:*}" = http ]; then proto=h2c tls=; fi
  for m in 8 32; do
    for io in epoll uring; do
      /usr/bin/time -f "%U %S" -o "$work/brk.time" timeout -s KILL $((secs + 30)) taskset -c 1 "$work/brk" "$url" \
        --http2 $tls --conn 64 --start $m --max $m --phase ${secs}s --threads 1 --timeout 2s --io $io --quiet \
        --json "$work/brk.json" >/dev/null || true
      python3 - "$work/brk.json" "$work/brk.time" <<PY >> "$work/results" || true
import json, sys
p = json.load(open(sys.argv[1]))["phases"][0]; u, s = map(float, open(sys.argv[2]).read().split()[-2:])
ok = p['counts']['succeeded']
print(f"$r\t$proto brk-$io -m$m\t{(u + s) * 1e6 / ok:.4f}")
print(f"round $r $proto brk-$io -m$m: {p['requests_per_sec']:.0f} req/s, {(u + s) * 1e6 / ok:.2f} µs CPU/response, success {p['success_pct']:.2f} %", file=sys.stderr)
PY
      rm -f "$work/brk.json"
    done
    /usr/bin/time -f "%U %S" -o "$work/h2load.time" timeout -s KILL $((secs + 30)) taskset -c 1 \
      h2load -t1 -c64 -m$m -D "$secs" "$url" >"$work/h2load.out" 2>&1 || true
    python3 - "$work/h2load.out" "$work/h2load.time" <<PY >> "$work/results" || true
import re, sys
o = open(sys.argv[1]).read(); u, s = map(float, open(sys.argv[2]).read().split()[-2:])
rps = float(re.search(r"finished in [0-9.]+s, ([0-9.]+) req/s", o).group(1))
ok = int(re.search(r"(\d+) succeeded", o).group(1))
print(f"$r\t$proto h2load -m$m\t{(u + s) * 1e6 / ok:.4f}")
print(f"round $r $proto h2load    -m$m: {rps:.0f} req/s, {(u + s) * 1e6 / ok:.2f} µs CPU/response", file=sys.stderr)
PY
  done
 done
done 2>&1

pairs=()
for proto in h2 h2c; do
  for m in 8 32; do
    pairs+=("$proto brk-uring -m$m|$proto brk-epoll -m$m" "$proto brk-uring -m$m|$proto h2load -m$m" "$proto brk-epoll -m$m|$proto h2load -m$m")
  done
done
python3 scripts/ratios.py "$work/results" "${pairs[@]}"
