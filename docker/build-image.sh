#!/usr/bin/env bash
# Builds locklab/mongosim:<tag> (default "local") from the locally built programs, with no
# registry: a base image imported from a root filesystem made here (a static busybox and the
# shared libraries ldd lists for the programs), then docker/Dockerfile FROM that base.
# The harness's `--cluster docker` builds the same images itself, tagged by its run.
#
# Usage: docker/build-image.sh [BIN_DIR (default build/bin)] [TAG (default local)]
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
bin="${1:-$here/../build/bin}"
tag="${2:-local}"
programs=("$bin/mongosim" "$bin/locklab-worker")
for p in "${programs[@]}"; do
  [ -x "$p" ] || { echo "build-image: $p is missing (make build first)" >&2; exit 1; }
done
[ -x /bin/busybox ] || { echo "build-image: /bin/busybox is missing (apt-get install busybox-static)" >&2; exit 1; }

stage="$(mktemp -d /tmp/locklab-image-XXXXXX)"
trap 'rm -rf "$stage"' EXIT
rootfs="$stage/rootfs"
mkdir -p "$rootfs/bin" "$rootfs/tmp" "$rootfs/etc" "$rootfs/data/db" "$stage/context/bin"
chmod 1777 "$rootfs/tmp"
cp /bin/busybox "$rootfs/bin/busybox"
for applet in sh mkdir ls cat sleep kill ps nc; do ln -s busybox "$rootfs/bin/$applet"; done
for p in "${programs[@]}"; do
  # "lib => /path (0x...)" and the loader "/lib64/ld-linux-x86-64.so.2 (0x...)"
  for lib in $(ldd "$p" | sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) (.*/\1/p'); do
    mkdir -p "$rootfs$(dirname "$lib")"
    cp -L "$lib" "$rootfs$lib"
  done
  cp "$p" "$stage/context/bin/"
done
cp "$here/Dockerfile" "$stage/context/Dockerfile"
tar -C "$rootfs" -cf "$stage/base.tar" .
docker import "$stage/base.tar" "locklab/base:$tag" >/dev/null
DOCKER_BUILDKIT=0 docker build --quiet --build-arg "BASE=locklab/base:$tag" \
  -t "locklab/mongosim:$tag" "$stage/context" >/dev/null
echo "locklab/mongosim:$tag"
