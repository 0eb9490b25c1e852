#!/usr/bin/env bash
# Installs every Debian package locklab needs to build, test and run. Idempotent: packages that
# are already installed are skipped, so a second `make test` does no apt work at all.
set -euo pipefail

packages=(
  # toolchain
  g++ cmake ninja-build make pkg-config git
  # MongoDB C driver (the lock library and every test client)
  libmongoc-dev libbson-dev
  # mongosim's allocator (sim/CMakeLists.txt) and its regular expressions (sim/query/regex.h),
  # as mongod's
  libtcmalloc-minimal4 libpcre2-dev
  # tests, property tests, benchmarks
  libgtest-dev libgmock-dev librapidcheck-dev libbenchmark-dev
  # the journal-sync test reads the server's system calls
  strace
  # harness: scenario files, JSON, command line
  libtomlplusplus-dev nlohmann-json3-dev libcli11-dev
  # harness: network namespaces and partitions; clock faults on real mongod binaries
  iproute2 nftables procps faketime
  # the worker clock tests build a Go worker: Go reads the time without libc, out of faketime's
  # reach, and a run must say so
  golang-go
  # driver-fidelity smoke tests (pymongo talks to mongosim as it would to mongod)
  python3 python3-pymongo
  # the run report's browser tests open timeline.html in headless Chromium; its SVG and JUnit
  # files are checked as XML by xmllint
  chromium libxml2-utils
  # --cluster docker: Debian's engine and client (apt starts no daemon here; the harness starts
  # one when none is reachable), a static busybox for the images' base, compose v1 for docker/
  docker.io busybox-static docker-compose
)

# `make fuzz` (libFuzzer) needs clang and its runtime; only that target asks for them.
if [ "${1:-}" = "--fuzz" ]; then
  packages+=(clang libclang-rt-14-dev)
fi

# Node.js runs the driver-fidelity checks (sim/fidelity). Debian's nodejs and npm are needed only
# when no node is installed: a NodeSource node (which bundles npm) conflicts with Debian's npm.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  packages+=(nodejs npm)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
  sudo_cmd=sudo
else
  sudo_cmd=
fi
export DEBIAN_FRONTEND=noninteractive
$sudo_cmd apt-get update -qq
$sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
