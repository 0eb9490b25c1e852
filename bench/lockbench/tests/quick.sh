#!/bin/sh
# The smoke test of lockbench (ctest bench.lockbench_quick): `lockbench --quick` runs against a
# mongosim it starts, its JSON parses and is self-consistent (scripts/backoff_report.py --check:
# counters add up, commands match, figures ordered; never a timing threshold), and the report
# generator renders it to markdown and SVG.
# usage: quick.sh LOCKBENCH BACKOFF_REPORT_PY OUT_DIR
set -eu
lockbench=$1
report=$2
out=$3
rm -rf "$out"
mkdir -p "$out"
"$lockbench" --quick --out "$out"
python3 "$report" --check "$out/lockbench.json"
python3 "$report" "$out/lockbench.json" --md "$out/backoff.md" --svg-dir "$out/svg"
test -s "$out/backoff.md"
for svg in "$out"/svg/*.svg; do
  grep -q '</svg>' "$svg"
done
ls "$out"/svg/*.svg >/dev/null
