#!/bin/sh
# `locklab run --cluster docker` interrupted three times: by Ctrl-C (SIGINT) while it builds its
# image or makes its containers (it stops there), by Ctrl-C while its set is up (the run tears
# down), and by SIGKILL (nothing runs; the next run's sweep cleans). After each, nothing of the
# run may remain: no container or network labelled with its owner, no
# daemon it started (root /tmp/locklab-dockerd-<pid>.*), and not the host bridge of its network
# (members/docker-network.txt names it; other suites' bridges are theirs).
#   run_signals.sh BIN_DIR SCENARIO
# Exit 77 (skipped) when Docker cannot run here. The "next run" after the SIGKILL is a run with
# an image that does not exist: it sweeps, then fails at once (no registry to pull from).
# Not covered: a signal during the daemon's start (under a second), or between the build and the
# first container (the run checks for a signal between steps, but no test lands one there).
set -u
bin=$1 scenario=$2
work=$(mktemp -d /tmp/locklab-signals.XXXXXX)
trap 'rm -rf "$work"' EXIT
. "$(dirname "$0")/common.sh"
fail=0

# Ctrl-C while the image is built or the containers are made: the run stops there (the docker
# command under way is killed), rather than once every container exists, and cleans up.
start_run building building
kill -INT $pid
wait $pid
echo "after SIGINT while building: exit $?"
grep "run failed" "$work/building.log"
grep -Eq "interrupted while (building the image|creating the containers)" "$work/building.log" ||
  { echo "FAIL: the run was not interrupted while building or creating containers"; fail=1; }
check_clean "SIGINT while building" $pid "$work/building"

start_run interrupted workers
kill -INT $pid
wait $pid
echo "after SIGINT: exit $?"
check_clean SIGINT $pid "$work/interrupted" had-network

start_run killed workers
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
# Its bridge too: what check_clean looks for after the sweep is there before it.
killed_bridges=$(run_bridges "$work/killed")
[ -n "$killed_bridges" ] || { echo "FAIL: the SIGKILLed run recorded no bridge"; fail=1; }
for bridge in $killed_bridges; do
  ip link show "$bridge" >/dev/null 2>&1 ||
    { echo "FAIL: the SIGKILLed run's bridge $bridge is gone before the sweep"; fail=1; }
done
"$bin/locklab" run "$scenario" --seed 1 --cluster docker --image locklab/absent:0 \
  --image-kind mongosim \
  --out "$work/next" >"$work/next.log" 2>&1
echo "the next run (sweeps, then fails on the absent image): exit $?"
check_clean SIGKILL $pid "$work/killed" had-network
[ $fail = 0 ] && echo "nothing left after SIGINT and SIGKILL"
exit $fail
