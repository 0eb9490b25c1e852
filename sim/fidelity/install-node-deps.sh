#!/usr/bin/env bash
# Installs the pinned MongoDB Node.js driver the driver-fidelity checks need into
# sim/fidelity/node_modules with `npm ci`. Idempotent: when node_modules already matches
# package-lock.json nothing is fetched.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

# scripts/install-deps.sh installs Debian's nodejs and npm when node is missing.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "install-node-deps: node and npm are missing; run scripts/install-deps.sh first" >&2
  exit 1
fi

# npm writes node_modules/.package-lock.json after a complete install; when it is newer than the
# committed lock file the tree is current and a second run does no network work.
stamp="$here/node_modules/.package-lock.json"
if [ -f "$stamp" ] && [ "$stamp" -nt "$here/package-lock.json" ] &&
  node -e "require('$here/node_modules/mongodb')" >/dev/null 2>&1; then
  exit 0
fi

echo "install-node-deps: npm ci in $here"
cd "$here"
npm ci --no-audit --no-fund --loglevel=error
