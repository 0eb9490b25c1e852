// summary.md: the verdict as a readable Markdown table (property, outcome, violations, first
// violation), followed by the run's statistics. The same table is what `locklab run` and
// `locklab check` print on stdout.
// Thread rules: pure function; call from any thread.
#pragma once

#include <string>

#include "checker/checker.h"

namespace locklab {

std::string render_summary_md(const Verdict& verdict);

}  // namespace locklab
