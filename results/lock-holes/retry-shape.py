#!/usr/bin/env python3
"""Finds, in a run of scenarios/retry-refused.toml, the rounds that had the shape the scenario
is about: a findAndModify of the worker held on the server (command-delay) whose retry, on
another connection, was refused with NotWritablePrimary before the held try executed.

usage: results/lock-holes/retry-shape.py RUN_DIR [WORKER]   (default w1)

Reads RUN_DIR/members/m0.log (mongosim's log: connection metadata, failed commands, ended
connections). A held try's connection ends when the try has executed and its reply meets the
socket the client closed at its timeout, so "connection ended" marks the late execution. A
round is counted when a 10107 refusal on one of the worker's connections is followed, within
the 1.5 s hold, by the end of another of its connections (each ended connection counted once).
Prints one line per round and the count; exit 0 iff at least one round was found.
"""
import datetime
import json
import os
import sys

HOLD_S = 1.5


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    worker = sys.argv[2] if len(sys.argv) == 3 else "w1"
    apps, events = {}, []
    path = os.path.join(sys.argv[1], "members", "m0.log")
    if not os.path.isfile(path):
        sys.exit(f"retry-shape.py: {path}: no such file (give a locklab run directory)")
    with open(path) as log:
        for number, line in enumerate(log, 1):
            try:
                entry = json.loads(line)
            except json.JSONDecodeError as error:
                sys.exit(f"retry-shape.py: {path}:{number}: not JSON ({error})")
            attr, ctx = entry.get("attr", {}), entry.get("ctx", "")
            if entry["id"] == 51800:
                apps[ctx] = attr.get("appName", "")
            if apps.get(ctx) != worker:
                continue
            at = datetime.datetime.fromisoformat(entry["t"]["$date"]).timestamp()
            if entry["id"] == 90001 and attr.get("code") == 10107:
                events.append((at, "refused", ctx))
            elif entry["id"] == 22944:
                events.append((at, "ended", ctx))
    rounds, used = 0, set()
    for at, kind, ctx in events:
        if kind != "refused":
            continue
        late = [(t, c) for t, k, c in events
                if k == "ended" and c != ctx and at < t <= at + HOLD_S and c not in used]
        if late:
            t, c = late[0]
            used.add(c)
            rounds += 1
            print(f"refused on {ctx}, then {c} (the held try) ended {1000 * (t - at):.0f} ms later")
    print(f"{rounds} round(s) with a held try whose retry was refused")
    sys.exit(0 if rounds else 1)


if __name__ == "__main__":
    main()
