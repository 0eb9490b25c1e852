// What one exploration case gave, and the finding it makes (if any).
//
// A case is a scenario and a seed. Its outcome is one of: valid; invalid (the violated
// properties, named); member died (a member process ended on its own: a signal, an assertion, an
// exit nobody asked for — a finding of its own kind, about the member program); unknown (the
// history could not decide: not a finding, counted); harness error (the run could not be
// completed or judged: reported and counted, never a finding); not run (the client is
// unavailable here). Plain data; any thread.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "run/scenario.h"

namespace locklab {

enum class CaseVerdict { kValid, kInvalid, kMemberDied, kUnknown, kHarnessError, kNotRun };

std::string_view to_string(CaseVerdict verdict);

struct CaseOutcome {
  CaseVerdict verdict = CaseVerdict::kHarnessError;
  std::vector<std::string> violated;  // kInvalid: the violated properties, in checker order
  std::string detail;                 // kMemberDied: which member and how; errors: why
  std::string run_dir;                // "" for runners that write nothing
  double seconds = 0;                 // wall time of the case
};

// The finding a case makes, as a stable key: "member-died", or the first violated property in
// the checker's order ("exclusion.fenced"), or "" when the outcome is no finding. A run that
// violates more properties makes that finding too (matches()): which others come with it
// depends on timing.
std::string finding_key(const CaseOutcome& outcome);
// Whether the outcome shows the finding `key`: a member's death, or `key` among the violated.
bool matches(const CaseOutcome& outcome, const std::string& key);

// Runs one case: the scenario with this seed, its run directory at `run_dir` (the runner creates
// it). Real runners run it through `locklab run`'s path; tests pass fakes.
using CaseRunner =
    std::function<CaseOutcome(const Scenario& scenario, uint64_t seed, const std::string& run_dir)>;

}  // namespace locklab
