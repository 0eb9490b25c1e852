// Fault schedules for the glue model (glue_model.h), the run that checks its three properties,
// a seeded search for a counterexample, and a shrinker that removes faults while the same
// finding still shows.
//
// A run: the first election (kFirstElectionMs), the schedule's faults each after its wait,
// then heal: every link restored, and once the last pause, stall, crash or step-down window
// is over, a writable primary must exist within liveness_bound_ms() (else finding E); then
// writes stop, the set settles, and every acknowledged write must be in a majority of logs
// (else finding A). Safety findings (A at rollback, B) are recorded as they happen.
//
// Schedule i of a search is random_schedule(first_seed + i) run with scheduler seed
// first_seed + i, so a (variant, seed) pair names a run exactly.
//
// Thread rules: single-threaded, pure functions of their arguments.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "glue_model.h"

namespace mongosim::repl::glue {

enum class FaultKind {
  kIsolate,
  kIsolatePrimary,
  kSplit,
  kHeal,
  kPause,
  kPausePrimary,
  kCrash,
  kCrashPrimary,
  kStall,
  kClockOffset,
  kStepDown,
};

struct Fault {
  FaultKind kind = FaultKind::kHeal;
  int64_t wait_ms = 0;                      // simulated time before the fault
  int member = 0;                           // for *Primary kinds: used when no member is primary
  uint32_t mask = 1;                        // kSplit
  int64_t duration_ms = 0;                  // pause, crash downtime, stall, step-down window
  ThreadKind thread = ThreadKind::kWriter;  // kStall
  int64_t offset_ms = 0;                    // kClockOffset
};

inline constexpr int64_t kFirstElectionMs = 8000;
inline constexpr int64_t kSettleMs = 5000;
inline constexpr size_t kMaxFaultsPerSchedule = 8;

std::string describe(const Fault& fault);
std::string describe(const std::vector<Fault>& faults);
std::vector<Fault> random_schedule(uint64_t seed, int members);

struct RunResult {
  std::vector<Finding> findings;
  GlueCounters counters;
  std::vector<std::string> trace;  // with trace=true: the run's events, faults included
};

GlueOptions options_for(GlueVariant glue, uint64_t seed);
int64_t liveness_bound_ms(const GlueOptions& options);
RunResult run_schedule(GlueVariant glue, uint64_t seed, const std::vector<Fault>& faults,
                       bool trace = false, uint32_t left_out_fixes = 0);

// Bug A's deposed-primary schedule, scripted (glue_search.cpp says each step). The
// result's findings are empty when no acknowledged write was lost; counters.acked_writes
// counts what the new primary acknowledged while the deposed one was back.
RunResult run_deposed_primary_schedule(GlueVariant glue, uint64_t seed);

struct SearchResult {
  bool found = false;
  int schedules_run = 0;
  uint64_t seed = 0;
  std::vector<Fault> faults;
  Finding finding{};
  GlueCounters totals;  // summed over every schedule run
};

// Runs schedules first_seed, first_seed+1, ... until one shows `wanted` (any finding when
// empty) or `budget` schedules have run.
SearchResult search(GlueVariant glue, std::optional<FindingKind> wanted, int budget,
                    uint64_t first_seed, uint32_t left_out_fixes = 0);

// Greedily drops faults (and shortens waits) while the run still shows a finding of `kind`.
std::vector<Fault> shrink(GlueVariant glue, uint64_t seed, std::vector<Fault> faults,
                          FindingKind kind);

}  // namespace mongosim::repl::glue
