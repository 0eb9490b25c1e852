#!/usr/bin/env python3
"""Opens a run's timeline.html in headless Chromium, as a person would, and checks the page.

Renders the report of a stored run (`locklab check` on a copy of RUN/history.jsonl), loads it in
Debian's headless chromium with --dump-dom, and reads what the page's script wrote into its
#state element and what Chromium logged from the page's console:
  - no script error (neither recorded by the page's error hook nor logged on the console);
  - the overview is not blank: items drawn, and dark pixels inside the plot area of the canvas;
  - opened without a fragment, the view is the whole run;
  - opened at #violation-K, violation K is selected and the view is zoomed in on it: every
    event it names lies inside the view, and the view is narrower than the run.
  - with --fits-screen, the whole timeline canvas (every row) is on the first screen, judged
    from outside the page: probe.js (injected into a copy) takes the canvas's box from the
    layout engine and asks the browser's hit testing what is at its centre and corners, and a
    screenshot of the page at the same window size must show the drawing's colours inside that
    box; a run with violations must also keep the canvas found there with the violation list
    opened, and the first violation's link found too;
  - with --first-violation-marked, the screenshot shows the first violation's events marked
    (the dark red of the violation shown) inside the canvas's box;
  - with --names, no text drawn on the canvas or shown in the HTML carries a bidirectional
    control (an override in a worker id, lock name or fault label would reorder the text after
    it: the characters after each are measured left to right), and each fault band's label is
    drawn within its band, cut with an ellipsis, its whole text in the band's tooltip.
--synthetic EVENTS:WORKERS checks a run made by locklab-synthetic-run (--synthetic-bin) instead.
--break MODE breaks the page first (a syntax error, an exception while drawing, or drawing
nothing) and passes only when the checks above catch it: the proof that they can fail.
--interact drives the page with keys, the wheel, a drag, a hover and a click (interact.js,
injected into a copy of the page) and checks what each did: + and - halve and double the view,
the right arrow pans, 0 shows the whole run, the wheel zooms in, a drag pans, p with nothing
selected selects the last violation and n the next, a hover over a hold shows it in the tip and
a click shows it in the details.
--screenshot PATH also saves what the browser shows; --window W,H sets the window (1400,1000).
Exit codes: 0 pass, 1 fail, 77 skipped (no chromium here).
What it leaves out: the operating system's input path (--interact dispatches DOM events, so
default actions such as scrolling do not happen), other browsers, device pixel ratios other than
1, and window sizes other than the one given.
"""
import argparse
import html.parser
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import png_pixels

SKIP = 77
BREAKS = {
    # A syntax error: the whole main script is rejected.
    "syntax": ("function draw(){", "function draw({"),
    # A runtime error while drawing.
    "throw": ("function drawBackground(w){", "function drawBackground(w){null.x;"),
    # A violation link that selects but does not zoom (run with --fragment violation-0).
    "nozoom": ("if(lo<=hi){var pad=", "if(false){var pad="),
    # Script runs, but draws no item.
    # Rows at a fixed height: a 32-worker run no longer fits the first screen.
    "nofit": ("ROW_H=Math.max(ROW_H_MIN,", "ROW_H=ROW_H_MAX||Math.max(ROW_H_MIN,"),
    "blank": ("function drawItems(ix,top,height,colourOf,aggColour){",
              "function drawItems(ix,top,height,colourOf,aggColour){return 0;"),
    # The proving events of a violation are not outlined (run with --fragment violation-0).
    "nohighlight": ("highlights.push([x0,x1,yy]);", "0;"),
    # No operation drawn, only holds.
    "noops": ("var ops=drawItems(O,", "var ops=0&&drawItems(O,"),
    # The wheel zooms around the view's middle, not the pointer (run with --interact).
    "wheelcentre": ("zoom(Math.exp(e.deltaY*0.0015),tAt(e.clientX-r.left));", "zoom(Math.exp(e.deltaY*0.0015));"),
    # A hover shows the first row's name whatever the row (run with --interact).
    "wrongrow": ("return 'hold  '+D.rows[h.row[i]][0]", "return 'hold  '+D.rows[0][0]"),
    # n towards the violation already in the fragment does nothing (run with --interact).
    "samehash": ("if(location.hash===h)route();else ", ""),
    # Keys do nothing (run with --interact).
    "nokeys": ("document.addEventListener('keydown',", "document.addEventListener('keyup',"),
    # p with nothing selected goes to the second-to-last violation (run with --interact).
    "prevwrap": ("(selected<0?D.viol.length-1:", "(selected<-9?D.viol.length-1:"),
    # A hover finds nothing (run with --interact).
    "nohover": ("var r=rowAt(yy),t=tAt(x)", "var r=-1,t=tAt(x)"),
    # The canvas hidden in five ways the page's own layout report does not see (run with
    # --fits-screen): not displayed, of zero size, off-screen, covered, transparent.
    "hide-display": ("#tl{display:block;", "#tl{display:none;"),
    "hide-zero": ("#tl{display:block;", "#tl{display:block;max-width:0;max-height:0;"),
    "hide-offscreen": ("#tl{display:block;", "#tl{display:block;position:fixed;left:-5000px;top:0;"),
    "hide-covered": ("#tl-wrap{position:relative;",
                     "#tl-wrap::after{content:'';position:absolute;inset:0;background:#fff;z-index:3}"
                     "#tl-wrap{position:relative;"),
    "hide-transparent": ("#tl{display:block;", "#tl{display:block;opacity:0;"),
    # The first violation is not marked on opening (run with --first-violation-marked).
    "nomark": ("if(!route())markFirst();", "route();"),
    # Band labels drawn whole, past their band's end (run with --names).
    "uncutlabel": ("cut=fitText(label,roomPx);", "cut=label;"),
}
LABEL_W_PX = 118  # the page's label column
HERE = os.path.dirname(os.path.abspath(__file__))
INTERACT_JS = os.path.join(HERE, "interact.js")
PROBE_JS = os.path.join(HERE, "probe.js")
RECORD_TEXT_JS = os.path.join(HERE, "record_text.js")
INK_MIN_PX = 200
# A screenshot's pixel is the drawing's ink when its channels differ by this much: holds and
# operations are saturated colours; the background, grid and labels are white and greys.
INK_SATURATION_MIN = 80
# The dark red of a shown violation's events (#991b1b), and how far a pixel may be from it
# (sum of channel differences); at least MARK_MIN_PX such pixels mark the first violation.
MARK_RGB = (153, 27, 27)
MARK_DISTANCE_MAX = 45
MARK_MIN_PX = 20
CANVAS_MIN_PX = (200, 60)
DUMP_CONTROLS_GUESS_PX = 143  # a canvas smaller than this is not a timeline one can read
# Bidirectional controls: none may reach what the page shows.
BIDI_CONTROLS = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def find_chromium():
    for name in (os.environ.get("LOCKLAB_CHROMIUM"), "chromium", "chromium-browser"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


class StateReader(html.parser.HTMLParser):
    """Collects the attributes of #state and the text of script#data."""

    def __init__(self):
        super().__init__()
        self.state = None
        self.in_data = False
        self.data = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id") == "state":
            self.state = {k: v for k, v in attrs.items() if k.startswith("data-")}
        self.in_data = tag == "script" and attrs.get("id") == "data"

    def handle_endtag(self, tag):
        if tag == "script":
            self.in_data = False

    def handle_data(self, data):
        if self.in_data:
            self.data.append(data)


def chromium_run(chromium, url, work, extra, window="1400,1000"):
    command = [chromium, "--headless", "--disable-gpu", "--no-sandbox", "--hide-scrollbars",
               "--window-size=" + window, "--force-device-scale-factor=1",
               "--virtual-time-budget=15000",
               "--enable-logging=stderr", "--v=0", "--user-data-dir=" + work + "/profile"]
    command += extra + [url]
    return subprocess.run(command, capture_output=True, text=True, timeout=300)


def render(locklab, run, work, broken, interact=False):
    os.makedirs(work + "/run")
    shutil.copy(os.path.join(run, "history.jsonl"), work + "/run/history.jsonl")
    result = subprocess.run([locklab, "check", work + "/run"], capture_output=True, text=True)
    if result.returncode not in (0, 1):  # 0 valid, 1 invalid; 2 is a harness error
        sys.exit("locklab check failed (%d): %s" % (result.returncode, result.stderr))
    page = work + "/run/timeline.html"
    if broken:
        text = open(page, encoding="utf-8").read()
        old, new = BREAKS[broken]
        if old not in text:
            sys.exit("cannot break the page: %r not found" % old)
        open(page, "w", encoding="utf-8").write(text.replace(old, new, 1))
    if interact:
        text = open(page, encoding="utf-8").read()
        script = "<script>" + open(INTERACT_JS, encoding="utf-8").read() + "</script>"
        if "</body>" not in text:
            sys.exit("cannot inject the interaction script: no </body> in the page")
        open(page, "w", encoding="utf-8").write(text.replace("</body>", script + "</body>", 1))
    return page


def probe_copy(page):
    """A copy of the page with record_text.js at the top of <head> and probe.js at the end of
    <body>; the page itself stays as it is, for the screenshot."""
    text = open(page, encoding="utf-8").read()
    if "<head>" not in text or "</body>" not in text:
        sys.exit("cannot inject the probe: no <head> or </body> in %s" % page)
    record = "<script>" + open(RECORD_TEXT_JS, encoding="utf-8").read() + "</script>"
    probe = "<script>" + open(PROBE_JS, encoding="utf-8").read() + "</script>"
    text = text.replace("<head>", "<head>" + record, 1).replace("</body>", probe + "</body>", 1)
    copy = os.path.join(os.path.dirname(page), "timeline-probe.html")
    open(copy, "w", encoding="utf-8").write(text)
    return copy


def probe_viewport(dom):
    reader = StateReader()
    reader.feed(dom)
    try:
        return json.loads(reader.state["data-probe"])["closed"]["viewport"]["height"]
    except (TypeError, KeyError, ValueError):
        return None


def dump_at_screenshot_viewport(chromium, url, work, window):
    """--dump-dom with the page's viewport the size of the window, as in a --screenshot run.
    Headless Chromium keeps part of the window for browser controls in a --dump-dom run (143 px
    in Chromium 120..156) but shows the page on the whole window when it takes a screenshot;
    the window is made that much taller, measured and corrected once if another version keeps
    another height."""
    width, height = (int(v) for v in window.split(","))
    tall = height + DUMP_CONTROLS_GUESS_PX
    for _ in range(2):
        result = chromium_run(chromium, url, work, ["--dump-dom"], "%d,%d" % (width, tall))
        seen = probe_viewport(result.stdout) if result.returncode == 0 else None
        if seen is None or seen == height:
            break
        tall += height - seen
    return result


def near(a, b, tolerance):
    return abs(a - b) <= tolerance * max(abs(a), abs(b), 1)


def check_interaction(state, data):
    """Judges what interact.js recorded; returns the failed checks."""
    if "data-interact" not in state:
        return ["the interaction script never finished (data-interact missing)"]
    got = json.loads(state["data-interact"])
    errors = [k for k in got if k.endswith("_error")]
    if errors:
        return ["input %s raised %s" % (k, got[k]) for k in errors]
    span = lambda k: got[k]["v1"] - got[k]["v0"]
    failures = []
    def expect(ok, text):
        if not ok:
            failures.append(text)
    expect(near(span("zoom_in_key"), span("start") / 2, 0.02),
           "+ did not halve the view: %d -> %d us" % (span("start"), span("zoom_in_key")))
    expect(near(got["pan_right_key"]["v0"] - got["zoom_in_key"]["v0"], 0.2 * span("zoom_in_key"), 0.05),
           "the right arrow did not pan a fifth of the view: %s -> %s"
           % (got["zoom_in_key"], got["pan_right_key"]))
    expect(near(span("zoom_out_key"), 2 * span("pan_right_key"), 0.02) or
           near(span("zoom_out_key"), span("start"), 0.02),
           "- did not double the view: %d -> %d us" % (span("pan_right_key"), span("zoom_out_key")))
    expect(got["whole_key"]["v0"] == got["start"]["v0"] and got["whole_key"]["v1"] == got["start"]["v1"],
           "0 did not show the whole run: %s vs %s" % (got["whole_key"], got["start"]))
    expect(span("wheel_in") < 0.9 * span("whole_key"),
           "the wheel did not zoom in: %d -> %d us" % (span("whole_key"), span("wheel_in")))
    # The wheel zooms around the pointer: the time under it stays where it was.
    at = lambda k: got[k]["v0"] + (got["wheel_at_px"] - LABEL_W_PX) * span(k) / got["plot_width_px"]
    expect(near(at("wheel_in"), at("whole_key"), 0.01) or abs(at("wheel_in") - at("whole_key")) < 0.01 * span("whole_key"),
           "the wheel did not zoom around the pointer: %d us under it before, %d after"
           % (at("whole_key"), at("wheel_in")))
    # A drag moves the view by what the pointer moved (200 px).
    moved = got["drag_left"]["v0"] - got["wheel_in"]["v0"]
    expect(near(moved, 200 * span("wheel_in") / got["plot_width_px"], 0.05) and
           near(span("drag_left"), span("wheel_in"), 0.01),
           "dragging 200 px left moved the view by %d us, not %d" %
           (moved, 200 * span("wheel_in") / got["plot_width_px"]))
    violations = len(data["viol"])
    if violations:
        expect(got["prev_key"]["selected"] == violations - 1,
               "p with nothing selected selected %d, not the last violation %d"
               % (got["prev_key"]["selected"], violations - 1))
        expect(got["next_key"]["selected"] == 0,
               "n after the last violation selected %d, not 0" % got["next_key"]["selected"])
        want = (got["same_hash_setup"]["selected"] + 1) % violations
        expect(got["same_hash_next"]["selected"] == want and
               span("same_hash_next") < span("same_hash_setup"),
               "n towards the violation already in the fragment did not show it: %s"
               % got["same_hash_next"])
    if data["holds"]["t0"]:
        expect(got["hover"]["tip"].startswith("hold  %s " % got.get("hover_row")),
               "a hover over a hold of %s showed %r" % (got.get("hover_row"), got["hover"]["tip"][:80]))
        expect(got["click"]["details"].startswith("hold"),
               "a click on a hold showed %r" % got["click"]["details"][:80])
    return failures


def on_screen(box, viewport):
    return (box["left"] >= 0 and box["top"] >= 0 and box["right"] <= viewport["width"] and
            box["bottom"] <= viewport["height"])


def canvas_found(measured, when):
    """The canvas's box lies on the screen, is large enough, and hit testing finds the canvas
    at its centre and corners."""
    box, viewport = measured.get("canvas"), measured["viewport"]
    if box is None:
        return ["%s: no canvas #tl in the page" % when]
    failures = []
    width, height = box["right"] - box["left"], box["bottom"] - box["top"]
    if width < CANVAS_MIN_PX[0] or height < CANVAS_MIN_PX[1]:
        failures.append("%s: the canvas is %.0fx%.0f px, not a readable timeline" % (when, width, height))
    if not on_screen(box, viewport):
        failures.append("%s: the canvas's box %s is not within the first screen %dx%d"
                        % (when, box, viewport["width"], viewport["height"]))
    missed = [h for h in measured["canvas_hits"] if h != "ok"]
    if missed:
        failures.append("%s: hit testing at the canvas's centre and corners found %s"
                        % (when, measured["canvas_hits"]))
    return failures


def pixels_in(image, box):
    left, top = max(0, int(box["left"]) + 1), max(0, int(box["top"]) + 1)
    right, bottom = min(image.width, int(box["right"]) - 1), min(image.height, int(box["bottom"]) - 1)
    for y in range(top, bottom):
        row = image.rows[y]
        for x in range(left, right):
            yield row[x]


def check_screenshot(image, probe, window, marked):
    """Judges the screenshot's pixels inside the canvas's box as the probe measured it."""
    width, height = (int(v) for v in window.split(","))
    if (image.width, image.height) != (width, height):
        return ["the screenshot is %dx%d, not the window's %dx%d" % (image.width, image.height, width, height)]
    box = probe["closed"].get("canvas")
    if box is None:
        return []  # canvas_found reports it
    ink = mark = 0
    for r, g, b in pixels_in(image, box):
        if max(r, g, b) - min(r, g, b) >= INK_SATURATION_MIN:
            ink += 1
        if abs(r - MARK_RGB[0]) + abs(g - MARK_RGB[1]) + abs(b - MARK_RGB[2]) <= MARK_DISTANCE_MAX:
            mark += 1
    failures = []
    if ink < INK_MIN_PX:
        failures.append("the screenshot shows %d drawn pixels inside the canvas's box < %d" % (ink, INK_MIN_PX))
    if marked and mark < MARK_MIN_PX:
        failures.append("the screenshot shows %d pixels of the first violation's mark inside the "
                        "canvas's box < %d" % (mark, MARK_MIN_PX))
    return failures


def check_fit(state, data, image, window, marked):
    """The first screen, measured from outside the page (probe.js and the screenshot)."""
    if "data-probe" not in state:
        return ["the probe never finished (data-probe missing)"]
    probe = json.loads(state["data-probe"])
    if "error" in probe:
        return ["probe: " + probe["error"]]
    failures = canvas_found(probe["closed"], "on opening")
    failures += check_screenshot(image, probe, window, marked)
    if data["viol"]:
        opened = probe.get("open")
        if opened is None:
            return failures + ["the run has violations and no collapsible list (#violations summary)"]
        failures += canvas_found(opened, "with the violation list open")
        link = opened.get("link")
        if link is None or not on_screen(link, opened["viewport"]) or opened["link_hits"] != ["ok"]:
            failures.append("with the violation list open, the first violation's link is not "
                            "reachable: box %s, hit testing found %s" % (link, opened.get("link_hits")))
    return failures


def check_names(state, data, dom):
    """No bidirectional control reaches what is shown; band labels stay within their bands."""
    probe = json.loads(state.get("data-probe", "{}"))
    if "drawn" not in probe:
        return ["the probe never finished (data-probe missing)"]
    failures = []
    found = BIDI_CONTROLS.search(dom)
    if found:
        failures.append("the page holds a bidirectional control U+%04X: %r"
                        % (ord(found.group()), dom[max(0, found.start() - 30):found.end() + 30]))
    texts = [d["text"] for d in probe["drawn"] if d["kind"] == "text"]
    raw = [t for t in texts if BIDI_CONTROLS.search(t)]
    if raw:
        failures.append("canvas text with a bidirectional control: %r" % raw[:3])
    if not any("[U+202E]" in t for t in texts):
        failures.append("no canvas text shows the override's code point [U+202E]")
    for order in probe["order"]:
        xs = order["xs"]
        if any(b <= a for a, b in zip(xs, xs[1:])):
            failures.append("the text after a bidirectional control is not left to right: %r at x %s"
                            % (order["text"], xs))
    if not any(len(order["xs"]) >= 2 for order in probe["order"]):
        failures.append("no shown HTML text with a bidirectional control or its code point")
    bars = sorted((d for d in probe["drawn"] if d["kind"] == "bar"), key=lambda d: d["x"])
    for k, fault in enumerate(data["faults"]):
        label = [d for d in probe["drawn"] if d["kind"] == "text" and d["text"].startswith("%d " % (k + 1))
                 and d["y"] > 20]
        bar = [b for b in bars if label and b["x"] <= label[-1]["x"] <= b["x"] + 3]
        if not label or not bar:
            continue  # a band with its number only: nothing to cut
        drawn, end = label[-1], bar[-1]["x"] + bar[-1]["width"]
        if drawn["x"] + drawn["width"] > end + 1:
            failures.append("band %d's label %r ends at %.0f px, past its band's end at %.0f px"
                            % (k + 1, drawn["text"], drawn["x"] + drawn["width"], end))
        full = "%d %s" % (k + 1, fault["label"])
        if not drawn["text"].endswith("…") and not drawn["text"].startswith(full):
            failures.append("band %d's label %r is cut without an ellipsis" % (k + 1, drawn["text"]))
    tips = " ".join(t["tip"] for t in probe["band_tips"])
    for k, fault in enumerate(data["faults"]):
        if fault["label"] not in tips:
            failures.append("no band's tooltip shows fault %d's whole label %r" % (k + 1, fault["label"]))
    return failures


def check_page(dom, stderr, args, image):
    """Returns the list of failed checks (image: the screenshot, with --fits-screen)."""
    fragment = args.fragment
    reader = StateReader()
    reader.feed(dom)
    state = reader.state
    if state is None:
        return ["no #state element in the DOM"]
    failures = []
    if state.get("data-errors"):
        failures.append("script error recorded by the page: " + state["data-errors"])
    console = [line for line in stderr.splitlines() if ":CONSOLE" in line]
    if console:
        failures.append("console messages: " + " / ".join(console[:5]))
    if state.get("data-ready") != "1":
        failures.append("the script never finished drawing (data-ready missing)")
        return failures
    items, ink = int(state.get("data-drawn-items", 0)), int(state.get("data-plot-ink", 0))
    if items <= 0:
        failures.append("no item drawn in the overview")
    if ink < INK_MIN_PX:
        failures.append("plot area blank: %d dark pixels < %d" % (ink, INK_MIN_PX))
    data = json.loads("".join(reader.data))
    if args.fits_screen:
        failures += check_fit(state, data, image, args.window, args.first_violation_marked)
    if args.names:
        failures += check_names(state, data, dom)
    # Each kind of thing the run has is drawn: holds, operations, row labels, fault bands.
    for key, count, what in (("data-drawn-holds", len(data["holds"]["t0"]), "holds"),
                             ("data-drawn-ops", len(data["ops"]["t0"]), "operations"),
                             ("data-row-labels", len(data["rows"]), "row labels"),
                             ("data-bands-labelled", len(data["faults"]), "fault band labels")):
        if count and int(state.get(key, 0)) <= 0:
            failures.append("the run has %d %s and none was drawn (%s)" % (count, what, key))
    if args.interact:
        return failures + check_interaction(state, data)
    v0, v1 = int(state["data-view-start-us"]), int(state["data-view-end-us"])
    if not fragment:
        if v0 > 0 or v1 < data["span"]:
            failures.append("overview is not the whole run: view %d..%d of 0..%d µs"
                            % (v0, v1, data["span"]))
        return failures
    k = int(fragment.split("-")[1])
    if state.get("data-selected") != str(k):
        failures.append("violation %d not selected (data-selected=%s)"
                        % (k, state.get("data-selected")))
    times = dict(zip(data["evt"]["i"], data["evt"]["t"]))
    wanted = [times[e] for e in data["viol"][k]["ev"]]
    outside = [t for t in wanted if not v0 <= t <= v1]
    if not wanted or outside:
        failures.append("violation %d events at %s µs not all in view %d..%d"
                        % (k, wanted, v0, v1))
    if v1 - v0 >= data["span"]:
        failures.append("view %d..%d µs did not zoom in (run: %d µs)" % (v0, v1, data["span"]))
    if int(state.get("data-highlighted", 0)) <= 0:
        failures.append("violation %d: none of its events is outlined" % k)
    return failures


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--locklab", required=True)
    parser.add_argument("--run", help="directory holding history.jsonl")
    parser.add_argument("--synthetic", help="EVENTS:WORKERS, a run made by --synthetic-bin")
    parser.add_argument("--synthetic-bin", help="the locklab-synthetic-run program")
    parser.add_argument("--fits-screen", action="store_true",
                        help="also check, from outside the page, that the canvas is on the first screen")
    parser.add_argument("--first-violation-marked", action="store_true",
                        help="with --fits-screen: the first violation is marked in the screenshot")
    parser.add_argument("--names", action="store_true",
                        help="check bidirectional controls and fault band labels on the canvas")
    parser.add_argument("--window", default="1400,1000", help="the window's W,H in px")
    parser.add_argument("--fragment", default="", help="e.g. violation-0")
    parser.add_argument("--interact", action="store_true",
                        help="drive the page with keys and the pointer and check each effect")
    parser.add_argument("--break", dest="broken", choices=sorted(BREAKS))
    parser.add_argument("--screenshot", help="also save a PNG of the page here")
    args = parser.parse_args()
    chromium = find_chromium()
    if not chromium:
        print("SKIP: chromium not installed (scripts/install-deps.sh installs Debian's chromium)")
        return SKIP
    with tempfile.TemporaryDirectory(prefix="locklab-browser-") as work:
        run = args.run
        if args.synthetic:
            events, workers = args.synthetic.split(":")
            run = work + "/synthetic"
            subprocess.run([args.synthetic_bin, run, events, workers], check=True,
                           capture_output=True)
        if not run:
            sys.exit("--run or --synthetic is required")
        page = render(args.locklab, run, work, args.broken, args.interact)
        fragment = "#" + args.fragment if args.fragment else ""
        measured = probe_copy(page) if args.fits_screen or args.names else page
        if measured == page:
            result = chromium_run(chromium, "file://" + page + fragment, work, ["--dump-dom"],
                                  args.window)
        else:
            result = dump_at_screenshot_viewport(chromium, "file://" + measured + fragment, work,
                                                 args.window)
        if result.returncode != 0:
            print("chromium failed (%d): %s" % (result.returncode, result.stderr[-2000:]))
            return 1
        shot_path = args.screenshot if args.screenshot and not args.broken else None
        if args.fits_screen and not shot_path:
            shot_path = work + "/first-screen.png"
        failures, image = [], None
        if shot_path:
            shot = chromium_run(chromium, "file://" + page + fragment, work,
                                ["--screenshot=" + shot_path], args.window)
            if shot.returncode != 0 or not os.path.exists(shot_path):
                failures.append("screenshot failed: " + shot.stderr[-500:])
            elif args.fits_screen:
                image = png_pixels.read_png(shot_path)
        if args.fits_screen and image is None:
            failures.append("no screenshot to judge the first screen by")
        else:
            failures += check_page(result.stdout, result.stderr, args, image)
    if args.broken:
        if failures:
            print("PASS: the broken page (%s) is caught: %s" % (args.broken, "; ".join(failures)))
            return 0
        print("FAIL: the page broken by %r passed every check" % args.broken)
        return 1
    for failure in failures:
        print("FAIL: " + failure)
    if not failures:
        print("PASS: %s%s" % (run, " #" + args.fragment if args.fragment else ""))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
