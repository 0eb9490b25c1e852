#!/bin/sh
# The sim layers are enforced by the build: a probe built against the bson layer alone compiles
# when it includes a bson header and fails, naming the header, when it includes a server header;
# and no layer's file includes by a relative path (which would bypass the include roots).
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
# A relative include ("../server/x.h") would reach past a layer's include root: none may exist.
sim=$(dirname "$0")/..
relative=$(grep -rn --include='*.h' --include='*.cpp' -E '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[.][.]?/' \
  "$sim/bson" "$sim/base" "$sim/query" "$sim/command" "$sim/repl" "$sim/data" "$sim/server")
if [ -n "$relative" ]; then
  echo "$relative"
  echo "FAIL: a relative include bypasses the layers' include roots (include \"<folder>/<file>.h\")"
  exit 1
fi
echo "PASS: bson cannot include server/server.h; bson/value.h compiles; no relative includes"
