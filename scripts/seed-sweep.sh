#!/usr/bin/env bash
# seed-sweep: runs one scenario at many seeds and tabulates what came out, so a scenario is
# judged at seeds nobody picked rather than at the two someone tried.
#
#   scripts/seed-sweep.sh SCENARIO COUNT OUT_DIR [-- extra locklab run flags]
#   SEEDS="1 2 3221192417" scripts/seed-sweep.sh SCENARIO 0 OUT_DIR   # fixed seeds instead
#
# Seeds are drawn from /dev/urandom (32-bit) unless SEEDS is set. Each run lands in
# OUT_DIR/seed-<S>/ (history, verdict, timeline, member logs); OUT_DIR/sweep.md and
# OUT_DIR/sweep.json list every seed with its exit code, outcome and, when the run itself failed,
# the harness's error line (a member that died is such a failure: a finding, never noise).
# Progress goes to stderr, one line per run. Exit status: 0 iff every run's outcome matched the
# scenario's expect and no run failed; 1 otherwise; 2 for bad arguments.
set -uo pipefail

usage() {
  echo "usage: $0 SCENARIO COUNT OUT_DIR [-- locklab run flags]" >&2
  exit 2
}
[ $# -ge 3 ] || usage
scenario=$1 count=$2 out=$3
shift 3
[ "${1:-}" = "--" ] && shift
[ -f "$scenario" ] || { echo "seed-sweep: no scenario file '$scenario'" >&2; exit 2; }
[[ "$count" =~ ^[0-9]+$ ]] || { echo "seed-sweep: COUNT '$count' is not a whole number" >&2; exit 2; }
[ "$count" -le 10000 ] || { echo "seed-sweep: COUNT $count is above the limit of 10000" >&2; exit 2; }

root=$(cd "$(dirname "$0")/.." && pwd)
locklab=${LOCKLAB:-$root/build/bin/locklab}
[ -x "$locklab" ] || { echo "seed-sweep: $locklab not built (make build)" >&2; exit 2; }

if [ -n "${SEEDS:-}" ]; then
  read -r -a seeds <<<"$SEEDS"
else
  seeds=()
  for ((i = 0; i < count; i++)); do seeds+=("$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')"); done
fi
[ ${#seeds[@]} -gt 0 ] || { echo "seed-sweep: no seeds (COUNT 0 and SEEDS empty)" >&2; exit 2; }

expect=$(sed -n 's/^expect *= *"\([a-z]*\)".*/\1/p' "$scenario" | head -1)
expect=${expect:-valid}
mkdir -p "$out"
md="$out/sweep.md" json="$out/sweep.json"
{
  echo "# Seed sweep: \`$scenario\`"
  echo
  echo "Command: \`scripts/seed-sweep.sh $scenario $count $out${*:+ -- $*}\`  "
  echo "Expected outcome: $expect. Started $(date -u +%FT%TZ) on $(nproc) cores."
  echo
  echo "| seed | exit | outcome | seconds | failure |"
  echo "|---|---|---|---|---|"
} >"$md"
echo "[" >"$json"

bad=0 n=0
for seed in "${seeds[@]}"; do
  n=$((n + 1))
  dir="$out/seed-$seed"
  rm -rf "$dir"
  start=$(date +%s)
  "$locklab" run "$scenario" --seed "$seed" --out "$dir" "$@" >"$out/seed-$seed.stdout" 2>"$out/seed-$seed.stderr"
  rc=$?
  secs=$(($(date +%s) - start))
  outcome=$(sed -n 's/^  "outcome": "\([a-z]*\)".*/\1/p' "$dir/verdict.json" 2>/dev/null | head -1)
  outcome=${outcome:-none}
  failure=$(grep -m1 'run failed' "$out/seed-$seed.stderr" | tr '|' '/' || true)
  if [ "$outcome" != "$expect" ] || [ -n "$failure" ]; then bad=$((bad + 1)); fi
  echo "| $seed | $rc | $outcome | $secs | ${failure:-} |" >>"$md"
  [ $n -gt 1 ] && echo "," >>"$json"
  printf '  {"seed": %s, "exit": %d, "outcome": "%s", "seconds": %d, "failure": "%s"}' \
    "$seed" "$rc" "$outcome" "$secs" "$(printf '%s' "${failure:-}" | sed 's/["\\]/\\&/g')" >>"$json"
  echo "seed-sweep: $n/${#seeds[@]} seed $seed: exit $rc, $outcome, ${secs}s${failure:+, $failure}" >&2
done
echo "" >>"$json"
echo "]" >>"$json"
{
  echo
  echo "$((n - bad)) of $n runs came out $expect with no failure."
} >>"$md"
echo "seed-sweep: $((n - bad))/$n as expected; table in $md" >&2
[ $bad -eq 0 ]
