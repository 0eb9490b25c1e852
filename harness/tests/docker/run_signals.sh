#!/bin/sh
# `locklab run --cluster docker` interrupted twice while its set is up: once by Ctrl-C (SIGINT:
# the run tears down) and once by SIGKILL (nothing runs; the next run's sweep cleans). After
# each, nothing of the run may remain: no container or network labelled with its owner, no
# daemon it started (root /tmp/locklab-dockerd-<pid>.*), and no host bridge more than before.
#   run_signals.sh BIN_DIR SCENARIO
# Exit 77 (skipped) when Docker cannot run here. The "next run" after the SIGKILL is a run with
# an image that does not exist: it sweeps, then fails at once (no registry to pull from).
# Not covered: a signal during the image build or the daemon's start (the set must be up).
set -u
bin=$1 scenario=$2
work=$(mktemp -d /tmp/locklab-signals.XXXXXX)
trap 'rm -rf "$work"' EXIT
bridges() { ip -o link show type bridge | grep -c ' br-' || true; }
before=$(bridges)
fail=0

# Starts a run in the background and waits (bounded) until its workers write the history.
start_run() {
  "$bin/locklab" run "$scenario" --seed 1 --cluster docker --out "$work/$1" \
    >"$work/$1.log" 2>&1 &
  pid=$!
  i=0
  while [ $i -lt 1200 ]; do
    if grep -q "Docker cannot run here" "$work/$1.log"; then
      cat "$work/$1.log"; echo "SKIP: Docker cannot run here"; exit 77
    fi
    grep -q '"type":"invoke"' "$work/$1/history.jsonl" 2>/dev/null && return 0
    kill -0 $pid 2>/dev/null || { cat "$work/$1.log"; echo "FAIL: the run ended early"; exit 1; }
    sleep 0.1
    i=$((i + 1))
  done
  echo "FAIL: the run did not start its workers within 120 s"; cat "$work/$1.log"; exit 1
}

# Nothing of the run with harness pid $1 remains.
check_clean() {
  what=$1 owner=$2
  for root in /tmp/locklab-dockerd-"$owner".*; do
    [ -e "$root" ] && { echo "FAIL ($what): daemon root $root remains"; fail=1; }
  done
  if [ -S /var/run/docker.sock ] || [ -n "${DOCKER_HOST:-}" ]; then
    left=$(docker ps -aq --filter "label=locklab.owner" --format '{{.Label "locklab.owner"}}' |
      grep -c "^$owner\." || true)
    [ "$left" = 0 ] || { echo "FAIL ($what): $left containers of the run remain"; fail=1; }
  fi
  if pgrep -f "/tmp/locklab-dockerd-$owner\." >/dev/null; then
    echo "FAIL ($what): a daemon of the run still runs"; fail=1
  fi
  [ "$(bridges)" = "$before" ] || { echo "FAIL ($what): host bridges $before -> $(bridges)"; fail=1; }
}

start_run interrupted
kill -INT $pid
wait $pid
echo "after SIGINT: exit $?"
check_clean SIGINT $pid

start_run killed
kill -KILL $pid
wait $pid
# Until a sweep runs, the killed run's objects remain (what the sweep is for).
owner_left=0
ls -d /tmp/locklab-dockerd-"$pid".* >/dev/null 2>&1 && owner_left=1
if [ -S /var/run/docker.sock ] || [ -n "${DOCKER_HOST:-}" ]; then
  docker ps -aq --filter "label=locklab.owner" --format '{{.Label "locklab.owner"}}' |
    grep -q "^$pid\." && owner_left=1
fi
[ $owner_left = 1 ] || { echo "FAIL: nothing of the SIGKILLed run was found before the sweep"; fail=1; }
"$bin/locklab" run "$scenario" --seed 1 --cluster docker --image locklab/absent:0 \
  --out "$work/next" >"$work/next.log" 2>&1
echo "the next run (sweeps, then fails on the absent image): exit $?"
check_clean SIGKILL $pid
[ $fail = 0 ] && echo "nothing left after SIGINT and SIGKILL"
exit $fail
