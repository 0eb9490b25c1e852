#!/usr/bin/env python3
"""The per-seed table of explore-seeds.sh: reads OUT_DIR/seed-<S>/summary.json for each seed and
writes OUT_DIR/seeds.md and OUT_DIR/seeds.json. A seed whose summary is missing or unreadable is
listed with the reason (never dropped). Usage: explore_table.py OUT_DIR SEED..."""
import json
import os
import sys


def size_text(size):
    if not size:
        return "-"
    return "%s faults, %s workers, %s member(s), %s ms" % (
        size.get("faults"), size.get("workers"), size.get("members"), size.get("run_ms"))


def row_of(out, seed):
    path = os.path.join(out, "seed-%s" % seed, "summary.json")
    try:
        with open(path) as f:
            s = json.load(f)
    except (OSError, ValueError) as e:
        return {"seed": seed, "error": "%s: %s" % (path, e)}
    findings = s.get("findings", [])
    first = findings[0] if findings else None
    row = {"seed": seed, "cases": s.get("cases"), "cases_per_minute": s.get("cases_per_minute"),
           "first_failure_case": s.get("first_failure_case"),
           "findings": [f.get("key") for f in findings],
           "harness_errors": len(s.get("harness_errors", [])),
           "interrupted": s.get("interrupted")}
    if first:
        row.update({"found": first.get("key"), "shrink": first.get("shrink"),
                    "original_size": first.get("original_size"),
                    "final_size": first.get("final_size"), "confirmed": first.get("confirmed")})
    return row


def markdown(rows):
    lines = ["| seed | cases | cases/min | found | first failing case | shrink steps | shrink runs"
             " | final size | reproduced | harness errors |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    found = 0
    for r in rows:
        if "error" in r:
            lines.append("| %s | %s | | | | | | | | |" % (r["seed"], r["error"]))
            continue
        if r.get("found"):
            found += 1
            sh, c = r["shrink"], r["confirmed"]
            lines.append("| %s | %s | %.1f | %s | %s | %s | %s | %s | %s/%s | %s |" % (
                r["seed"], r["cases"], r["cases_per_minute"], r["found"], r["first_failure_case"],
                sh.get("steps"), sh.get("runs"), size_text(r["final_size"]), c.get("failed"),
                c.get("runs"), r["harness_errors"]))
        else:
            lines.append("| %s | %s | %.1f | no | - | - | - | - | - | %s |" % (
                r["seed"], r["cases"], r["cases_per_minute"], r["harness_errors"]))
    lines.append("")
    lines.append("Found within the budget in **%d of %d seeds**." % (found, len(rows)))
    return "\n".join(lines) + "\n"


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: explore_table.py OUT_DIR SEED...")
    out, seeds = sys.argv[1], sys.argv[2:]
    rows = [row_of(out, s) for s in seeds]
    with open(os.path.join(out, "seeds.json"), "w") as f:
        json.dump(rows, f, indent=2)
    with open(os.path.join(out, "seeds.md"), "w") as f:
        f.write(markdown(rows))
    sys.stdout.write(markdown(rows))
    return 1 if any("error" in r for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
