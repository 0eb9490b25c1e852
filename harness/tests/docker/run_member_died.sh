#!/bin/sh
# A `locklab run --cluster docker` whose member m1 is killed from outside the harness
# (`docker kill` on its container while the workers run) must fail as a member process that dies
# on the other backends does: exit 2, "member m1 ended (signal 9 ...)" on stderr, and
# member-died.txt in the run directory for the explorer. Nothing of the run may remain after.
# With ROLE w1: the container holding worker w1's network is killed instead; the worker lost its
# network, a fault the history does not show, so the run must fail naming it (exit 2).
#   run_member_died.sh BIN_DIR SCENARIO [m1|w1]
# Exit 77 (skipped) when Docker cannot run here.
# Not covered: a member whose program crashes by itself (the same die event, another exit code),
# a kill that races the harness's own kill of the same member.
set -u
bin=$1 scenario=$2 role=${3:-m1}
work=$(mktemp -d /tmp/locklab-died.XXXXXX)
trap 'rm -rf "$work"' EXIT
. "$(dirname "$0")/common.sh"
fail=0

start_run died workers
docker=$(command -v /usr/bin/docker || command -v docker)
host=$(daemon_of $pid)
# The run's containers are named locklab-<pid>.<start>-<n>-<role>.
name=$($docker $host ps --format '{{.Names}}' | grep "^locklab-$pid\.[0-9]*-[0-9]*-$role$" | head -n 1)
[ -n "$name" ] || { echo "FAIL: no $role container of run $pid"; $docker $host ps; exit 1; }
$docker $host kill "$name" >/dev/null
status=0
wait $pid || status=$?
echo "the run with $name killed from outside: exit $status"
tail -n 5 "$work/died.log"
[ "$status" = 2 ] || { echo "FAIL: expected exit 2 (run failed), got $status"; fail=1; }
if [ "$role" = m1 ]; then
  grep -q "member m1 ended (signal 9" "$work/died.log" ||
    { echo "FAIL: the run did not say that member m1 ended"; fail=1; }
  grep -q "^member m1 ended (signal 9" "$work/died/member-died.txt" 2>/dev/null ||
    { echo "FAIL: no member-died.txt naming m1"; fail=1; }
else
  grep -q "the host container of worker $role ended (signal 9" "$work/died.log" ||
    { echo "FAIL: the run did not say that the host of worker $role ended"; fail=1; }
fi
check_clean "member killed" $pid "$work/died" had-network
[ $fail = 0 ] && echo "the $role container killed from outside failed the run"
exit $fail
