// Shrinking a failing case to a smallest one that still fails the same way, on a runner whose
// failures are not deterministic (timing decides many of them).
//
// The loop is greedy over the Scenario: from the current failing scenario, try the candidates of
// shrink_candidates() in order (biggest cut first); the first that fails accepts (one shrink
// step) and the search restarts from it; when none fails, the current one is the result (a local
// minimum: no single candidate step from it fails). A candidate counts as failing when one of
// `reruns` runs of it (same seed) shows the original's finding (matches(), with the key
// finding_key gave the original, or `key` when given); the result is then
// confirmed by `confirm_runs` more runs, and the result says how many of them failed.
//
// Invariants: every candidate parses (it went through scenario_to_toml and parse_scenario) and
// is strictly smaller than its parent by size_rank(); so the loop ends, at the latest after
// `max_steps` accepted steps or when `budget_ms` has passed (the current scenario is then the
// result, marked not minimal).
// Thread rules: whatever the runner needs (the real one: the main thread).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "explore/case_outcome.h"
#include "run/scenario.h"

namespace locklab {

// How big a scenario is, for reports and for ordering: compared lexicographically in this order.
struct ScenarioSize {
  int faults = 0;
  int workers = 0;
  int members = 0;
  int locks = 0;
  int64_t fault_ms = 0;  // total fault window time
  int64_t run_ms = 0;    // workload.duration_ms
  int64_t at_ms = 0;     // total of the windows' start times
  auto operator<=>(const ScenarioSize&) const = default;
};

ScenarioSize size_of(const Scenario& scenario);
std::string describe(const ScenarioSize& size);

// Smaller variants of `s`, each valid and each smaller than `s`: drop one fault; one worker
// fewer; two members fewer; one lock fewer; a fault's window halved; the run
// shortened to what its windows need. Windows keep their start: an earlier start is not a smaller
// experiment, and a fault moved before the workers hold a lock tests less. Fault targets naming a
// worker or member that a candidate removes become "random".
std::vector<Scenario> shrink_candidates(const Scenario& s);

struct ShrinkOptions {
  int reruns = 2;              // K: a candidate fails when one of K runs fails
  int confirm_runs = 5;        // N: runs of the result that confirm it
  int max_steps = 100;         // accepted steps at most
  int64_t budget_ms = 0;       // 0: no time bound
  std::function<bool()> stop;  // true: stop at once (Ctrl-C); may be empty
  // Run directory for a run: (step, candidate index, attempt) -> path.
  std::function<std::string(int, int, int)> run_dir;
};

struct ShrinkResult {
  Scenario minimal;
  CaseOutcome failing;  // a failing run of `minimal` (its run directory, if the runner wrote one)
  int steps = 0;        // accepted shrink steps
  int candidates = 0;   // candidates tried
  int runs = 0;         // runs made while shrinking (not counting the confirmation)
  int confirm_failed = 0;
  int confirm_runs = 0;
  bool complete = true;              // false: stopped by the budget, max_steps or stop
  CaseOutcome last_confirm_failure;  // a failing confirmation run (run_dir empty if none failed)
};

ShrinkResult shrink(const Scenario& failing, const CaseOutcome& original, uint64_t seed,
                    const CaseRunner& runner, const ShrinkOptions& options,
                    const std::string& key = "");

}  // namespace locklab
