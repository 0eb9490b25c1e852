// Synthetic histories that satisfy every property: the checkers' test and benchmark input.
// A run of sequential holds (each acquired after the previous one was released, tokens
// increasing per lock), with waiting acquires, unknown and failed attempts, extensions, fenced
// writes, counter read-modify-writes, fault windows with heals, a lost hold during an isolation,
// and the harness's start, final reads and end. Tests mutate these histories to inject one
// violation at a time; the generator itself never produces a violation.
// Thread rules: pure function of its parameters; call from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "checker.h"
#include "history.h"

namespace locklab {

struct SyntheticParams {
  uint64_t seed = 1;
  int workers = 3;         // >= 1
  int locks = 1;           // >= 1
  size_t holds = 20;       // number of critical sections
  int faults = 2;          // fault windows (each healed)
  bool fenced = true;      // fenced writes inside holds, plus final reads
  bool counter = true;     // counter read-modify-write inside holds of the first lock
  bool lost_holds = true;  // some holds end with `lost` during an isolation, then are taken over
};

// The bounds the generated history respects; check with these.
CheckConfig synthetic_check_config();

std::vector<Event> make_synthetic_history(const SyntheticParams& params);

}  // namespace locklab
