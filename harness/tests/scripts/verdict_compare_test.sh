#!/bin/sh
# scripts/verdict_compare.py on synthetic trees: equal verdicts exit 0, a property whose outcome
# differs exits 1 and is named, an unreadable verdict.json exits 2 naming the file.
# Usage: verdict_compare_test.sh SCRIPT
set -u
script=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
verdict() {  # verdict FILE OUTCOME EXCLUSION_OUTCOME
  mkdir -p "$(dirname "$1")"
  printf '{"outcome":"%s","properties":[{"property":"tokens.unique","outcome":"valid"},{"property":"exclusion.fenced","outcome":"%s"}]}\n' "$2" "$3" >"$1"
}
fail() { echo "FAIL: $*"; exit 1; }
verdict "$dir/a/demo/verdict.json" valid valid
verdict "$dir/a/must-fail/x/verdict.json" invalid invalid
verdict "$dir/b/demo/verdict.json" valid valid
verdict "$dir/b/must-fail/x/verdict.json" invalid invalid
python3 "$script" "$dir/a" "$dir/b" >"$dir/out" || fail "equal trees judged different: $(cat "$dir/out")"
grep -q "2 with every property's outcome the same" "$dir/out" || fail "count: $(cat "$dir/out")"
verdict "$dir/b/must-fail/x/verdict.json" invalid valid
python3 "$script" "$dir/a" "$dir/b" >"$dir/out"; rc=$?
[ "$rc" = 1 ] || fail "a differing property exited $rc"
grep -q "exclusion.fenced: invalid / valid" "$dir/out" || fail "difference not named: $(cat "$dir/out")"
echo '{"outcome":' >"$dir/b/demo/verdict.json"
python3 "$script" "$dir/a" "$dir/b" >"$dir/out" 2>"$dir/err"; rc=$?
[ "$rc" = 2 ] || fail "a malformed verdict exited $rc"
grep -q "b/demo/verdict.json" "$dir/err" || fail "malformed file not named: $(cat "$dir/err")"
echo "ok"
