#!/usr/bin/env bash
# Connection setup cost: brk's connections test vs h2load with one request
# per connection, against one nginx (1 worker, CPU 0), clients on CPU 1.
# TLS: full handshakes (brk --no-resume), X25519, ECDSA P-256 certificate.
# Usage: scripts/setups.sh [rounds] [conns] [seconds]
set -euo pipefail
rounds=${1:-2}
conns=${2:-5000}
secs=${3:-10}
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'kill $(cat $work/nginx.pid 2>/dev/null) 2>/dev/null || true; rm -rf "$work"' EXIT
ulimit -n 20000
port=$(( 20000 + RANDOM % 20000 ))
tport=$((port + 1))
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$work/key.pem" -out "$work/cert.pem" \
  -days 1 -subj /CN=localhost -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" 2>/dev/null
cat > "$work/nginx.conf" <<CONF
$( [ "$(id -u)" = 0 ] && echo "user root;" )
worker_processes 1; daemon on; pid $work/nginx.pid; error_log $work/error.log; worker_rlimit_nofile 30000;
events { worker_connections 20000; }
http { access_log off; client_body_temp_path $work/cb; proxy_temp_path $work/p;
  fastcgi_temp_path $work/f; uwsgi_temp_path $work/u; scgi_temp_path $work/s;
  server { listen 127.0.0.1:$port backlog=8192; location / { return 200 "ok"; } }
  server { listen 127.0.0.1:$tport ssl backlog=8192; ssl_certificate $work/cert.pem; ssl_certificate_key $work/key.pem;
    ssl_protocols TLSv1.2 TLSv1.3; ssl_session_cache off; ssl_session_tickets off;
    location / { return 200 "ok"; } } }
CONF
taskset -c 0 nginx -p "$work" -c "$work/nginx.conf"
sleep 0.5
go build -o "$work/brk" ./cmd/brk

run() { # name command...: prints setups/s and client CPU µs per setup
  local name=$1; shift
  /usr/bin/time -f "%U %S" -o "$work/time" taskset -c 1 "$@" > "$work/out" 2>&1 || true
  local cpu setups secs_run
  cpu=$(awk '{print $1+$2}' "$work/time" | tail -1)
  case $name in
    brk*) read -r setups secs_run < <(python3 -c "import json;d=json.load(open('$work/r.json'));p=d['phases'][0];print(p['setups']['established'], p['duration_s'])") ;;
    h2load*) setups=$(awk '/^requests:/ {print $8}' "$work/out"); secs_run=$(awk '/^finished in/ {gsub(",","",$3); v=$3; if (v ~ /ms$/) {sub("ms","",v); v=v/1000} else {sub("s","",v)}; print v}' "$work/out") ;;
  esac
  awk -v n="$name" -v c="$cpu" -v s="$setups" -v t="$secs_run" \
    'BEGIN { printf "%-26s %8d setups in %6.2f s = %7.0f setups/s, %7.1f µs client CPU per setup\n", n, s, t, s/t, c*1e6/s }'
}

for round in $(seq 1 "$rounds"); do
  echo "round $round ($conns concurrent connections)"
  run "brk conn plain" "$work/brk" conn "http://127.0.0.1:$port/" --start "$conns" --max "$conns" --requests 1 \
    --phase "${secs}s" --timeout 10s --threads 1 --quiet --json "$work/r.json"
  run "h2load --h1 plain" h2load --h1 -c"$conns" -n"$conns" -t1 "http://127.0.0.1:$port/"
  run "brk conn TLS full" "$work/brk" conn "https://127.0.0.1:$tport/" --cacert "$work/cert.pem" --tls-group X25519 \
    --no-resume --start "$conns" --max "$conns" --requests 1 --phase "${secs}s" --timeout 10s --threads 1 --quiet --json "$work/r.json"
  run "h2load --h1 TLS full" h2load --h1 -c"$conns" -n"$conns" -t1 "https://127.0.0.1:$tport/"
done
