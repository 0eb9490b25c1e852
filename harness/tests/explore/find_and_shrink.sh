#!/bin/sh
# An exploration of a known-unsafe configuration must find a violation, shrink it, and leave a
# repro that parses and reproduces under `locklab run`.
#   find_and_shrink.sh BIN_DIR OUT_DIR [explore arguments...]
# Passes when: explore exits 1 (a finding); a repros/*.toml exists; `locklab run REPRO --seed
# SEED --expectation-gate` exits 0 (the expected violation happened) in one of 5 runs (the
# violation depends on timing; the repro's comment says how often it failed in confirmation).
# With MAX_FAULTS / MAX_WORKERS set (ctest ENVIRONMENT), the repro must also be at most that
# size: a finding that needs no fault must shrink to none. With MAX_CASES set, the exploration
# (run with --first-finding) must have stopped after at most that many cases.
set -u
bin=$1
out=$2
shift 2
rm -rf "$out"
"$bin/locklab" explore --out "$out" "$@"
code=$?
if [ "$code" -ne 1 ]; then
  echo "find_and_shrink: explore exited $code, expected 1 (a finding)"
  exit 1
fi
repro=$(ls "$out"/repros/*.toml 2>/dev/null | head -n 1)
if [ -z "$repro" ]; then
  echo "find_and_shrink: no repro in $out/repros"
  exit 1
fi
echo "find_and_shrink: repro $repro"
cat "$repro"
faults=$(grep -c '^ *\[\[nemesis.fault\]\]' "$repro")
workers=$(sed -n 's/^ *workers = \([0-9]*\)$/\1/p' "$repro")
if [ -n "${MAX_FAULTS:-}" ] && [ "$faults" -gt "$MAX_FAULTS" ]; then
  echo "find_and_shrink: the repro has $faults faults, more than $MAX_FAULTS"
  exit 1
fi
if [ -n "${MAX_WORKERS:-}" ] && [ "${workers:-0}" -gt "$MAX_WORKERS" ]; then
  echo "find_and_shrink: the repro has $workers workers, more than $MAX_WORKERS"
  exit 1
fi
cases=$(sed -n 's/^  "cases": \([0-9]*\),*$/\1/p' "$out/summary.json")
if [ -n "${MAX_CASES:-}" ] && [ "${cases:-999999}" -gt "$MAX_CASES" ]; then
  echo "find_and_shrink: the exploration ran ${cases:-?} cases, more than $MAX_CASES"
  exit 1
fi
seed=$(sed -n 's/^# Rerun: locklab run .* --seed \([0-9]*\)$/\1/p' "$repro")
if [ -z "$seed" ]; then
  echo "find_and_shrink: the repro's comment names no seed"
  exit 1
fi
for attempt in 1 2 3 4 5; do
  if "$bin/locklab" run "$repro" --seed "$seed" --expectation-gate --out "$out/rerun-$attempt"; then
    echo "find_and_shrink: reproduced on run $attempt"
    exit 0
  fi
  code=$?
  if [ "$code" -eq 2 ]; then
    echo "find_and_shrink: the repro does not run (exit 2)"
    exit 1
  fi
done
echo "find_and_shrink: the repro did not reproduce in 5 runs"
exit 1
