#!/usr/bin/env python3
"""Every include of a sim layer's own files (not its tests) stays inside the layers it links.

The build refuses a back-edge only where a .cpp of the layer reaches it; a header no .cpp of its
own layer compiles (base/clock.h, compiled by data and server) would get past it. So this reads
every .h and .cpp of each layer and refuses:
  - an include whose first folder is a layer the file's layer does not link (directly or through
    its dependencies), as the DEPS of mongosim_layer() in <layer>/CMakeLists.txt declare them;
  - a "." or ".." anywhere in an include's path ("base/../server/x.h" would reach past the
    include root, which is a link to the folder);
  - a quoted include without a folder ("x.h"), which the convention "<folder>/<file>.h" rules out;
  - #include_next, #import, and an include whose name is a macro (it cannot be read here);
  - a file of a layer that is not a .h or .cpp in the layer's own folder (tests/ aside).
Lines are read as the preprocessor reads them: a byte-order mark, comments, backslash-newline
splices and the %: digraph are folded away first.
Usage: includes.py SIM_DIR. Prints each offence as file:line and exits 1, or prints a summary.
"""
import pathlib
import re
import sys

DECL = re.compile(r"mongosim_layer\(\s*(\w+)((?:\s+DEPS(?:\s+\w+)+)?)\s*\)")
# After comments, splices and digraphs are folded away (directive_lines): any directive that
# names a file, with a literal name or with a macro (refused: the name cannot be read here).
DIRECTIVE = re.compile(r'^\s*#\s*(include_next|include|import)\b\s*(.*)$')
LITERAL = re.compile(r'^([<"])([^>"]+)[>"]')
SOURCES = (".h", ".cpp")


def directive_lines(text):
    """(line number, logical line) with what the preprocessor removes first removed: a byte-order
    mark, backslash-newline splices, comments, and the %: digraph of #."""
    text = text.lstrip("\ufeff")
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n") or " ",
                  text, flags=re.S)
    number, pending, start = 0, "", 1
    for raw in text.split("\n"):
        number += 1
        if not pending:
            start = number
        if raw.endswith("\\"):
            pending += raw[:-1]
            continue
        line = (pending + raw).split("//", 1)[0].replace("%:", "#")
        pending = ""
        yield start, line


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
        folder = sim / name
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            rel = path.relative_to(folder)
            if rel.parts[0] == "tests" or path.name == "CMakeLists.txt":
                continue
            where_file = path.relative_to(sim.parent)
            if path.suffix not in SOURCES or len(rel.parts) > 1:
                found.append(f"{where_file}: a layer holds .h and .cpp files in its own folder only")
                continue
            files += 1
            for number, line in directive_lines(path.read_text(errors="replace")):
                m = DIRECTIVE.match(line)
                if not m:
                    continue
                where = f"{where_file}:{number}: {m.group(2).strip()}"
                literal = LITERAL.match(m.group(2).strip())
                if m.group(1) != "include" or not literal:
                    found.append(f"{where}: #{m.group(1)} with a literal \"<folder>/<file>.h\" only")
                    continue
                kind, target = literal.groups()
                where = f"{where_file}:{number}: {target}"
                parts = target.split("/")
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
