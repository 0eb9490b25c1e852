#!/usr/bin/env python3
"""Compare the per-property verdicts of two trees of run directories.

Usage: verdict_compare.py BASE_DIR OTHER_DIR [--md OUT.md] [--base-name N] [--other-name N]

Each tree holds run directories (any depth) with a verdict.json, as `locklab run --out` writes
them (e.g. build/scenario-runs and build/scenario-notify-runs). A run is matched by its path
relative to its tree. The table lists every matched run with both outcomes and every property
whose outcome differs; runs present in only one tree are listed apart. Exit status: 0 when every
matched run has the same outcome for every property, 1 when one differs, 2 on bad input (a
missing tree, an unreadable verdict.json: the message names the file).
"""
import argparse
import json
import pathlib
import sys


def read_tree(root):
    if not root.is_dir():
        raise SystemExit(f"verdict_compare: {root}: not a directory")
    runs = {}
    for path in sorted(root.rglob("verdict.json")):
        try:
            verdict = json.loads(path.read_text())
            props = {p["property"]: p["outcome"] for p in verdict["properties"]}
            runs[str(path.parent.relative_to(root))] = (verdict["outcome"], props)
        except (OSError, ValueError, KeyError, TypeError) as e:
            print(f"verdict_compare: {path}: {e}", file=sys.stderr)
            sys.exit(2)
    return runs


def compare(base, other):
    """Rows (run, base outcome, other outcome, differing properties) for runs in both trees."""
    rows = []
    for run in sorted(set(base) & set(other)):
        (b_out, b_props), (o_out, o_props) = base[run], other[run]
        diffs = [f"{p}: {b_props.get(p, '-')} / {o_props.get(p, '-')}"
                 for p in sorted(set(b_props) | set(o_props)) if b_props.get(p) != o_props.get(p)]
        rows.append((run, b_out, o_out, diffs))
    return rows


def markdown(rows, only_base, only_other, names):
    same = sum(1 for r in rows if not r[3] and r[1] == r[2])
    out = [f"{len(rows)} runs in both trees; {same} with every property's outcome the same.", "",
           f"| run | {names[0]} | {names[1]} | properties that differ |", "|---|---|---|---|"]
    for run, b_out, o_out, diffs in rows:
        out.append(f"| {run} | {b_out} | {o_out} | {'; '.join(diffs) or 'none'} |")
    for name, missing in ((names[0], only_base), (names[1], only_other)):
        if missing:
            out += ["", f"Only in {name}: " + ", ".join(sorted(missing))]
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("base", type=pathlib.Path)
    ap.add_argument("other", type=pathlib.Path)
    ap.add_argument("--md", type=pathlib.Path)
    ap.add_argument("--base-name", default="base")
    ap.add_argument("--other-name", default="other")
    args = ap.parse_args()
    base, other = read_tree(args.base), read_tree(args.other)
    rows = compare(base, other)
    text = markdown(rows, set(base) - set(other), set(other) - set(base),
                    (args.base_name, args.other_name))
    if args.md:
        args.md.write_text(text)
    print(text, end="")
    differs = any(r[3] or r[1] != r[2] for r in rows)
    return 1 if differs else 0


if __name__ == "__main__":
    sys.exit(main())
