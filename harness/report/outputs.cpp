// Writes a run's reports (see report/outputs.h).
#include "report/outputs.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include "report/charts.h"
#include "report/json.h"
#include "report/junit.h"
#include "report/run_model.h"
#include "report/summary.h"
#include "report/timeline.h"

namespace locklab {
namespace {

// Write to a temporary name, then rename: a reader sees the old file or the whole new one.
void write_file(const std::string& path, const std::string& text) {
  std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error("cannot write " + temporary + ": " + std::strerror(errno));
    out << text;
    out.flush();
    if (!out) throw std::runtime_error("cannot write " + temporary + ": " + std::strerror(errno));
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0)
    throw std::runtime_error("cannot rename " + temporary + " to " + path + ": " +
                             std::strerror(errno));
}

}  // namespace

void write_outputs(const std::string& dir, const std::vector<Event>& history,
                   const Verdict& verdict, const OutputOptions& options) {
  write_file(dir + "/verdict.json", verdict_to_json(history, verdict).dump(2) + "\n");
  const RunModel model = RunModel::build(history);
  std::string charts = "\n## Run charts\n\n";
  for (RunChart chart : {RunChart::kAcquisitions, RunChart::kWaiting}) {
    write_file(dir + "/" + run_chart_file(chart), render_run_chart_svg(model, chart));
    charts += "![" + std::string(run_chart_file(chart)) + "](" + run_chart_file(chart) + ")\n";
  }
  write_file(dir + "/summary.md",
             render_summary_md(verdict) + charts +
                 "\nThe whole run, zoomable: [timeline.html](timeline.html)\n");
  write_file(dir + "/timeline.html", render_timeline_html(history, verdict, model));
  if (!options.junit_path.empty())
    write_file(options.junit_path, render_junit_xml(verdict, options.junit_suite_name));
}

}  // namespace locklab
