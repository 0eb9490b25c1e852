#!/usr/bin/env bash
# Installs what the npm client needs into node_modules beside this script:
#   - the Node.js driver mongodb 5.9.2 (the major version distributed-locks-mongodb asks for) and
#     its dependencies, pinned with integrity hashes by package-lock.json (`npm ci`);
#   - distributed-locks-mongodb 1.0.3 itself, fetched with `npm pack` and checked against the
#     sha512 the registry publishes for it (pinned below). `npm install` of it fails: its
#     dependency distributed-locks-common is not served by the registry (404). That package only
#     holds the lock factory's types and retry loop, which worker.js re-creates; at run time the
#     storage class needs nothing but mongodb.
# Idempotent: when both are in place nothing is fetched.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
package=distributed-locks-mongodb
version=1.0.3
integrity="sha512-WZvfQ6/vavVFIa7hvgZD+NFCjxDxx0FoRZ+hN2xJuqAsuk3GVH6YbUPpAy14UbAcXIEfAIvSSB5HQiTSS4BSeQ=="

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "install: node and npm are missing; run scripts/install-deps.sh first" >&2
  exit 1
fi

seed="$here/node_modules/$package/package.json"
stamp="$here/node_modules/.package-lock.json"
if [ -f "$stamp" ] && [ "$stamp" -nt "$here/package-lock.json" ] && [ -f "$seed" ] &&
  [ "$(node -p "require('$seed').version")" = "$version" ]; then
  exit 0
fi

echo "install: npm ci in $here"
cd "$here"
npm ci --no-audit --no-fund --loglevel=error

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "install: npm pack $package@$version"
(cd "$work" && npm pack "$package@$version" --loglevel=error >/dev/null)
tarball="$work/$package-$version.tgz"
actual="sha512-$(node -e "process.stdout.write(require('crypto').createHash('sha512')
  .update(require('fs').readFileSync(process.argv[1])).digest('base64'))" "$tarball")"
if [ "$actual" != "$integrity" ]; then
  echo "install: $package-$version.tgz has integrity $actual, expected $integrity" >&2
  exit 1
fi
mkdir -p "$here/node_modules/$package"
tar -xzf "$tarball" -C "$here/node_modules/$package" --strip-components=1
# npm ci rewrote the stamp before the extraction: touch it so the check above sees both done.
touch "$stamp"
