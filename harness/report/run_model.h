// What the run reports draw, derived once from a history: the rows of the timeline in natural
// order and grouped (workers, members, nemesis, harness), the fault windows read from both
// history vocabularies, the primaries the harness observed, and the run-chart series.
//
// Fault windows: v1 opens a window with `<fault> info` and closes it with `heal info`; v2
// opens it with `<fault> invoke` (intent), marks it in force with `<fault> ok`, and closes it
// with `heal ok` (healed) or leaves it open for good with `heal fail`; `<fault> fail` with
// value.undone closes it at once. Both are keyed by value.window.
// Primaries: nothing records the primary over time; the model keeps every observation the
// harness made of it (a v2 fault's value.roles, a step-down's value.primary, a divergence's
// old/new primary, a v2 target chosen by value.selection "primary").
//
// Invariants: rows are unique; every window has start_ns <= end_ns within the run; series
// buckets cover [first_ns, last_ns].
// Thread rules: pure function; call from any thread.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "checker/history.h"

namespace locklab {

// "w2" < "w10": digit runs compare by value, the rest by character.
bool natural_less(const std::string& a, const std::string& b);

struct ReportRow {
  std::string name;
  std::string group;  // "workers" | "members" | "nemesis" | "harness"
};

struct ReportWindow {
  std::string fault;
  std::string window;  // value.window as text
  std::vector<std::string> targets;
  int64_t start_ns = 0;     // intent (v2 invoke) or start (v1 info)
  int64_t in_force_ns = 0;  // v2 `ok` time; v1: the start
  int64_t end_ns = 0;       // heal completion, undone failure, or the run's end
  std::string status;       // "healed", "heal failed: ...", "never healed", "failed, undone"
  std::vector<std::string> errors;
  std::vector<size_t> events;  // every nemesis event of the window, ascending

  std::string label() const;  // "pause-worker w2"
};

struct PrimaryObservation {
  int64_t t_ns = 0;
  std::string member;  // "m1"
  std::string source;  // what showed it: "step-down", "roles of isolate-member", ...
  size_t event = 0;
};

struct ChartSeries {
  int64_t bucket_ns = 0;
  std::vector<double> acquisitions_per_s;  // acquire ok per bucket, per second
  std::vector<double> waiting_workers;     // time-weighted mean of pending acquires
};

struct RunModel {
  int64_t first_ns = 0;
  int64_t last_ns = 0;
  std::vector<ReportRow> rows;
  std::map<std::string, size_t> row_of;  // name -> index into rows
  std::vector<ReportWindow> windows;     // in order of start
  std::vector<PrimaryObservation> primaries;
  ChartSeries series;

  static RunModel build(const std::vector<Event>& history);
  // Time since the run's first event, saturated to [0, INT64_MAX]: timestamps may be anywhere
  // in int64, so their difference is taken unsigned (no signed overflow).
  int64_t offset_ns(int64_t t_ns) const {
    if (t_ns <= first_ns) return 0;
    const uint64_t offset = static_cast<uint64_t>(t_ns) - static_cast<uint64_t>(first_ns);
    return offset > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(offset);
  }
  int64_t span_ns() const { return std::max<int64_t>(1, offset_ns(last_ns)); }
};

}  // namespace locklab
