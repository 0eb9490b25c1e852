// The data timeline.html draws, as one compact JSON object embedded in the page: columnar
// arrays of numbers (times in µs from the run's first event, rows and strings by index), so a
// 1M-event history fits in tens of MB and parses in a fraction of a second.
//
// Keys: span (µs), n (events), rows [[name, group]], strs (shared strings), tokBase + tok
// (tokens as offsets from tokBase, which may exceed 2^53; -1 = none), holds and ops (columns,
// sorted by row then start), marks (nemesis and harness events: [t, row, event, text]),
// faults, prim (primary observations), viol (violations: property, message, cause, event
// indices), evt (time and row of every event a violation names).
// Thread rules: pure function; call from any thread.
#pragma once

#include <string>
#include <vector>

#include "checker/checker.h"
#include "checker/history.h"
#include "report/run_model.h"

namespace locklab {

// Every violation of the verdict, in report order (the page numbers them from 0).
std::vector<const Violation*> all_violations(const Verdict& verdict);

// The JSON text; safe to embed in a <script type="application/json"> element ("</" escaped).
std::string render_timeline_data(const std::vector<Event>& history, const Verdict& verdict,
                                 const RunModel& model);

}  // namespace locklab
