// Synthetic histories that satisfy every property: the checkers' test and benchmark input.
// A run of sequential holds (each acquired after the previous one was released, tokens
// increasing per lock), with waiting acquires (some spanning other grants), unknown and failed
// attempts, extensions, fenced writes and counter read-modify-writes (some indeterminate, applied
// or not), fault windows with heals, a lost hold during an isolation, `lost-ignored` (v2) or
// writes after `lost` (v1), late `lost` of an earlier token, workers stopped by the harness with
// acquires pending, and the harness's start, final reads (unless left out) and end. Tests mutate
// these histories to inject one violation at a time; the generator itself never produces a
// violation (left-out final reads make the resources unknown, not invalid).
// Thread rules: pure function of its parameters; call from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "checker/checker.h"
#include "checker/history.h"

namespace locklab {

struct SyntheticParams {
  uint64_t seed = 1;
  int workers = 3;          // >= 1
  int locks = 1;            // >= 1
  size_t holds = 20;        // number of critical sections
  int faults = 2;           // fault windows (each healed)
  bool fenced = true;       // fenced writes inside holds, plus final reads
  bool counter = true;      // counter read-modify-write inside holds of the first lock
  bool lost_holds = true;   // some holds end with `lost` during an isolation, then are taken over
  int vocabulary = 2;       // 1: the v1 history vocabulary; 2: v2 (write ids, final write lists)
  bool final_reads = true;  // false: no final read (resources are unknown)
  bool stop_in_bound = false;  // the harness stops the workers inside the last liveness bound
};

// The bounds the generated history respects; check with these.
CheckConfig synthetic_check_config();

std::vector<Event> make_synthetic_history(const SyntheticParams& params);

}  // namespace locklab
