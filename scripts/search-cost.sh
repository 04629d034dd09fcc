#!/usr/bin/env bash
# The search's cost on a quiet machine, two builds side by side:
#   scripts/search-cost.sh NEW_BRK OLD_BRK [ROUNDS]
# alternating on the capacity fixture (4 in service, 10 ms each; 8
# connections, 1 s phases, 100 ms timeout: the break is 32/33), the
# fixture on CPU 0 and brk on CPU 1. Each run prints its phases, its
# phase-seconds, its cool-downs, its wall time and its pair.
set -u
new=${1:?the new brk binary}; old=${2:?the old brk binary}; rounds=${3:-3}
tmp=$(mktemp -d)
taskset -c 0 $new fixture --listen 127.0.0.1:0 --capacity 4 --service 10ms > "$tmp/fx.out" 2>&1 &
fx=$!
sleep 1
url="$(sed -n 's/^listening on //p' "$tmp/fx.out")/plain"
for r in $(seq 1 $rounds); do
  for b in old new; do
    bin=$old; [ $b = new ] && bin=$new
    s=$(date +%s.%N)
    taskset -c 1 timeout 300 $bin "$url" --conn 8 --phase 1s --timeout 100ms --threads 1 --quiet --json "$tmp/$b-$r.json" >/dev/null 2>&1
    code=$?
    e=$(date +%s.%N)
    python3 - "$b" "$r" "$code" "$s" "$e" "$tmp/$b-$r.json" <<'PY'
import json,sys
b,r,code,s,e,f=sys.argv[1:]
j=json.load(open(f))
ph=sum(p['duration_s'] for p in j['phases'])
cd=sum(c['waited_ns'] for c in j.get('cool_downs',[]))/1e9
fp=j.get('final_pair') or {}
iv=fp.get('interval')
print(f"{b} round {r}: exit {code}, {len(j['phases'])} phases, phase-seconds {ph:.2f}, cool-downs {cd:.3f} s, wall {float(e)-float(s):.1f} s, held {j.get('last_accepted')} broke {j.get('first_rejected')}, interval {iv}")
PY
  done
done
kill $fx
