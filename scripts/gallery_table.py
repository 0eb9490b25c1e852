#!/usr/bin/env python3
"""The gallery's table (scripts/gallery.sh), from the run directories it left.

Usage: gallery_table.py RUNS_DIR SEEDS "FAULT FAULT ..." ROW [ROW ...]

A cell is RUNS_DIR/<row>/<fault>/seed-<s> for s in 1..SEEDS: each run's exit code in
seed-<s>.code (77: the client is unavailable here; 2: a harness error) and its verdict in
seed-<s>/verdict.json. The cell lists every property some run found invalid (or could not
decide: a `?` after it) with how many of the SEEDS runs did, in the order of the properties'
first appearance, and, when not every run did, at which seeds ("exclusion.strict 1/3 (seed 2)"),
so that the run is reproduced with one command; "—" when every run decided every property and
none broke. A cell without a scenario file says so; a run that is missing (never run, or cut
short) is counted as such, with its seeds too.
"""
import json
import os
import sys


def run_outcome(run_dir):
    """('ok', [(property, invalid|unknown)...]) | ('skip'|'error'|'missing', reason)."""
    try:
        with open(run_dir + ".code") as f:
            code = int(f.read().strip())
    except (OSError, ValueError):
        return ("missing", "no exit code")
    if code == 77:
        return ("skip", "unavailable here")
    if code == 2:
        return ("error", "harness error")
    try:
        with open(os.path.join(run_dir, "verdict.json")) as f:
            verdict = json.load(f)
    except (OSError, ValueError) as e:
        return ("error", "no verdict: %s" % e)
    bad = [(p["property"], p["outcome"]) for p in verdict["properties"]
           if p["outcome"] in ("invalid", "unknown")]
    return ("ok", bad)


def cell(runs, row, fault, seeds):
    if not os.path.isfile(os.path.join("results", "gallery", row, fault + ".toml")):
        return "no scenario"
    found_at = {}  # label -> its seeds, in first-appearance order (dicts keep insertion order)
    other = {"skip": [], "error": [], "missing": []}
    for seed in range(1, seeds + 1):
        kind, found = run_outcome(os.path.join(runs, row, fault, "seed-%d" % seed))
        if kind != "ok":
            other[kind].append(seed)
            continue
        for prop, outcome in found:
            label = prop + ("?" if outcome == "unknown" else "")
            found_at.setdefault(label, []).append(seed)
    if len(other["skip"]) == seeds:
        return "not run (client unavailable)"
    parts = [share(label, at, seeds) for label, at in found_at.items()]
    for kind in ("error", "skip", "missing"):
        if other[kind]:
            parts.append(share({"skip": "not run"}.get(kind, kind), other[kind], seeds))
    return ", ".join(parts) if parts else "—"


def share(label, at, seeds):
    """'exclusion.strict 3/3', or with the seeds when not all: 'exclusion.strict 2/3 (seeds 1, 3)'."""
    text = "%s %d/%d" % (label, len(at), seeds)
    if len(at) == seeds:
        return text
    return text + " (seed%s %s)" % ("s" if len(at) > 1 else "", ", ".join(map(str, at)))


def main(argv):
    if len(argv) < 5:
        sys.exit("usage: gallery_table.py RUNS_DIR SEEDS 'FAULTS' ROW...")
    runs, seeds, faults, rows = argv[1], int(argv[2]), argv[3].split(), argv[4:]
    lines = ["| client | " + " | ".join(faults) + " |",
             "|---|" + "---|" * len(faults)]
    for row in rows:
        lines.append("| %s | %s |" % (row, " | ".join(cell(runs, row, f, seeds) for f in faults)))
    print("\n".join(lines))


if __name__ == "__main__":
    main(sys.argv)
