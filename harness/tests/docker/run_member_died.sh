#!/bin/sh
# A `locklab run --cluster docker` whose member m1 is killed from outside the harness
# (`docker kill` on its container while the workers run) must fail as a member process that dies
# on the other backends does: exit 2, "member m1 ended (signal 9 ...)" on stderr, and
# member-died.txt in the run directory for the explorer. Nothing of the run may remain after.
#   run_member_died.sh BIN_DIR SCENARIO
# Exit 77 (skipped) when Docker cannot run here.
# Not covered: a member whose program crashes by itself (the same die event, another exit code),
# a kill that races the harness's own kill of the same member.
set -u
bin=$1 scenario=$2
work=$(mktemp -d /tmp/locklab-died.XXXXXX)
trap 'rm -rf "$work"' EXIT
. "$(dirname "$0")/common.sh"
before=$(bridges)
fail=0

start_run died workers
docker=$(command -v /usr/bin/docker || command -v docker)
host=$(daemon_of $pid)
# The run's containers are named locklab-<pid>.<start>-<n>-<role>.
m1=$($docker $host ps --format '{{.Names}}' | grep "^locklab-$pid\.[0-9]*-[0-9]*-m1$" | head -n 1)
[ -n "$m1" ] || { echo "FAIL: no m1 container of run $pid"; $docker $host ps; exit 1; }
$docker $host kill "$m1" >/dev/null
status=0
wait $pid || status=$?
echo "the run with $m1 killed from outside: exit $status"
tail -n 5 "$work/died.log"
[ "$status" = 2 ] || { echo "FAIL: expected exit 2 (run failed), got $status"; fail=1; }
grep -q "member m1 ended (signal 9" "$work/died.log" ||
  { echo "FAIL: the run did not say that member m1 ended"; fail=1; }
grep -q "^member m1 ended (signal 9" "$work/died/member-died.txt" 2>/dev/null ||
  { echo "FAIL: no member-died.txt naming m1"; fail=1; }
check_clean "member killed" $pid
[ $fail = 0 ] && echo "the member killed from outside failed the run"
exit $fail
