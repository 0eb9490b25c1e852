#!/usr/bin/env python3
"""Every include of a sim layer's own files (not its tests) stays inside the layers it links.

The build refuses a back-edge only where a .cpp of the layer reaches it; a header no .cpp of its
own layer compiles (base/clock.h, compiled by data and server) would get past it. So this reads
every .h and .cpp of each layer and refuses:
  - an include whose first folder is a layer the file's layer does not link (directly or through
    its dependencies), as the DEPS of mongosim_layer() in <layer>/CMakeLists.txt declare them;
  - a "." or ".." anywhere in an include's path ("base/../server/x.h" would reach past the
    include root, which is a link to the folder);
  - a quoted include without a folder ("x.h"), which the convention "<folder>/<file>.h" rules out.
Usage: includes.py SIM_DIR. Prints each offence as file:line and exits 1, or prints a summary.
"""
import pathlib
import re
import sys

DECL = re.compile(r"mongosim_layer\(\s*(\w+)((?:\s+DEPS(?:\s+\w+)+)?)\s*\)")
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def layers(sim):
    deps = {}
    for cmake in sorted(sim.glob("*/CMakeLists.txt")):
        m = DECL.search(cmake.read_text())
        if m:
            deps[m.group(1)] = m.group(2).split()[1:] if m.group(2) else []
    if not deps:
        sys.exit(f"includes.py: no mongosim_layer() declaration under {sim}")
    for name, names in deps.items():
        for d in names:
            if d not in deps:
                sys.exit(f"includes.py: {sim / name / 'CMakeLists.txt'}: DEPS names {d}, "
                         "which no folder declares")
    return deps


def closure(name, deps, seen=None):
    seen = set() if seen is None else seen
    if name not in seen:
        seen.add(name)
        for d in deps[name]:
            closure(d, deps, seen)
    return seen


def offences(sim, deps):
    found, files = [], 0
    for name in deps:
        allowed = closure(name, deps)
        for path in sorted((sim / name).glob("*.[hc]*")):
            if path.suffix not in (".h", ".cpp"):
                continue
            files += 1
            for number, line in enumerate(path.read_text().splitlines(), 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                kind, target = m.groups()
                parts = target.split("/")
                where = f"{path.relative_to(sim.parent)}:{number}: {target}"
                if "." in parts or ".." in parts:
                    found.append(f"{where}: a relative step in the path")
                elif parts[0] in deps and parts[0] not in allowed:
                    found.append(f"{where}: layer {name} links only "
                                 f"{', '.join(sorted(allowed))}")
                elif kind == '"' and len(parts) == 1:
                    found.append(f'{where}: include as "<folder>/<file>.h"')
    return found, files


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: includes.py SIM_DIR")
    sim = pathlib.Path(sys.argv[1]).resolve()
    deps = layers(sim)
    found, files = offences(sim, deps)
    for line in found:
        print(line)
    if found:
        print(f"FAIL: {len(found)} include(s) outside the layers' declared links")
        return 1
    print(f"PASS: {files} files of {len(deps)} layers include only what their layers link")
    return 0


if __name__ == "__main__":
    sys.exit(main())
