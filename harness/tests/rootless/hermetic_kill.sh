#!/bin/sh
# A run SIGKILLed while a member partition is in force leaves the host's network exactly as it
# was: `ip link`, `ip netns list` and `nft list ruleset` are byte-identical before, during (just
# before the kill) and after, and no process or /tmp directory of the run remains.
#   hermetic_kill.sh BIN_DIR SCENARIO FAULT [nobody]
# FAULT is the window that must be open (its nft table present inside the run's sandbox) when
# the harness is killed. With "nobody" (started as root) the run is made by nobody via setpriv.
# Not covered: a kill before the sandbox exists (nothing of the network is built by then).
set -u
bin=$1 scenario=$2 fault=$3 who=${4:-self}
work=$(mktemp -d /tmp/locklab-hermetic.XXXXXX)
trap 'rm -rf "$work"' EXIT
as_user=""
if [ "$who" = nobody ]; then
  [ "$(id -u)" = 0 ] || { echo "SKIP: running as nobody needs root to switch"; exit 77; }
  chown 65534:65534 "$work"
  as_user="setpriv --reuid=65534 --regid=65534 --clear-groups --"
fi
# Host state, byte for byte, except the named namespaces of *other* runs on a shared machine
# (ll-<their pid>-...: an older locklab, or a test that builds namespaces on the host). The
# run's own names (ll-<harness pid>-...) are kept, as is everything else.
snapshot() {
  { ip link; echo "--"; ip netns list | grep -v "^ll-[0-9]" ; ip netns list | grep "^ll-$harness-"
    echo "--"; nft list ruleset 2>&1; } >"$1"
}
fail() {
  echo "FAIL: $*"
  exit 1
}
# The run is started held (SIGSTOP before exec) so the snapshot before can know its pid.
sh -c 'kill -STOP $$; exec "$@"' sh $as_user "$bin/locklab" run "$scenario" --seed 7 \
  --out "$work/run" >"$work/locklab.log" 2>&1 &
harness=$!
tries=0
until [ "$(ps -o stat= -p "$harness" | cut -c1)" = T ] || [ $tries -ge 100 ]; do
  tries=$((tries + 1))
  sleep 0.05
done
snapshot "$work/before"
kill -CONT "$harness"
# Mid-partition: the fault window has opened and its table exists inside the sandbox.
# Inside means the namespaces of the run's PID 1 (the harness's child in another PID namespace):
# its mount namespace holds the run's /run.
init_pid() {
  for child in $(pgrep -P "$harness"); do
    if [ "$(readlink /proc/"$child"/ns/pid)" != "$(readlink /proc/"$harness"/ns/pid)" ]; then
      echo "$child"
      return
    fi
  done
}
inside() {
  init=$(init_pid)
  [ -n "$init" ] || return 1
  nsenter -t "$init" -U -m -n "$@" 2>/dev/null || nsenter -t "$init" -m -n "$@" 2>/dev/null
}
found=""
tries=0
while [ -z "$found" ] && [ $tries -lt 600 ]; do
  tries=$((tries + 1))
  if ! kill -0 "$harness" 2>/dev/null; then
    cat "$work/locklab.log"
    # As run_as_user.sh: a kernel that refuses the sandbox (and says why) is a skip.
    if grep -q "needs a user namespace" "$work/locklab.log"; then
      echo "SKIP: the sandbox is refused to this user (see above)"
      exit 77
    fi
    fail "locklab ended early"
  fi
  if grep -q "\"f\":\"$fault\"" "$work/run/history.jsonl" 2>/dev/null; then
    for ns in $(inside ip netns list | cut -d' ' -f1); do
      if inside ip netns exec "$ns" nft list tables 2>/dev/null | grep -q -- "-part"; then
        found=$ns
      fi
    done
  fi
  [ -n "$found" ] || sleep 0.1
done
[ -n "$found" ] || { cat "$work/locklab.log"; fail "no $fault table seen inside the run"; }
# Mid-run, nothing of the run is on the host either.
snapshot "$work/during"
if ! cmp -s "$work/before" "$work/during"; then
  diff "$work/before" "$work/during"
  kill -KILL "$harness"
  fail "the run changed the host's network state while running"
fi
echo "partition table in force in $found; SIGKILL to locklab (pid $harness)"
prefix="ll-$harness"
kill -KILL "$harness"
wait "$harness"
# The kernel tears the sandbox down asynchronously: wait (bounded) for the last process.
tries=0
while pgrep -f "$work/run" >/dev/null && [ $tries -lt 200 ]; do
  tries=$((tries + 1))
  sleep 0.1
done
pgrep -af "$work/run" && fail "processes of the run remain"
tries=0
while ls -d /tmp/"$prefix"-* >/dev/null 2>&1 && [ $tries -lt 200 ]; do
  tries=$((tries + 1))
  sleep 0.1
done
ls -d /tmp/"$prefix"-* 2>/dev/null && fail "the run's temporary directory remains"
snapshot "$work/after"
if ! cmp -s "$work/before" "$work/after"; then
  diff "$work/before" "$work/after"
  fail "host network state changed"
fi
echo "PASS: host links, namespaces and nft ruleset identical; nothing of the run remains"
