#!/bin/sh
# Runs a Node.js script of the fidelity checks, or reports the check as not run (exit 77, which
# ctest shows as skipped) when node or the pinned driver is missing.
here="$(cd "$(dirname "$0")" && pwd)"
if ! command -v node >/dev/null 2>&1; then
  echo "fidelity: node is not available; not run (sim/fidelity/install-node-deps.sh installs it)"
  exit 77
fi
if [ ! -f "$here/node_modules/mongodb/package.json" ]; then
  echo "fidelity: the Node.js driver is not installed; not run"
  echo "fidelity: run sim/fidelity/install-node-deps.sh"
  exit 77
fi
cd "$here" || exit 1
exec node "$@"
