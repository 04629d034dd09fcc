# Sourced by the side-by-side scripts: start_nginx starts the one nginx
# they measure against: one worker pinned to CPU 0, `return 200 "ok"` on
# 127.0.0.1:$port, its files in a new work directory $work, both removed
# by the exit trap it sets. Then url is http://127.0.0.1:$port/.
# Usage: start_nginx [worker_connections] [keepalive_requests] [backlog]
#   (defaults 4096, nginx's own, nginx's own); worker_connections above
#   4096 raises the worker's file limit to match.
start_nginx() {
  local conns=${1:-4096} keepalive=${2:-} backlog=${3:-}
  work=$(mktemp -d)
  trap 'kill $(cat $work/nginx.pid 2>/dev/null) 2>/dev/null || true; rm -rf "$work"' EXIT
  port=$(( 20000 + RANDOM % 20000 ))
  cat > "$work/nginx.conf" <<CONF
$( [ "$(id -u)" = 0 ] && echo "user root;" )
worker_processes 1; daemon on; pid $work/nginx.pid; error_log $work/error.log;
$( [ "$conns" -gt 4096 ] && echo "worker_rlimit_nofile $conns;" )
events { worker_connections $conns; }
http { access_log off; client_body_temp_path $work/cb; proxy_temp_path $work/p;
  fastcgi_temp_path $work/f; uwsgi_temp_path $work/u; scgi_temp_path $work/s;
  $( [ -n "$keepalive" ] && echo "keepalive_requests $keepalive;" )
  server { listen 127.0.0.1:$port${backlog:+ backlog=$backlog}; location / { return 200 "ok"; } } }
CONF
  taskset -c 0 nginx -p "$work" -c "$work/nginx.conf"
  sleep 0.5
  url="http://127.0.0.1:$port/"
}
