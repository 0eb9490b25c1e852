// summary.md writer (see report/summary.h).
#include "report/summary.h"

#include <map>

#include "checker/index.h"
#include "report/escape.h"

namespace locklab {

std::string render_summary_md(const Verdict& verdict) {
  std::string out = "# locklab verdict: **" + std::string(to_string(verdict.overall)) + "**\n\n";
  // Each outcome counted on its own: unknown is neither a pass nor a failure.
  std::map<std::string, size_t> by_outcome;
  for (const PropertyResult& result : verdict.properties)
    ++by_outcome[std::string(to_string(result.outcome))];
  std::string counts;
  for (Outcome o : {Outcome::kValid, Outcome::kInvalid, Outcome::kUnknown, Outcome::kNotApplicable})
    counts += (counts.empty() ? "" : ", ") + std::to_string(by_outcome[std::string(to_string(o))]) +
              " " + std::string(to_string(o));
  out += "Properties: " + counts + ".\n\n";
  out += "| property | outcome | violations | first violation | cause |\n";
  out += "|---|---|---|---|---|\n";
  for (const PropertyResult& result : verdict.properties) {
    std::string first = result.violations.empty() ? result.note : result.violations[0].message;
    std::string cause = result.violations.empty() ? "" : result.violations[0].cause;
    out += "| " + result.property + " | " + std::string(to_string(result.outcome)) + " | " +
           std::to_string(result.violation_count) + " | " + markdown_cell(first) + " | " +
           markdown_cell(cause) + " |\n";
  }
  const Stats& s = verdict.stats;
  out += "\n" + std::to_string(s.events) + " events over " + ms_text(s.duration_ns) + ": ";
  bool first_type = true;
  for (const auto& [type, count] : s.events_by_type) {
    out += (first_type ? "" : ", ") + std::to_string(count) + " " + type;
    first_type = false;
  }
  out += ". " + std::to_string(s.processes) + " workers, " + std::to_string(s.acquisitions) +
         " acquisitions (" + std::to_string(s.acquisitions_unknown) + " unknown), " +
         std::to_string(s.holds) + " holds, " + std::to_string(s.faults) + " faults.\n";
  return out;
}

}  // namespace locklab
