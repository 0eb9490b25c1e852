#!/usr/bin/env python3
"""mongosim_cost.sh's report: reads OUT_DIR/callgrind/{old,new}.out (callgrind) with each one's
lockbench cell, and OUT_DIR/time/{old,new}.N/lockbench.json, and prints markdown: instructions
per acquisition (whole server, and per command of the lock's cycle), then the timed cells side by
side (means over the repetitions). Standard library and callgrind_annotate only.

  mongosim_cost_report.py OUT_DIR REPS"""
import json
import subprocess
import sys

# Inclusive-cost rows: what a contended notify acquisition makes the server do.
FUNCTIONS = [
    ("parse_op_msg(", "decoding a command", None),
    # The notify release is a findAndModify too (before it was an update): this row holds both
    # the attempts and the releases of a mongolock that hands over from the release's reply.
    ("cmd_find_and_modify(", "findAndModify (attempts; releases too since they return the grantee)",
     "findAndModify"),
    ("cmd_update(", "update (releases of earlier versions)", "update"),
    ("change_stream_get_more(", "getMore (the stream)", "getMore"),
    ("describe_pipeline_update(", "an event's updateDescription", None),
]


def callgrind_rows(path):
    text = subprocess.run(["callgrind_annotate", "--inclusive=yes", path], check=True,
                          capture_output=True, text=True).stdout
    total, rows = None, {}
    for line in text.splitlines():
        fields = line.split()
        if not fields or not fields[0][0].isdigit():
            continue
        value = int(fields[0].replace(",", ""))
        if "PROGRAM TOTALS" in line:
            total = value
        for key, _, _ in FUNCTIONS:
            if key in line and key not in rows:
                rows[key] = value
    return total, rows


def instructions(out):
    lines = ["| per acquisition | before | after | after / before |", "|---|---|---|---|"]
    sides = {}
    for side in ("old", "new"):
        cell = json.load(open("%s/callgrind/%s/lockbench.json" % (out, side)))["cells"][0]
        total, rows = callgrind_rows("%s/callgrind/%s.out" % (out, side))
        sides[side] = (cell, total, rows)
    acq = {s: sides[s][0]["counters"]["acquisitions"] for s in sides}
    calls = {s: sides[s][0]["server"]["per_command"] for s in sides}
    old_total, new_total = sides["old"][1] / acq["old"], sides["new"][1] / acq["new"]
    lines.append("| all of mongosim | %.2f M | %.2f M | %.2f |" % (old_total / 1e6, new_total / 1e6,
                                                                 new_total / old_total))
    for key, what, command in FUNCTIONS:
        per = {}
        for s in sides:
            n = calls[s].get(command, 0) if command else acq[s]
            per[s] = sides[s][2].get(key, 0) / max(1, n)
        unit = "per call" if command else "per acquisition"
        lines.append("| %s (%s) | %.0f k | %.0f k | %.2f |" % (
            what, unit, per["old"] / 1e3, per["new"] / 1e3, per["new"] / max(1, per["old"])))
    lines.append("")
    lines.append("Acquisitions in the 30 s cell under callgrind: %d before, %d after." %
                 (acq["old"], acq["new"]))
    return lines


def mean(cells, f):
    values = [f(c) for c in cells]
    return sum(values) / len(values)


def timed(out, reps):
    by_cell = {}
    floors = {"old": [], "new": []}
    for side in ("old", "new"):
        for rep in range(1, reps + 1):
            doc = json.load(open("%s/time/%s.%d/lockbench.json" % (out, side, rep)))
            floors[side] += [f["p50_ms"] for f in doc["floors"]]
            for c in doc["cells"]:
                key = (c["mode"], c["contenders"], c["hold_ms"])
                by_cell.setdefault(key, {}).setdefault(side, []).append(c)
    lines = ["Floor (findAndModify p50): %.3f ms before, %.3f ms after." % (
                 sum(floors["old"]) / len(floors["old"]), sum(floors["new"]) / len(floors["new"])),
             "",
             "| cell | acq/s before | after | after / before | release p50 ms | handoff p50 ms "
             "| longest / FIFO bound |",
             "|---|---|---|---|---|---|---|"]
    acq = lambda c: c["throughput"]["acquisitions_per_s"]
    release = lambda c: c["release_ms"]["p50"]
    handoff = lambda c: c["handoff_ms"]["p50"] or 0.0
    fifo = lambda c: c["fairness"]["longest_over_fifo"] or 0.0
    for key in sorted(by_cell):
        o, n = by_cell[key]["old"], by_cell[key]["new"]
        lines.append("| %s, N = %d, hold %d ms | %.0f | %.0f | %.2f | %.3f -> %.3f | %.3f -> %.3f "
                     "| %.2f -> %.2f |" % (key[0], key[1], key[2], mean(o, acq), mean(n, acq),
                                           mean(n, acq) / mean(o, acq), mean(o, release),
                                           mean(n, release), mean(o, handoff), mean(n, handoff),
                                           mean(o, fifo), mean(n, fifo)))
    return lines


def main():
    out, reps = sys.argv[1], int(sys.argv[2])
    print("\n".join(["## Instructions (callgrind, notify, 32 threads, hold 0)", ""] +
                    instructions(out) + ["", "## Time (alternating runs, means)", ""] +
                    timed(out, reps)))


if __name__ == "__main__":
    main()
