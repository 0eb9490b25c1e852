#!/usr/bin/env bash
# Measures how long headless Chromium takes to load timeline.html for synthetic valid runs of
# the given sizes (32 workers), and prints a Markdown table (results/report-load.md).
# usage: harness/tests/browser/measure_load.sh BIN_DIR EVENTS...   (BIN_DIR: build/bin)
# Columns: events written; `locklab check` wall time (check + every report); timeline.html
# size; load: navigation start to the first drawing (includes Chromium's own start-up, see
# the empty-page row); script: JSON.parse of the data plus the first drawing; chromium: wall
# time of the whole `chromium --dump-dom` process. Each size is loaded 3 times; the median.
set -euo pipefail
bin=$1
shift
chromium=${LOCKLAB_CHROMIUM:-chromium}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# One load of $1 (a file URL); prints "load_ms script_ms wall_ms".
load_once() {
  local start end dom
  start=$(date +%s%N)
  dom=$("$chromium" --headless --disable-gpu --no-sandbox --window-size=1400,1000 \
    --user-data-dir="$work/profile" --dump-dom "$1" 2>/dev/null)
  end=$(date +%s%N)
  local load script
  load=$(grep -o 'data-load-ms="[0-9]*"' <<<"$dom" | grep -o '[0-9]*' || echo "-")
  script=$(grep -o 'data-script-ms="[0-9]*"' <<<"$dom" | grep -o '[0-9]*' || echo "-")
  echo "$load $script $(((end - start) / 1000000))"
}

median_of_3() {  # column $1 of three lines on stdin
  awk -v c="$1" '{print $c}' | sort -n | sed -n 2p
}

echo '<html><body><div id="state"></div><script>document.getElementById("state").dataset.loadMs=Math.round(performance.now())</script></body></html>' >"$work/empty.html"
echo "| events | locklab check | timeline.html | load (ms) | script (ms) | chromium (ms) |"
echo "|---:|---:|---:|---:|---:|---:|"
runs=$(for _ in 1 2 3; do load_once "file://$work/empty.html"; done)
echo "| empty page | | | $(median_of_3 1 <<<"$runs") | | $(median_of_3 3 <<<"$runs") |"
for events in "$@"; do
  dir=$work/run-$events
  "$bin/locklab-synthetic-run" "$dir" "$events" 32 >/dev/null
  start=$(date +%s%N)
  "$bin/locklab" check "$dir" >/dev/null || true  # exit 1 would be an invalid verdict
  check_ms=$((($(date +%s%N) - start) / 1000000))
  lines=$(wc -l <"$dir/history.jsonl")
  size=$(du -m "$dir/timeline.html" | cut -f1)
  runs=$(for _ in 1 2 3; do load_once "file://$dir/timeline.html"; done)
  echo "| $lines | $check_ms ms | $size MB | $(median_of_3 1 <<<"$runs") | $(median_of_3 2 <<<"$runs") | $(median_of_3 3 <<<"$runs") |"
done
