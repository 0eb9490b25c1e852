#!/bin/sh
# A netns-backend run leaves the host as it found it, and works wherever its caller could write:
#   - the host's /dev/shm gains no entry during the run, as the calling user and (started as
#     root) as nobody: the driver's counters file (/dev/shm/mongoc-<pid>) is kept out by the
#     harness itself (MONGOC_DISABLE_SHM, unset here so the harness must set it), and what runs in
#     the sandbox writes to its private /dev/shm. Entries already there (other processes' leftovers,
#     whose pids may equal the harness's: pids wrap) are not the run's and are not judged;
#   - the same when the harness is SIGKILLed mid-run;
#   - as root: --out naming a directory of another owner (65534, mode 0755) gives a valid run
#     (root keeps its power over files of every owner inside its sandbox);
#   - as root: a host namespace named like a dead run's (ll-<dead pid>-w1) is left in place,
#     while that dead run's /tmp/ll-<dead pid>-* directory is swept.
#   host_untouched.sh BIN_DIR SCENARIO
# Not covered: owners other than 65534. A driver file of a process still alive when the run has
# ended (mongoc-<live pid>) is another program's: every process of the run is gone by then (the
# harness has exited or was killed, and what it started ran in its sandbox's own /dev/shm); other
# entries that other programs make while this runs would count as the run's (ctest runs this
# test alone: RUN_SERIAL; a second suite on the same machine is not alone).
# The root part runs in a mount namespace of its own with a private /run/netns: other programs
# on a shared machine sweep dead runs' namespaces from the host's, which would hide what this run
# did. The run sees that /run/netns as its host's.
set -u
unset MONGOC_DISABLE_SHM
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
# added NAME: the entries /dev/shm gained between NAME's two listings, less the driver files of
# processes alive now (not the run's: see the header).
added() {
  comm -13 "$work/$1.shm-before" "$work/$1.shm-after" | while read -r entry; do
    case "$entry" in
      mongoc-*) [ -d "/proc/${entry#mongoc-}" ] && continue ;;
    esac
    printf '%s ' "$entry"
  done
}
# run NAME [setpriv...]: runs the scenario with --out $work/NAME/run, checks exit 0 and that
# /dev/shm gained nothing.
run() {
  name=$1
  shift
  ls -A /dev/shm | sort >"$work/$name.shm-before"
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
  ls -A /dev/shm | sort >"$work/$name.shm-after"
  added=$(added "$name")
  [ -n "$added" ] && fail "$name (pid $harness): left in the host's /dev/shm: $added"
  grep -q "Falling back to malloc for counters" "$work/$name.log" &&
    fail "$name: the driver tried /dev/shm (MONGOC_DISABLE_SHM not set by the harness)"
  echo "ok: $name (pid $harness): valid run, nothing added to /dev/shm"
}
# killed NAME [setpriv...]: starts the scenario, SIGKILLs the harness once its history exists,
# and checks that /dev/shm gained nothing (a killed process cannot remove what it made).
killed() {
  name=$1
  shift
  ls -A /dev/shm | sort >"$work/$name.shm-before"
  "$@" "$bin/locklab" run "$scenario" --seed 1 --out "$work/$name/run" \
    >"$work/$name.log" 2>&1 &
  harness=$!
  tries=0
  until [ -s "$work/$name/run/history.jsonl" ]; do
    tries=$((tries + 1))
    [ "$tries" -le 600 ] || fail "$name: no history after 60 s"
    kill -0 "$harness" 2>/dev/null || fail "$name: the harness ended before its history began"
    sleep 0.1
  done
  kill -KILL "$harness"
  wait "$harness"
  ls -A /dev/shm | sort >"$work/$name.shm-after"
  added=$(added "$name")
  [ -n "$added" ] && fail "$name (pid $harness, SIGKILLed): left in the host's /dev/shm: $added"
  echo "ok: $name (pid $harness): SIGKILLed mid-run, nothing added to /dev/shm"
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
  mkdir "$work/nobody-killed" && chown 65534:65534 "$work/nobody-killed"
  killed nobody-killed setpriv --reuid=65534 --regid=65534 --clear-groups --
else
  mkdir "$work/self" "$work/self-killed"
  run self
  killed self-killed
fi
echo "PASS: nothing of the run left on the host"
