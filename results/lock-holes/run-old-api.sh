#!/usr/bin/env bash
# Runs the experiments of results/lock-holes/old-api/ (issue 16 items 1, 2, 4 and 5, written
# against the API b9676d2's mongolock already had) against two libraries: b9676d2's ("before")
# and this checkout's ("now", the control), both on this checkout's mongosim. Each test runs in
# a process of its own (one that aborts would take the others down) and is reported as
#   pass | FAIL (the first failed assertion's message) | ABORT (the signal, the last stderr line)
# Built with AddressSanitizer and UBSan by default (SANITIZE= to turn off), so a use after free
# is reported where it happens instead of corrupting the heap silently.
#
# usage: results/lock-holes/run-old-api.sh [OLD_TREE] [OUT_DIR]
#   OLD_TREE  a checkout of b9676d2 (made with `git worktree add --detach` if missing; default
#             $OUT_DIR/b9676d2)
#   OUT_DIR   build directories and logs (default /tmp/lock-holes-old-api)
# env: MONGOSIM (default build/bin/mongosim of this checkout), JOBS (default 2),
#      SANITIZE (default address,undefined), TEST_TIMEOUT_S (default 120)
# Exit status 0 iff every experiment fails (FAIL or ABORT) on b9676d2 and passes now.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=${2:-/tmp/lock-holes-old-api}
old_tree=${1:-$out/b9676d2}
mongosim=${MONGOSIM:-$repo/build/bin/mongosim}
jobs=${JOBS:-2}
sanitize=${SANITIZE-address,undefined}
timeout_s=${TEST_TIMEOUT_S:-120}
old_commit=b9676d2

[[ -x "$mongosim" ]] || { echo "run-old-api.sh: MONGOSIM=$mongosim is not an executable (build mongosim first)" >&2; exit 2; }
mkdir -p "$out"
if [[ ! -e "$old_tree/lib/src/lease.h" ]]; then
  git -C "$repo" worktree add --detach "$old_tree" "$old_commit" >/dev/null
fi
actual=$(git -C "$old_tree" rev-parse --short=7 HEAD)
[[ "$actual" == "$old_commit" ]] || { echo "run-old-api.sh: $old_tree is at $actual, not $old_commit" >&2; exit 2; }

flags=()
[[ -n "$sanitize" ]] && flags=(-DCMAKE_CXX_FLAGS="-fsanitize=$sanitize -fno-omit-frame-pointer"
                              -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=$sanitize")

# build NAME LIB_TREE IS_CURRENT: configures and builds $out/build-NAME/old_api_tests.
build() {
  cmake -S "$here/old-api" -B "$out/build-$1" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DLIB_TREE="$2" -DLIB_IS_CURRENT="$3" -DMONGOSIM="$mongosim" "${flags[@]}" >/dev/null
  cmake --build "$out/build-$1" -j "$jobs" >/dev/null
}

# run NAME TEST: runs one test alone; prints its verdict; logs to $out/NAME-TEST.log.
run() {
  local log="$out/$1-${2//\//_}.log" rc=0
  ASAN_OPTIONS=detect_leaks=0 timeout "$timeout_s" "$out/build-$1/old_api_tests" \
    --gtest_filter="$2" >"$log" 2>&1 || rc=$?
  if [[ $rc -eq 0 ]] && grep -q '^\[  PASSED  \] 1 test' "$log"; then
    echo "pass"
  elif [[ $rc -eq 1 ]] && grep -q '^\[  FAILED  \]' "$log"; then
    # The first failed assertion: its lines up to the next file:line or gtest line.
    echo "FAIL: $(awk 'on && /^(\/|\[)/ {exit} /Failure$/ {on = 1; next} on' "$log" |
      tr -s ' \n' ' ')"
  else
    echo "ABORT (exit $rc): $(grep -m1 -E 'ERROR: AddressSanitizer|terminate called|runtime error|Aborted' "$log" || tail -n 1 "$log")"
  fi
}

build old "$old_tree" OFF
build now "$repo" ON
tests=$("$out/build-now/old_api_tests" --gtest_list_tests |
  awk '/^[^ ]/ {suite=$1} /^  / {print suite $1}')

status=0
for t in $tests; do
  before=$(run old "$t")
  now=$(run now "$t")
  printf '%s\n  b9676d2: %s\n  now:     %s\n' "$t" "$before" "$now"
  [[ "$before" != pass && "$now" == pass ]] || status=1
done
echo "logs: $out/{old,now}-TEST.log"
exit $status
