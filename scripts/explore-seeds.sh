#!/usr/bin/env bash
# explore-seeds: runs one exploration at several seeds and tabulates, per seed, whether it found
# something within its budget, after how many cases, how far the first finding shrank and how
# often its repro reproduced: the figures results/explore.md reports for a configuration.
#
#   scripts/explore-seeds.sh OUT_DIR "1 2 3" -- locklab explore flags (no --seed, no --out)
#
# JOBS (default 1) explorations run at once (a figure of cases/min is only comparable between
# tables made with the same JOBS on the same machine). Each lands in OUT_DIR/seed-<S>/ with its
# own summary.json, summary.md, repros and log (explore.log); OUT_DIR/seeds.md and
# OUT_DIR/seeds.json are the table (scripts/explore_table.py). Progress: one line per seed.
# Exit status: 0 when every exploration ran to its end and either found something (explore's exit
# 1, even beside cases it could not judge: the table counts those) or judged every case; 1 when one
# could not run, was interrupted, or found nothing with cases unjudged (explore's exit 2); 2 for
# bad arguments.
set -uo pipefail

usage() {
  echo "usage: $0 OUT_DIR \"SEED...\" -- locklab explore flags" >&2
  exit 2
}
[ $# -ge 3 ] && [ "$3" = "--" ] || usage
out=$1 seeds=$2
shift 3
[ -n "${seeds// /}" ] || { echo "explore-seeds: no seed given (e.g. \"1 2 3\")" >&2; exit 2; }
for s in $seeds; do
  [[ "$s" =~ ^[0-9]+$ ]] || { echo "explore-seeds: seed '$s' is not a whole number" >&2; exit 2; }
done
for a in "$@"; do
  case "$a" in --seed|--seed=*|--out|--out=*)
    echo "explore-seeds: $a is set per seed by this script" >&2; exit 2 ;;
  esac
done
jobs=${JOBS:-1}
[[ "$jobs" =~ ^[1-8]$ ]] || { echo "explore-seeds: JOBS '$jobs' is not 1..8" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
locklab=${LOCKLAB:-$root/build/bin/locklab}
[ -x "$locklab" ] || { echo "explore-seeds: $locklab not built (make build)" >&2; exit 2; }
mkdir -p "$out" || exit 2

one_seed() {
  local seed=$1
  shift
  local dir="$out/seed-$seed"
  rm -rf "$dir"
  mkdir -p "$dir"
  local start=$SECONDS
  "$locklab" explore --seed "$seed" --out "$dir" "$@" >"$dir/explore.log" 2>&1
  local code=$?
  echo "$code" >"$dir/exit-code"
  echo "explore-seeds: seed $seed exit $code in $((SECONDS - start)) s ($dir)" >&2
}
export -f one_seed
export out locklab

# shellcheck disable=SC2086
printf '%s\n' $seeds | xargs -P "$jobs" -I{} bash -c 'one_seed "$@"' _ {} "$@"
python3 "$root/scripts/explore_table.py" "$out" $seeds || exit 1
status=0
for s in $seeds; do
  code=$(cat "$out/seed-$s/exit-code" 2>/dev/null || echo missing)
  [ "$code" = 0 ] || [ "$code" = 1 ] || status=1
done
exit $status
