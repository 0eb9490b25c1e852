// timeline.html: the run report a person opens first. One self-contained page (no network, no
// external script): the verdict table at the top, linking to a list of every violation
// (collapsed, so the timeline stays on the first screen; the first violation on one line); a
// canvas timeline that opens on the whole run with the first violation's events marked, its
// height fitted to the window, with rows in natural order grouped as workers,
// members, nemesis and harness, fault windows as labelled bands across every row, the
// primaries the harness observed, holds coloured by token and operations by kind; band labels
// cut to their band's width (whole in the band's tooltip); names shown with their
// bidirectional controls as code points (report/escape.h); zoom and
// pan by wheel, drag and keyboard down to single operations; a hover or click shows an
// item's events; a violation link (#violation-N) zooms to its evidence and outlines it; and
// the run charts (report/charts.h) inline. The data is embedded as compact JSON
// (report/timeline_data.h), so a 1M-event history stays usable.
// Thread rules: pure function; call from any thread.
#pragma once

#include <string>
#include <vector>

#include "checker/checker.h"
#include "checker/history.h"
#include "report/run_model.h"

namespace locklab {

std::string render_timeline_html(const std::vector<Event>& history, const Verdict& verdict);
// The same, reusing a model already built (the charts written beside it use it too).
std::string render_timeline_html(const std::vector<Event>& history, const Verdict& verdict,
                                 const RunModel& model);

}  // namespace locklab
