#!/usr/bin/env bash
# Installs what the driver-fidelity checks need: Node.js with npm (Debian's packages, only when
# `node` is missing) and the pinned MongoDB Node.js driver into sim/fidelity/node_modules with
# `npm ci`. Idempotent: when node_modules already matches package-lock.json nothing is fetched.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "install-node-deps: installing Debian's nodejs and npm"
  if [ "$(id -u)" -ne 0 ]; then sudo_cmd=sudo; else sudo_cmd=; fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo_cmd apt-get update -qq
  $sudo_cmd apt-get install -y -qq --no-install-recommends nodejs npm
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
