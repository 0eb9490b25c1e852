// The run charts: acquisitions per second and waiting workers over the whole run, each a
// standalone SVG (written into the run directory, so summary.md and CI artifacts show them)
// that timeline.html also embeds. Fault windows are drawn as labelled bands behind the line.
// Thread rules: pure functions; call from any thread.
#pragma once

#include <string>

#include "report/run_model.h"

namespace locklab {

enum class RunChart { kAcquisitions, kWaiting };

// File name in the run directory: "acquisitions.svg", "waiting.svg".
const char* run_chart_file(RunChart chart);
// A complete SVG document (with its xmlns), no script, no external reference.
std::string render_run_chart_svg(const RunModel& model, RunChart chart);

}  // namespace locklab
