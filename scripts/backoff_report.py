#!/usr/bin/env python3
"""lockbench's report: reads OUT/lockbench.json (bench/lockbench) and writes a markdown report
with the matrix, and SVG line plots (handoff p99, server commands per acquisition and Jain's
fairness index against contention, one line per strategy, one plot per hold time). Standard
library only: the plots are written as SVG text here.

  backoff_report.py LOCKBENCH_JSON --md OUT.md --svg-dir DIR [--notes NOTES.md]
                    [--conclusion CONCLUSION.md] [--note TEXT]
  backoff_report.py --check LOCKBENCH_JSON

--check verifies that the JSON is complete and self-consistent (the smoke test's gate: counters
that add up, commands the clients sent = commands the server counted, ordered percentiles,
every planned cell present) and exits 1 listing what is not; it never judges a timing.
--notes inserts a markdown file (what the numbers show) into the report, --conclusion another
(what a user should choose); --note adds a line
under the machine description (how the run was made: nice, other load)."""
import argparse
import json
import math
import os
import sys

COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]
MARKERS = ["circle", "square", "diamond", "triangle", "circle", "square"]


def fail_list(doc):
    """Every inconsistency in a lockbench.json, as text lines (empty: consistent)."""
    bad = []
    if doc.get("tool") != "lockbench" or doc.get("format") != 1:
        return ["not a lockbench format-1 document"]
    if not doc.get("done"):
        bad.append("the run did not finish (done is false)")
    cells = doc.get("cells", [])
    planned = doc["settings"]["cells_planned"]
    if len(cells) != planned:
        bad.append("%d cells, %d planned" % (len(cells), planned))
    members = sorted({c["members"] for c in cells})
    floors = {f["members"]: f for f in doc.get("floors", [])}
    for m in members:
        f = floors.get(m)
        if f is None:
            bad.append("no floor for %d member(s)" % m)
        elif not (f["samples"] > 0 and 0 < f["p50_ms"] <= f["p90_ms"] <= f["p99_ms"] <= f["max_ms"]):
            bad.append("floor for %d member(s) is not ordered: %s" % (m, f))
    bad += hand_over_floor_failures(doc, cells)
    for s in doc["axes"]["strategies"]:
        if not any(c["strategy"] == s for c in cells):
            bad.append("strategy %s has no cell" % s)
    mongosim = doc["settings"]["target"] == "mongosim"
    for c in cells:
        bad += ["cell %d: %s" % (c["index"], b) for b in cell_failures(c, mongosim)]
    return bad


def hand_over_floor_failures(doc, cells):
    """The hand-over floor: one per member count and hold of the main grid, each adding up, and
    one with asks written beside each where the document has that variant (lockbench measures
    both; a document from before had neither, or only the first). A document from before
    lockbench measured floors (no hand_over_floors key) has none to check."""
    if "hand_over_floors" not in doc:
        return []
    bad = []
    have = {}
    for h in doc["hand_over_floors"]:
        key = (h.get("members"), h.get("hold_ms"), bool(h.get("asks_written", False)))
        if key in have:
            bad.append("two hand-over floors%s for %s member(s) at hold %s ms" % (
                " (asks written)" if key[2] else "", key[0], key[1]))
        have[key] = h
    # A document from lockbench that measures both variants names asks_written on every floor.
    both = any("asks_written" in h for h in doc["hand_over_floors"])
    variants = [False, True] if both else [False]
    main = [c for c in cells if c["plan"] == "main"]
    for members, hold in sorted({(c["members"], c["hold_ms"]) for c in main}):
        for asks in variants:
            where = "hand-over floor%s, %d member(s), hold %d ms" % (
                " (asks written)" if asks else "", members, hold)
            h = have.get((members, hold, asks))
            if h is None:
                bad.append("no " + where)
                continue
            if "error" in h:
                bad.append("%s: %s" % (where, h["error"]))
                continue
            want = min(32, max(c["contenders"] for c in main if c["members"] == members))
            try:
                bad += ["%s: %s" % (where, b) for b in one_floor_failures(h, want)]
            except (KeyError, TypeError) as e:
                bad.append("%s: a figure is missing or not a number (%s)" % (where, e))
    return bad


def one_floor_failures(h, want_contenders):
    bad = []
    if h["contenders"] != want_contenders:
        bad.append("%d contenders, the grid's share is %d" % (h["contenders"], want_contenders))
    if not (h["add_up"] and h["token_counted"] == h["writes_sent"]):
        bad.append("token %d, writes sent %d" % (h["token_counted"], h["writes_sent"]))
    if "asks_written" in h:
        asks_want = h["acquisitions"] if h["asks_written"] else 0
        if not (h["asks_sent"] == h["asks_counted"] == asks_want):
            bad.append("asks sent %d, counted %d, for %d acquisitions" % (
                h["asks_sent"], h["asks_counted"], h["acquisitions"]))
    if not h["fifo"]:
        bad.append("a grant passed an earlier ask")
    if h["acquisitions"] < 1 or h["writes_sent"] != h["acquisitions"] + h["contenders"]:
        bad.append("%d acquisitions, %d writes" % (h["acquisitions"], h["writes_sent"]))
    t, w = h["turn_ms"], h["wait_ms"]
    if not (ordered([t["p50"], t["p90"], t["p99"], t["max"]]) and ordered([w["p50"], w["p99"], w["max"]])):
        bad.append("quantiles not ordered")
    ratio, bound = h["longest_over_fifo"], h["fifo_bound_ms"]
    if (ratio is None) != (bound <= 0) or (ratio is not None and abs(ratio * bound - w["max"]) > 1e-6 * max(1.0, w["max"])):
        bad.append("longest / FIFO %s does not match the longest wait %s over the bound %s" % (ratio, w["max"], bound))
    return bad


def ordered(values):
    return all(a <= b + 1e-9 for a, b in zip(values, values[1:]))


def cell_failures(c, mongosim):
    bad = []
    k = c["counters"]
    per = k["per_contender"]
    if len(per) != c["contenders"]:
        bad.append("%d contender records for %d contenders" % (len(per), c["contenders"]))
    if not k["add_up"]:
        bad.append("counters do not add up: %s" % k)
    for key in ("acquisitions", "releases"):
        if sum(p[key] for p in per) != k[key]:
            bad.append("%s: per-contender sum differs from the total" % key)
    if any(p["acquisitions"] != p["releases"] for p in per):
        bad.append("a contender's acquisitions differ from its releases")
    acq = k["acquisitions"]
    if acq <= 0:
        bad.append("no acquisition at all")
    t = c["throughput"]
    if abs(t["acquisitions_per_s"] * c["window_s"] - acq) > 1e-6 * max(1, acq):
        bad.append("acquisitions/s does not match acquisitions / window")
    h = c["handoff_ms"]
    locks_used = min(c["locks"], acq)
    if not (acq - locks_used <= h["all_handoffs"] <= max(0, acq - 1)):
        bad.append("%d handoffs for %d acquisitions on %d locks" % (h["all_handoffs"], acq, c["locks"]))
    if h["count"] + h.get("after_window", 0) > h["all_handoffs"]:
        bad.append("more contended handoffs (and handoffs after the window) than handoffs")
    if c["contenders"] == 1 and h["count"] != 0:
        bad.append("a contended handoff with one contender")
    if h["count"] and not ordered([h["p50"], h["p90"], h["p99"], h["max"]]):
        bad.append("handoff percentiles out of order")
    r = c.get("release_ms")
    if r is None:
        bad.append("no release_ms figures")
    # Events that ended after the window are left out: at most one hold per contender.
    elif not (0 <= acq - r["count"] <= c["contenders"]) or (
            r["count"] and not ordered([0, r["p50"], r["p90"], r["p99"], r["max"]])):
        bad.append("release round trips: count or order wrong: %s" % r)
    w = c["wait_ms"]
    # A wait that ended after the window counts as open (at most one per contender), not in count.
    late = acq - w["count"]
    if not (0 <= late <= w["open_at_end"] <= c["contenders"]) or not ordered([w["p50"], w["p99"], w["max"]]):
        bad.append("waits: count or order wrong: %s" % w)
    f = c["fairness"]
    if not (1.0 / c["contenders"] - 1e-9 <= f["jain_index"] <= 1 + 1e-9):
        bad.append("Jain's index %s outside [1/n, 1]" % f["jain_index"])
    if f["longest_wait_ms"] + 1e-9 < w["max"]:
        bad.append("longest wait below the longest completed wait")
    if "longest_first" in w and not (0 <= w["longest_first"] <= w["longest_including_open"] + 1e-9):
        bad.append("longest first wait %s outside [0, longest wait]" % w["longest_first"])
    held = c.get("held_ms")
    if held is not None and (not (0 <= acq - held["count"] <= c["contenders"]) or (held["count"] and not ordered(
            [c["hold_ms"] - 1e-6, held["p50"], held["p99"], held["max"]]))):
        bad.append("holds: count, order or a hold shorter than hold_ms: %s" % held)
    bad += server_failures(c["server"], acq, mongosim)
    if c["errors"]:
        bad.append("errors: %s" % c["errors"])
    return bad


def server_failures(s, acq, mongosim):
    bad = []
    rest = s["opcounters_sum"] - s["own_server_status"] - s["monitoring"] - s["members_internal"]
    if rest != s["lock_commands"]:
        bad.append("server lock commands %d != opcounters %d less the others" % (
            s["lock_commands"], rest))
    if sum(s["client_per_command"].values()) != s["client_sent"]:
        bad.append("client per-command counts do not sum to client_sent")
    if mongosim and not s["commands_match"]:
        bad.append("the server counted %d lock commands, the clients sent %d" % (
            s["lock_commands"], s["client_sent"]))
    if s["commands_match"] != (s["lock_commands"] == s["client_sent"]):
        bad.append("commands_match disagrees with the counts")
    if mongosim and s["cpu_s"] is None:
        bad.append("no server CPU for mongosim")
    if s["commands_per_acquisition"] is not None and acq > 0 and abs(
            s["commands_per_acquisition"] * acq - s["lock_commands"]) > 1e-6 * max(1, acq):
        bad.append("commands per acquisition does not match")
    return bad


# ---- SVG ------------------------------------------------------------------------------------

W, H = 560, 340
LEFT, RIGHT, TOP, BOTTOM = 64, 130, 36, 44


def esc(text):
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def nice_log_ticks(lo, hi):
    ticks = []
    e = math.floor(math.log10(lo))
    while 10 ** e <= hi * 1.0001:
        for m in (1, 2, 5):
            v = m * 10 ** e
            if lo / 1.0001 <= v <= hi * 1.0001:
                ticks.append(v)
        e += 1
    return ticks


def fmt(v):
    if v >= 1000:
        return "%gk" % (v / 1000)
    if v >= 1:
        return "%g" % v
    return "%.2g" % v


def y_scale(values, log):
    pos = [v for v in values if v is not None and v > 0]
    if log and pos:
        lo, hi = min(pos), max(pos)
        lo = 10 ** math.floor(math.log10(lo))
        hi = 10 ** math.ceil(math.log10(hi))
        if hi <= lo:
            hi = lo * 10
        ticks = nice_log_ticks(lo, hi)
        if len(ticks) > 7:
            ticks = [t for t in ticks if fmt(t)[0] == "1"]
        return (lambda v: (math.log10(v) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))), ticks
    hi = max([v for v in values if v is not None] + [1.0])
    ticks = [hi * i / 5 for i in range(6)]
    return (lambda v: v / hi), ticks


def marker(shape, x, y, colour):
    if shape == "square":
        return '<rect x="%.1f" y="%.1f" width="7" height="7" fill="%s"/>' % (x - 3.5, y - 3.5, colour)
    if shape == "diamond":
        return '<polygon points="%.1f,%.1f %.1f,%.1f %.1f,%.1f %.1f,%.1f" fill="%s"/>' % (
            x, y - 5, x + 5, y, x, y + 5, x - 5, y, colour)
    if shape == "triangle":
        return '<polygon points="%.1f,%.1f %.1f,%.1f %.1f,%.1f" fill="%s"/>' % (
            x, y - 5, x + 5, y + 4, x - 5, y + 4, colour)
    return '<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s"/>' % (x, y, colour)


def svg_plot(title, y_label, series, xs, log_y):
    """series: [(name, [y or None per x])]; xs: contention values (log2 axis)."""
    pw, ph = W - LEFT - RIGHT, H - TOP - BOTTOM
    ys_all = [v for _, ys in series for v in ys]
    fy, yticks = y_scale(ys_all, log_y)
    lx0, lx1 = math.log2(min(xs)), math.log2(max(xs))
    span = (lx1 - lx0) or 1

    def px(x):
        return LEFT + (math.log2(x) - lx0) / span * pw

    def py(v):
        return TOP + ph - max(0.0, min(1.0, fy(v))) * ph

    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">' % (W, H, W, H),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="%d" y="20" font-size="13" font-weight="bold">%s</text>' % (LEFT, esc(title))]
    for t in yticks:
        y = py(t) if (not log_y or t > 0) else TOP + ph
        out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/>' % (LEFT, LEFT + pw, y, y))
        out.append('<text x="%d" y="%.1f" text-anchor="end">%s</text>' % (LEFT - 6, y + 4, fmt(t)))
    for x in xs:
        out.append('<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#eee"/>' % (px(x), px(x), TOP, TOP + ph))
        out.append('<text x="%.1f" y="%d" text-anchor="middle">%d</text>' % (px(x), TOP + ph + 16, x))
    out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#444"/>' % (LEFT, TOP, pw, ph))
    out.append('<text x="%.1f" y="%d" text-anchor="middle">contenders (log scale)</text>' % (LEFT + pw / 2, H - 8))
    out.append('<text transform="translate(14,%.1f) rotate(-90)" text-anchor="middle">%s</text>' % (
        TOP + ph / 2, esc(y_label + (" (log scale)" if log_y else ""))))
    for i, (name, ys) in enumerate(series):
        colour, shape = COLOURS[i % len(COLOURS)], MARKERS[i % len(MARKERS)]
        pts = [(px(x), py(v)) for x, v in zip(xs, ys) if v is not None and (not log_y or v > 0)]
        if len(pts) > 1:
            out.append('<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>' % (
                colour, " ".join("%.1f,%.1f" % p for p in pts)))
        out += [marker(shape, x, y, colour) for x, y in pts]
        ly = TOP + 14 + 18 * i
        out.append('<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="%s" stroke-width="2"/>' % (
            LEFT + pw + 12, LEFT + pw + 36, ly, ly, colour))
        out.append(marker(shape, LEFT + pw + 24, ly, colour))
        out.append('<text x="%d" y="%d">%s</text>' % (LEFT + pw + 42, ly + 4, esc(name)))
    out.append("</svg>")
    return "\n".join(out) + "\n"


# ---- markdown -------------------------------------------------------------------------------

PLOTS = [
    ("handoff-p99", "handoff p99 (someone waiting)", "ms", lambda c: c["handoff_ms"]["p99"], True),
    ("commands-per-acquisition", "server commands per acquisition", "commands",
     lambda c: c["server"]["commands_per_acquisition"], True),
    ("jain", "Jain's fairness index", "index (1 = equal shares)", lambda c: c["fairness"]["jain_index"], False),
]


def num(v, digits=1):
    if v is None:
        return "n/a"
    if isinstance(v, bool):
        return "yes" if v else "NO"
    if abs(v) >= 100:
        return "{:,.0f}".format(v)
    return ("%." + str(digits) + "f") % v


def main_cells(doc, hold):
    return [c for c in doc["cells"] if c["plan"] == "main" and c["hold_ms"] == hold
            and c["mode"] == doc["axes"]["modes"][0] and c["locks"] == doc["axes"]["locks"][0]
            and c["members"] == doc["axes"]["members"][0]]


def write_svgs(doc, svg_dir):
    os.makedirs(svg_dir, exist_ok=True)
    names = []
    for hold in doc["axes"]["holds_ms"]:
        cells = main_cells(doc, hold)
        xs = sorted({c["contenders"] for c in cells})
        if len(xs) < 2:
            continue
        for key, title, unit, get, log_y in PLOTS:
            series = []
            for s in doc["axes"]["strategies"]:
                by_n = {c["contenders"]: get(c) for c in cells if c["strategy"] == s}
                series.append((s, [by_n.get(x) for x in xs]))
            name = "%s-hold-%dms.svg" % (key, hold)
            with open(os.path.join(svg_dir, name), "w") as f:
                f.write(svg_plot("%s, hold %d ms" % (title, hold), unit, series, xs, log_y))
            names.append((key, hold, name))
    return names


COLUMNS = ("| strategy | N | acq/s | of bound | handoff p50 / p90 / p99 / max ms | p99 / RTT "
           "| to self | release p50 ms | wait p50 / p99 / max (first) ms | longest / FIFO | Jain | cmds/acq "
           "| match | server CPU s |")


def row(c, lead):
    h, w, f, s, t = c["handoff_ms"], c["wait_ms"], c["fairness"], c["server"], c["throughput"]
    first = w.get("longest_first")  # n/a in a run made before it was recorded
    return "| %s | %d | %s | %s | %s / %s / %s / %s | %s | %s | %s | %s / %s / %s (%s) | %s | %s | %s | %s | %s |" % (
        lead, c["contenders"], num(t["acquisitions_per_s"]), num(t["ratio_to_hold_bound"], 3),
        num(h["p50"], 2), num(h["p90"], 1), num(h["p99"], 1), num(h["max"], 0),
        num(h["over_rtt"]["p99"], 0), num(h["same_contender_share"], 2),
        num(c.get("release_ms", {}).get("p50"), 2),  # n/a in a run made before release_ms
        num(w["p50"], 1), num(w["p99"], 0), num(w["max"], 0), num(first, 0),
        num(f["longest_over_fifo"], 1), num(f["jain_index"], 2),
        num(s["commands_per_acquisition"], 2), num(s["commands_match"]), num(s["cpu_s"], 2))


def matrix_section(doc):
    out = []
    for hold in doc["axes"]["holds_ms"]:
        cells = main_cells(doc, hold)
        out += ["", "### Hold %d ms" % hold, "", COLUMNS, "|" + "---|" * 14]
        for s in doc["axes"]["strategies"]:
            for c in sorted((c for c in cells if c["strategy"] == s), key=lambda c: c["contenders"]):
                out.append(row(c, s))
    return out


def slice_section(doc):
    slices = [c for c in doc["cells"] if c["plan"] != "main"]
    if not slices:
        return []
    out = ["", "## Slices", "",
           "Each slice changes one axis of the main grid (at hold %s ms); the row below each slice "
           "cell is the main-grid cell it differs from, when the run has it." % (
               sorted({c["hold_ms"] for c in slices})), ""]
    main = {(c["strategy"], c["contenders"], c["hold_ms"]): c for c in doc["cells"] if c["plan"] == "main"}
    for name in sorted({c["plan"] for c in slices}):
        out += ["", "### %s" % name, "", COLUMNS.replace("| strategy |", "| strategy, cell |"),
                "|" + "---|" * 14]
        for c in sorted((c for c in slices if c["plan"] == name), key=lambda c: (c["strategy"], c["contenders"])):
            lead = "%s, %s, K=%d, %d member%s" % (c["strategy"], c["mode"], c["locks"], c["members"],
                                                   "" if c["members"] == 1 else "s")
            out.append(row(c, "**%s**" % lead))
            base = main.get((c["strategy"], c["contenders"], c["hold_ms"]))
            if base:
                out.append(row(base, "main: %s, %s, K=%d, %d member" % (
                    base["strategy"], base["mode"], base["locks"], base["members"])))
    return out


def header_section(doc, note):
    m, s = doc["machine"], doc["settings"]
    floors = doc["floors"]
    out = ["# Backoff strategies across contention (lockbench)", "",
           "Made by `bench/lockbench` (one run) and `scripts/backoff_report.py`; the raw figures "
           "are in `backoff/lockbench.json`.", "",
           "- command: `%s`" % doc["command"],
           "- machine: %s, %d cores online, %s" % (m["cpu_model"], m["cores_online"], m["kernel"]),
           "- started %s, %s of wall time; load average %s at the start, %s at the end" % (
               doc["started_at"], "%.0f s" % doc.get("wall_s", 0),
               " / ".join("%.2f" % v for v in doc["load_average_start"]),
               " / ".join("%.2f" % v for v in doc.get("load_average_end", []))),
           ]
    if note:
        out.append("- %s" % note)
    out += ["- each contender loops acquire, hold, release, %d ms of other work; %s s per cell; "
            "busy-wait bounds %d-%d ms; lease %d ms; lock choice %s" % (
                s["gap_ms"], s["seconds_per_cell"], s["busy_wait_min_ms"], s["busy_wait_max_ms"],
                s["expiry_ms"], s["lock_choice"]),
            "", "Strategies:", ""]
    for st in doc["strategies"]:
        out.append("- `%s`: %s%s" % (st["name"], st["formula"],
                                     "" if st["available"] else " (not measured: %s)" % st["unavailable"]))
    out += ["", "## The floor", "",
            "mongolock's acquire findAndModify (the command the library builds) sent uncontended "
            "through raw libmongoc, majority write concern; RTT below is its median.", "",
            "| server | samples | p50 ms | p90 ms | p99 ms | max ms |", "|---|---|---|---|---|---|"]
    for f in floors:
        out.append("| %s | %d | %.3f | %.3f | %.3f | %.3f |" % (
            f["target"], f["samples"], f["p50_ms"], f["p90_ms"], f["p99_ms"], f["max_ms"]))
    return out + hand_over_floor_section(doc)


def hand_over_floor_section(doc):
    """The best a FIFO lock could do here, beside the notify cell of the same N and hold."""
    floors = doc.get("hand_over_floors", [])
    if not floors:
        return []
    out = ["", "## The hand-over floor", "",
           "N threads pass an in-process FIFO baton; each hand-over is one majority findAndModify "
           "(token + 1, holder), the least a server-recorded hand-over with a fencing token costs; "
           "each thread holds, writes, hands over, does the same other work as a contender and "
           "asks again (bench/lockbench/hand_over_floor.h). It leaves out everything a lock adds, so "
           "a lock that records each hand-over with a majority write is not expected to beat it: "
           "its longest wait over the FIFO bound (the matrix's bound) is what this machine, in this "
           "run, lets that figure be (one worst wait, so it varies between runs; the turn's median is the "
           "steady figure). Asks written: each thread also writes its ask (one more majority "
           "findAndModify on the same document) before it takes its place, the least a lock whose "
           "waiters are recorded on the server adds per acquisition. Beside each, the notify cell of "
           "the main grid with the same N and hold.", "",
           "| members | N | hold ms | asks | acquisitions | turn p50 / p90 / p99 / max ms | wait p50 / p99 / max ms "
           "| longest / FIFO | notify: longest / FIFO |", "|---|---|---|---|---|---|---|---|---|"]
    for h in floors:
        notify = [c for c in doc["cells"] if c["plan"] == "main" and c["strategy"] == "notify"
                  and c["members"] == h["members"] and c["contenders"] == h["contenders"]
                  and c["hold_ms"] == h["hold_ms"] and c["locks"] == 1]
        asks = "written" if h.get("asks_written") else "in process"
        if "error" in h:
            out.append("| %d | %d | %d | %s | not measured: %s | | | | |" % (
                h["members"], h["contenders"], h["hold_ms"], asks, esc(h["error"])))
            continue
        t, w = h["turn_ms"], h["wait_ms"]
        out.append("| %d | %d | %d | %s | %d | %.3f / %.3f / %.3f / %.2f | %.1f / %.1f / %.1f | %s | %s |" % (
            h["members"], h["contenders"], h["hold_ms"], asks, h["acquisitions"], t["p50"], t["p90"],
            t["p99"], t["max"], w["p50"], w["p99"], w["max"], num(h["longest_over_fifo"], 2),
            num(notify[0]["fairness"]["longest_over_fifo"], 2) if notify else "n/a"))
    return out


LEGEND = """
Columns: acq/s = acquisitions per second over the cell; of bound = that over the hold bound
min(K, N) / (hold + RTT); handoff = from the previous holder's release() returning to the next
holder's acquire() returning, holds in fencing-token order (negative when the grant's reply
overtook the release's), counted only when another contender was waiting for that lock when
the release returned (so none at N = 1: otherwise the lock was idle because nobody wanted it)
and the grant came inside the cell's window (as every figure of single events: a release, a
hold, a handoff that ended after it is left out, since at the end every waiter gives up at once);
p99 / RTT = handoff p99 over the floor's median; to self = share of
those handoffs back to the contender that released; wait = acquire() call to return, of the waits
that ended inside the cell's window (longest / FIFO: the longest wait, counting to the window's end
the waits its end cut off or that ended after it, when every waiter gives up at once, over
(ceil(N/K) - 1) x (hold + RTT); first = the longest of the contenders' first waits, when all N
ask at once on a cold Provider, counted the same way);
Jain = Jain's index over per-contender acquisitions; cmds/acq = commands the server counted
(opcounters, less lockbench's serverStatus, driver monitoring and member-to-member commands) per
acquisition; match = that count equals the commands the clients' pools sent (APM); server CPU s
= utime + stime of the mongosim processes during the cell."""


def budget_section(doc):
    """Why the default matrix has the shape it has, with this run's own timing."""
    cells = len(doc["cells"])
    strategies = len(doc["axes"]["strategies"])
    wall = doc.get("wall_s", 0)
    return ["", "## The matrix's shape", "",
            "The main grid crosses the axes a choice of strategy depends on most (strategy x "
            "contention x hold) on one lock, threads in one process, one member; processes, "
            "several locks and three members each get a slice of a few contention values at "
            "hold 1 ms instead, because crossing them with the grid would multiply it (by 2, 2 "
            "and 2 again) past the budget of 10 minutes on 2 cores. This run: %d cells in %.0f s "
            "(%.1f s a cell with set-up); one more strategy would bring it to about %.0f s." % (
                cells, wall, wall / max(cells, 1), wall * (strategies + 1) / max(strategies, 1))]


def markdown(doc, svgs, svg_rel, notes, note, conclusion):
    out = header_section(doc, note)
    if not doc["axes"]["quick"]:
        out += budget_section(doc)
    if svgs:
        out += ["", "## Plots", "", "Main grid (%s, one lock, %d member), one line per strategy." % (
            doc["axes"]["modes"][0], doc["axes"]["members"][0]), ""]
        for key, hold, name in svgs:
            out.append("![%s, hold %d ms](%s/%s)" % (key, hold, svg_rel, name))
    out += ["", "## The matrix", "", "Main grid: %s, %d lock, %d member." % (
        doc["axes"]["modes"][0], doc["axes"]["locks"][0], doc["axes"]["members"][0]), LEGEND.strip()]
    out += matrix_section(doc)
    out += slice_section(doc)
    out += ["", "## What the numbers show", ""]
    out.append(notes.strip() if notes else "(no notes given: see --notes)")
    out += ["", "## Conclusion", ""]
    out.append(conclusion.strip() if conclusion else "(no conclusion given: see --conclusion)")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("json")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--md")
    ap.add_argument("--svg-dir")
    ap.add_argument("--notes")
    ap.add_argument("--conclusion")
    ap.add_argument("--note")
    args = ap.parse_args()
    try:
        with open(args.json) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        print("backoff_report: cannot read %s: %s" % (args.json, e), file=sys.stderr)
        return 1
    if args.check:
        bad = fail_list(doc)
        for b in bad:
            print("backoff_report: %s: %s" % (args.json, b), file=sys.stderr)
        print("backoff_report: %s: %s" % (args.json, "consistent" if not bad else "%d problem(s)" % len(bad)))
        return 1 if bad else 0
    if not args.md or not args.svg_dir:
        ap.error("--md and --svg-dir are needed (or --check)")
    svgs = write_svgs(doc, args.svg_dir)
    notes = open(args.notes).read() if args.notes else ""
    conclusion = open(args.conclusion).read() if args.conclusion else ""
    rel = os.path.relpath(args.svg_dir, os.path.dirname(os.path.abspath(args.md)) or ".")
    with open(args.md, "w") as f:
        f.write(markdown(doc, svgs, rel, notes, args.note, conclusion))
    return 0


if __name__ == "__main__":
    sys.exit(main())
