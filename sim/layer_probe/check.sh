#!/bin/sh
# The sim layers are enforced by the build: a probe built against the bson layer alone compiles
# when it includes a bson header and fails, naming the header, when it includes a server header;
# and no layer's file (headers included) includes outside the layers it links (includes.py).
#   check.sh BUILD_DIR
set -u
build=$1
out=$(cmake --build "$build" --target mongosim_layer_probe_allowed 2>&1) || {
  echo "$out"
  echo "FAIL: the control probe (bson including bson) did not build"
  exit 1
}
if out=$(cmake --build "$build" --target mongosim_layer_probe_back_edge 2>&1); then
  echo "FAIL: bson including server/server.h compiled: the layers are not enforced"
  exit 1
fi
echo "$out" | grep -q "server/server.h: No such file or directory" || {
  echo "$out"
  echo "FAIL: the back-edge probe failed for another reason than the refused include"
  exit 1
}
# The build sees only the includes a layer's own .cpp files reach; includes.py reads every file
# of every layer (a header no .cpp of its layer compiles, "<folder>/../" paths). It must pass on
# the tree and fail on a copy with one planted include of each kind it refuses.
sim=$(cd "$(dirname "$0")/.." && pwd)
python3 "$sim/layer_probe/includes.py" "$sim" || exit 1
copy=$(mktemp -d "${TMPDIR:-/tmp}/locklab-layers.XXXXXX") || exit 1
trap 'rm -rf "$copy"' EXIT
for layer in bson base query command repl data server; do
  mkdir -p "$copy/sim/$layer" && cp "$sim/$layer"/*.h "$sim/$layer/CMakeLists.txt" "$copy/sim/$layer/"
done
printf '#include "query/path.h"\n' >>"$copy/sim/base/clock.h"
printf '#include "repl/../data/store.h"\n' >>"$copy/sim/repl/config.h"
printf '#include "base/./clock.h"\n' >>"$copy/sim/base/log.h"
printf '#include "clock.h"\n' >>"$copy/sim/base/optime.h"
if out=$(python3 "$sim/layer_probe/includes.py" "$copy/sim"); then
  echo "$out"
  echo "FAIL: includes.py passed a copy with planted back-edges"
  exit 1
fi
for planted in "sim/base/clock.h:[0-9]*: query/path.h" "sim/repl/config.h:[0-9]*: repl/../data/store.h" \
  "sim/base/log.h:[0-9]*: base/./clock.h" "sim/base/optime.h:[0-9]*: clock.h"; do
  echo "$out" | grep -q "$planted" || {
    echo "$out"
    echo "FAIL: includes.py did not name the planted include $planted"
    exit 1
  }
done
echo "PASS: bson cannot include server/server.h; bson/value.h compiles; every layer file's includes stay in its links"
