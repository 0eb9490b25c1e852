#!/usr/bin/env python3
"""Counts, in runs of scenarios/busy-retry.toml, the rounds that had the scenario's shape.

A round is the pair of pause-worker windows of one worker each; it has the shape when the
worker paused first held L1 at that moment (the nemesis records each target's role when a
window opens: "holder" or "waiting"), so that the other worker's held try meets a busy lock
and, later, a free one. Prints one line per run directory: the rounds with the shape and the
run's violations.

usage: results/lock-holes/busy-retry-rounds.py RUN_DIR_OR_SWEEP_DIR...
  A sweep directory (scripts/seed-sweep.sh OUT_DIR) is expanded to its seed-*/ runs.
"""
import glob
import json
import os
import sys


def run_dirs(path):
    if os.path.exists(os.path.join(path, "history.jsonl")):
        return [path]
    return sorted(d for d in glob.glob(os.path.join(path, "seed-*")) if os.path.isdir(d))


def describe(run):
    with open(os.path.join(run, "history.jsonl")) as f:
        events = [json.loads(line) for line in f if line.strip()]
    pauses = [e for e in events if e.get("process") == "nemesis" and e.get("type") == "ok"
              and e.get("f") == "pause-worker"]
    firsts = pauses[0::2]  # each round opens its first pause before its second
    shaped = sum(1 for e in firsts if "holder" in e["value"].get("roles", {}).values())
    with open(os.path.join(run, "verdict.json")) as f:
        verdict = json.load(f)
    violations = sum(p["violation_count"] for p in verdict["properties"])
    return f"{os.path.basename(run)}: {shaped} of {len(firsts)} rounds with the shape; {violations} violations"


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[-2], file=sys.stderr)
        return 2
    runs = [r for path in argv[1:] for r in run_dirs(path)]
    if not runs:
        print(f"busy-retry-rounds: no run directory in {argv[1:]}", file=sys.stderr)
        return 2
    for run in runs:
        print(describe(run))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
