#!/usr/bin/env bash
# How much of the module one response walks through, per response of one
# fixed-load phase, against brk's own fixture (`brk fixture`, pinned to
# CPU 0; the client `brk req -d` with --threads 1, pinned to CPU 1):
#  - sched→other calls/response: the calls executed from the engine
#    package's non-test files (the module package whose import path ends in
#    /sched, or $ENGINE) into other packages of the module — functions,
#    methods, and methods of module interfaces that another module package
#    implements (o.sess.Parse: proto.Session, h1/h2.Session) — each call
#    site weighted by the count of the coverage block that holds it;
#  - files/response: the module source files having a coverage block run
#    at least 0.5 × responses times (about once per response or more).
# brk is built with -cover -covermode=count -coverpkg=MODULE/..., its
# counters converted by `go tool covdata textfmt`; scripts/callcount reads
# them (and type-checks the module to find the call sites).
# The counts are of the whole process: flag parsing, setup, the drain and
# the report are counted too, divided by the phase's responses (succeeded;
# tens of thousands): a diluted constant, not a per-response cost. Calls
# it adds are few (the details say how many); a file whose hottest block
# is near 0.5/response can be such a constant (the report's redaction walk,
# internal/redact/walk.go; the /proc scan of internal/metrics/listeners_linux.go,
# which grows with the box's sockets): the lists give each file's hottest
# block so that it shows. At depth > 1 the event loop's calls (Read,
# Output, Wait) per response follow how many responses a wakeup finds: they
# vary from run to run with the box's load; the per-request ones do not.
# A block's count is how often it was entered: a call in a loop condition
# (`for i := 0; i < f(); i++`) counts once per loop, one behind `&&` or in
# a later `case` as often as its block ran, evaluated or not.
# Usage: scripts/callcount.sh [brk-source-dir] [rounds]
#   ENGINE (default /sched) the engine package's import path or suffix;
#   CONNS (16) connections; SECS (2) the phase; TOP (10) call sites listed;
#   KEEP=1 keeps the work directory (profiles, reports, the lists).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "${1:-$here/..}" && pwd)
rounds=${2:-2}
conns=${CONNS:-16} secs=${SECS:-2} top=${TOP:-10} engine=${ENGINE:-/sched}
work=$(mktemp -d)
fixture=
cleanup() {
  if [ -n "$fixture" ]; then kill "$fixture" 2>/dev/null || true; fi
  if [ -n "${KEEP:-}" ]; then echo "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

mod=$(go -C "$src" list -m)
go -C "$here/callcount" build -o "$work/callcount" .
go -C "$src" build -cover -covermode=count -coverpkg="$mod/..." -o "$work/brk" ./cmd/brk
# The fixture is a plain build: faster, so more responses dilute the constant.
go -C "$src" build -o "$work/fixture" ./cmd/brk

taskset -c 0 "$work/fixture" fixture --listen 127.0.0.1:0 >"$work/fixture.out" 2>&1 &
fixture=$!
for _ in $(seq 50); do grep -q 'http://' "$work/fixture.out" && break; sleep 0.1; done
url=$(grep -o 'http://[0-9.:]*' "$work/fixture.out")/plain

printf '%-8s %5s %9s %27s %14s\n' protocol depth responses "sched→other calls/response" files/response
for round in $(seq "$rounds"); do
  for proto in http/1.1 h2c; do
    for depth in 1 8; do
      run=$work/$round-${proto%/*}-$depth
      mkdir -p "$run/cover"
      flags=()
      [ "$proto" = h2c ] && flags=(--http2)
      GOCOVERDIR=$run/cover timeout $((secs + 30)) taskset -c 1 "$work/brk" req "$url" "${flags[@]}" \
        -d "${secs}s" -c "$conns" --start "$depth" --threads 1 --quiet --json "$run/report.json" >"$run/out" 2>&1 || true  # a rejected phase exits non-zero
      go tool covdata textfmt -i "$run/cover" -o "$run/profile.txt"
      responses=$(python3 -c 'import json,sys; print(sum(p["counts"]["succeeded"] for p in json.load(open(sys.argv[1]))["phases"]))' "$run/report.json")
      "$work/callcount" -src "$src" -engine "$engine" -profile "$run/profile.txt" -responses "$responses" -top "$top" >"$run/calls"
      read -r calls files <"$run/calls"
      printf '%-8s %5s %9s %27s %14s\n' "$proto" "$depth" "$responses" "$calls" "$files"
    done
  done
done

# The call sites and files of the last round.
for proto in http/1.1 h2c; do
  for depth in 1 8; do
    echo
    echo "== $proto depth $depth (round $rounds)"
    tail -n +2 "$work/$rounds-${proto%/*}-$depth/calls"
  done
done
