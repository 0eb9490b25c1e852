// Writes every report of a run into its directory: verdict.json, summary.md (linking the
// charts), timeline.html, the run charts acquisitions.svg and waiting.svg, and junit.xml when a
// path is given. Each file is written to a temporary name and renamed,
// so a reader never sees half a report.
// Thread rules: call from one thread per directory.
#pragma once

#include <string>
#include <vector>

#include "checker/checker.h"
#include "checker/history.h"

namespace locklab {

struct OutputOptions {
  std::string junit_path;  // empty: no junit.xml
  std::string junit_suite_name = "locklab";
};

// Throws std::runtime_error naming the file that could not be written.
void write_outputs(const std::string& dir, const std::vector<Event>& history,
                   const Verdict& verdict, const OutputOptions& options = {});

}  // namespace locklab
