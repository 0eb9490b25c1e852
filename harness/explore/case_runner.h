// The real case runner: one case through the very function `locklab run` calls (run_scenario),
// in a forked child of the exploring process, so that each case is a fresh run with its own
// prefix ("ll-<child pid>"), its own sandbox, janitor and cleanup, and nothing a case leaves in
// memory reaches the next.
//
// Files: the scenario is written to <run_dir>.toml (run_scenario copies it into the run directory
// as scenario.toml); the child's stdout and stderr go to <run_dir>/locklab.log; the child's pid
// to <run_dir>/pid (so a caller can check that nothing with its prefix remains).
// The outcome is read from the exit code, verdict.json, member-died.txt and worker-problems.txt.
//
// Thread rules: the explorer's main thread, with no other threads alive (it forks). A SIGINT
// reaches the child too (same process group): the child cleans up and ends, and run_case
// returns what it left (a harness error "interrupted").
#pragma once

#include <string>

#include "explore/case_outcome.h"

namespace locklab {

CaseOutcome run_case(const Scenario& scenario, uint64_t seed, const std::string& run_dir);

// Reads a finished run directory and exit code into an outcome (exposed for tests).
CaseOutcome classify_run(const std::string& run_dir, int exit_code);

}  // namespace locklab
