#!/bin/sh
# The smoke test of lockbench (ctest bench.lockbench_quick): `lockbench --quick` runs against a
# mongosim it starts, its JSON parses and is self-consistent (scripts/backoff_report.py --check:
# counters add up, commands match, figures ordered; never a timing threshold), and the report
# generator renders it to markdown and SVG; --holds writes each cell's raw records, one file per
# cell, whose holds are the cell's acquisitions.
# usage: quick.sh LOCKBENCH BACKOFF_REPORT_PY OUT_DIR
set -eu
lockbench=$1
report=$2
out=$3
rm -rf "$out"
mkdir -p "$out"
"$lockbench" --quick --holds --out "$out"
python3 "$report" --check "$out/lockbench.json"
python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
doc = json.load(open(out + "/lockbench.json"))
for cell in doc["cells"]:
    raw = json.load(open("%s/holds/cell-%d.json" % (out, cell["index"])))
    holds = sum(len(c["holds"]) for c in raw["contenders"])
    assert raw["cell"]["strategy"] == cell["strategy"], raw["cell"]
    assert holds == cell["counters"]["acquisitions"], (cell["index"], holds)
    assert all(len(h) == 6 and h[2] <= h[3] <= h[4] <= h[5]
               for c in raw["contenders"] for h in c["holds"]), cell["index"]
PY
python3 "$report" "$out/lockbench.json" --md "$out/backoff.md" --svg-dir "$out/svg"
test -s "$out/backoff.md"
for svg in "$out"/svg/*.svg; do
  grep -q '</svg>' "$svg"
done
ls "$out"/svg/*.svg >/dev/null
