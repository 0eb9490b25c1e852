#!/usr/bin/env bash
# Installs mongolock from BUILD_DIR (component "mongolock") into a temporary prefix, then
# configures and builds lib/examples/example.cpp as a project outside this tree that finds it
# with find_package(mongolock) — and checks that the installed tree holds only mongolock's
# files and that the example links. Leaves nothing behind.
#   lib/test/install/check.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 source=$2
work=$(mktemp -d /tmp/mongolock-install-XXXXXX)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --component mongolock --prefix "$work/prefix" >/dev/null
for f in include/mongolock/mongolock.h include/mongolock/version.h lib/libmongolock.a \
         lib/cmake/mongolock/mongolockConfig.cmake lib/cmake/mongolock/mongolockConfigVersion.cmake \
         lib/cmake/mongolock/mongolockTargets.cmake; do
  [ -f "$work/prefix/$f" ] || { echo "FAIL: the install lacks $f"; exit 1; }
done
if find "$work/prefix" -type f | grep -v -e '/include/mongolock/' -e '/libmongolock.a$' \
     -e '/lib/cmake/mongolock/' | grep .; then
  echo "FAIL: the install holds files that are not mongolock's (above)"; exit 1
fi
# No path into the source or build tree may leak into the installed package.
if grep -rl -e "$source" -e "$(cd "$build" && pwd)" "$work/prefix/lib/cmake"; then
  echo "FAIL: the installed package names the build or source tree (above)"; exit 1
fi
cmake -S "$source/lib/test/install" -B "$work/out" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DEXAMPLE_SOURCE="$source/lib/examples/example.cpp" >"$work/configure.log" 2>&1 ||
  { cat "$work/configure.log"; echo "FAIL: find_package(mongolock) did not configure"; exit 1; }
cmake --build "$work/out" >"$work/build.log" 2>&1 ||
  { cat "$work/build.log"; echo "FAIL: the example did not build against the install"; exit 1; }
[ -x "$work/out/example" ] || { echo "FAIL: no example program built"; exit 1; }
# The version find_package saw is version.h's.
want=$(sed -n 's/^inline constexpr std::string_view kVersion = "\(.*\)";$/\1/p' \
  "$source/lib/include/mongolock/version.h")
grep -q "set(PACKAGE_VERSION \"$want\")" "$work/prefix/lib/cmake/mongolock/mongolockConfigVersion.cmake" ||
  { echo "FAIL: the package version is not $want"; exit 1; }
echo "PASS: example built against mongolock $want installed in a temporary prefix"
