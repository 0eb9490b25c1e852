#!/usr/bin/env bash
# Runs a scenario (loopback backend, so the member is reachable from here) while reap-watch
# polls its member's lock documents, and reports how many were reaped (TTL) and recreated inside
# the run, and whether a recreated document's token was lower than before its reap. Shows that
# a reap scenario's verdict comes from runs where reaps really happened.
#
# usage: results/lock-holes/watch-reaps.sh SCENARIO SEED OUT_DIR [BIN_DIR]
#   BIN_DIR holds locklab (and the mongosim and locklab-worker it starts); default this
#   checkout's build/bin. Writes OUT_DIR/run (the run), OUT_DIR/reaps.txt (the watcher's lines).
# Exit status: locklab's.
set -euo pipefail

[[ $# -ge 3 ]] || { echo "usage: $0 SCENARIO SEED OUT_DIR [BIN_DIR]" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
scenario=$1 seed=$2 out=$3
bin=${4:-$here/../../build/bin}
mkdir -p "$out"
rm -rf "$out/run"
g++ -std=c++20 -O1 -Wall -Wextra -Wpedantic -Wshadow -Werror "$here/reap_watch.cpp" \
  $(pkg-config --cflags --libs libmongoc-1.0) -o "$out/reap-watch"

"$bin/locklab" run "$scenario" --seed "$seed" --out "$out/run" --cluster loopback \
  >"$out/locklab.txt" 2>&1 &
run_pid=$!
log=$out/run/members/m0.log
for _ in $(seq 1 600); do  # up to 60 s for the member to listen
  [[ -f "$log" ]] && grep -q '"id":23016' "$log" && break
  kill -0 "$run_pid" 2>/dev/null || break
  sleep 0.1
done
listen=$(grep -m1 '"id":23016' "$log" 2>/dev/null || true)
if [[ -z "$listen" ]]; then
  wait "$run_pid" || true
  echo "watch-reaps.sh: the member never listened; locklab said:" >&2
  tail -5 "$out/locklab.txt" >&2
  exit 2
fi
port=$(sed -E 's/.*"port" : ([0-9]+).*/\1/' <<<"$listen")
ip=$(sed -E 's/.*"bindIp" : \[ "([^"]+)".*/\1/' <<<"$listen")
"$out/reap-watch" "mongodb://$ip:$port/?directConnection=true" >"$out/reaps.txt" || true
status=0
wait "$run_pid" || status=$?
grep -E '^# locklab verdict|tokens.monotonic' "$out/locklab.txt" || true
tail -n 1 "$out/reaps.txt"
exit $status
