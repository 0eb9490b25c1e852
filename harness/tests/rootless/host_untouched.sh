#!/bin/sh
# A netns-backend run leaves the host as it found it, and works wherever its caller could write:
#   - no /dev/shm/mongoc-<harness pid> remains after the run (the driver makes it before the
#     sandbox exists; the harness must remove it from the host's /dev/shm when it exits), as the
#     calling user and (started as root) as nobody;
#   - as root: --out naming a directory of another owner (65534, mode 0755) gives a valid run
#     (root keeps its power over files of every owner inside its sandbox);
#   - as root: a host namespace named like a dead run's (ll-<dead pid>-w1) is left in place,
#     while that dead run's /tmp/ll-<dead pid>-* directory is swept.
#   host_untouched.sh BIN_DIR SCENARIO
# Not covered: other shared-memory users than the driver; owners other than 65534.
# The root part runs in a mount namespace of its own with a private /run/netns: other programs
# on a shared machine sweep dead runs' namespaces from the host's, which would hide what this run
# did. The run sees that /run/netns as its host's.
set -u
bin=$1 scenario=$2
if [ "$(id -u)" = 0 ] && [ -z "${LOCKLAB_PRIVATE_NETNS_DIR:-}" ]; then
  export LOCKLAB_PRIVATE_NETNS_DIR=1
  exec unshare -m --propagation private -- sh -c \
    'mkdir -p /run/netns && mount -t tmpfs locklab-test /run/netns && exec sh "$0" "$@"' \
    "$0" "$@"
fi
work=$(mktemp -d /tmp/locklab-host.XXXXXX)
dead_ns=""
cleanup() {
  [ -n "$dead_ns" ] && ip netns delete "$dead_ns" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
chmod 0755 "$work"
cp "$scenario" "$work/scenario.toml" && chmod 0644 "$work/scenario.toml"
scenario=$work/scenario.toml
fail() {
  echo "FAIL: $*"
  exit 1
}
# run NAME [setpriv...]: runs the scenario with --out $work/NAME/run, checks exit 0 and /dev/shm.
run() {
  name=$1
  shift
  "$@" "$bin/locklab" run "$scenario" --seed 1 --out "$work/$name/run" \
    >"$work/$name.log" 2>&1 &
  harness=$!
  wait "$harness"
  status=$?
  cat "$work/$name.log"
  if grep -q "needs a user namespace" "$work/$name.log"; then
    echo "SKIP: this kernel refuses the sandbox (see above)"
    exit 77
  fi
  [ "$status" = 0 ] || fail "$name: locklab exited $status"
  grep -q '"backend":"netns"' "$work/$name/run/history.jsonl" 2>/dev/null ||
    fail "$name: the run did not use the netns backend"
  [ -e "/dev/shm/mongoc-$harness" ] && fail "$name: /dev/shm/mongoc-$harness left on the host"
  echo "ok: $name (pid $harness): valid run, no /dev/shm/mongoc-$harness"
}
if [ "$(id -u)" = 0 ]; then
  sh -c 'exit 0' &
  dead=$!
  wait "$dead"
  dead_ns="ll-$dead-w1"
  ip netns add "$dead_ns" || fail "cannot add $dead_ns"
  mkdir "/tmp/ll-$dead-x"
  mkdir -p "$work/root/run" && chown 65534:65534 "$work/root/run" && chmod 0755 "$work/root/run"
  run root
  ip netns list | grep -q "^$dead_ns\b" || fail "the run deleted the host namespace $dead_ns"
  [ -e "/tmp/ll-$dead-x" ] && fail "the run did not sweep /tmp/ll-$dead-x"
  echo "ok: host namespace $dead_ns kept, /tmp/ll-$dead-x swept"
  mkdir "$work/nobody" && chown 65534:65534 "$work/nobody"
  run nobody setpriv --reuid=65534 --regid=65534 --clear-groups --
else
  mkdir "$work/self"
  run self
fi
echo "PASS: nothing of the run left on the host"
