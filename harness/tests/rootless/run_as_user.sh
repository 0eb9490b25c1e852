#!/bin/sh
# A scenario run by an ordinary user: `locklab run SCENARIO --expectation-gate` as nobody (when
# started as root, through setpriv, with a fresh directory only nobody can write) or as the
# calling user (when not root). Passes when the expectation is met and every file of the run
# directory belongs to the user who ran it (never to an id mapped inside the run's sandbox).
#   run_as_user.sh BIN_DIR SCENARIO SEED
# Exit 77 (skipped) only when the kernel refuses the sandbox and says why (a sysctl or policy).
# Not covered: users other than nobody, and a run directory on a file system without ownership.
set -eu
bin=$1 scenario=$2 seed=$3
work=$(mktemp -d /tmp/locklab-rootless.XXXXXX)
trap 'rm -rf "$work"' EXIT
if [ "$(id -u)" = 0 ]; then
  uid=65534
  chown "$uid:$uid" "$work"
  cp "$scenario" "$work/"
  chown "$uid:$uid" "$work/$(basename "$scenario")"
  as_user="setpriv --reuid=$uid --regid=$uid --clear-groups --"
else
  uid=$(id -u)
  cp "$scenario" "$work/"
  as_user=""
fi
status=0
# The run's own checks print the verdict; the output goes to the test log.
$as_user "$bin/locklab" run "$work/$(basename "$scenario")" --seed "$seed" --expectation-gate \
  --out "$work/run" >"$work/locklab.log" 2>&1 || status=$?
cat "$work/locklab.log"
if grep -q "needs a user namespace" "$work/locklab.log"; then
  echo "SKIP: this kernel refuses the sandbox to an ordinary user (see above)"
  exit 77
fi
if ! grep -q '"backend":"netns"' "$work/run/history.jsonl" 2>/dev/null; then
  echo "FAIL: the run did not use the netns backend"
  exit 1
fi
if [ "$status" != 0 ]; then
  echo "FAIL: locklab exited $status"
  exit 1
fi
foreign=$(find "$work/run" ! -uid "$uid" -print)
if [ -n "$foreign" ]; then
  echo "FAIL: files of the run not owned by uid $uid:"
  ls -ln $foreign
  exit 1
fi
echo "PASS: valid run as uid $uid, every file of the run directory owned by it"
