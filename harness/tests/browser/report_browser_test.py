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
  - with --fits-screen, the whole timeline canvas (every row) lies within the first screen.
--synthetic EVENTS:WORKERS checks a run made by locklab-synthetic-run (--synthetic-bin) instead.
--break MODE breaks the page first (a syntax error, an exception while drawing, or drawing
nothing) and passes only when the checks above catch it: the proof that they can fail.
--interact drives the page with keys, the wheel, a drag, a hover and a click (interact.js,
injected into a copy of the page) and checks what each did: + and - halve and double the view,
the right arrow pans, 0 shows the whole run, the wheel zooms in, a drag pans, p with nothing
selected selects the last violation and n the next, a hover over a hold shows it in the tip and
a click shows it in the details.
--screenshot PATH also saves what the browser shows.
Exit codes: 0 pass, 1 fail, 77 skipped (no chromium here).
What it leaves out: the operating system's input path (--interact dispatches DOM events, so
default actions such as scrolling do not happen), other browsers, and window sizes other than
the one given.
"""
import argparse
import html.parser
import json
import os
import shutil
import subprocess
import sys
import tempfile

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
}
LABEL_W_PX = 118  # the page's label column
INTERACT_JS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "interact.js")
INK_MIN_PX = 200


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


def chromium_run(chromium, url, work, extra):
    command = [chromium, "--headless", "--disable-gpu", "--no-sandbox", "--hide-scrollbars",
               "--window-size=1400,1000", "--virtual-time-budget=15000",
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


def check_fit(state):
    bottom, height = state.get("data-canvas-bottom-px"), state.get("data-viewport-height-px")
    if bottom is None or height is None:
        return ["the page did not report its layout"]
    if int(bottom) > int(height):
        return ["timeline canvas ends at %s px, below the first screen (%s px)" % (bottom, height)]
    return []


def check_page(dom, stderr, fragment, fits_screen=False, interact=False):
    """Returns the list of failed checks."""
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
    if fits_screen:
        failures += check_fit(state)
    data = json.loads("".join(reader.data))
    # Each kind of thing the run has is drawn: holds, operations, row labels, fault bands.
    for key, count, what in (("data-drawn-holds", len(data["holds"]["t0"]), "holds"),
                             ("data-drawn-ops", len(data["ops"]["t0"]), "operations"),
                             ("data-row-labels", len(data["rows"]), "row labels"),
                             ("data-bands-labelled", len(data["faults"]), "fault band labels")):
        if count and int(state.get(key, 0)) <= 0:
            failures.append("the run has %d %s and none was drawn (%s)" % (count, what, key))
    if interact:
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
                        help="also check that every row is on the first screen")
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
        url = "file://" + page + ("#" + args.fragment if args.fragment else "")
        result = chromium_run(chromium, url, work, ["--dump-dom"])
        if result.returncode != 0:
            print("chromium failed (%d): %s" % (result.returncode, result.stderr[-2000:]))
            return 1
        failures = check_page(result.stdout, result.stderr, args.fragment, args.fits_screen,
                              args.interact)
        if args.screenshot and not args.broken:
            shot = chromium_run(chromium, url, work, ["--screenshot=" + args.screenshot])
            if shot.returncode != 0 or not os.path.exists(args.screenshot):
                failures.append("screenshot failed: " + shot.stderr[-500:])
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
