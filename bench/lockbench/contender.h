// One contender's loop, the same in a thread and in a child process: from start_ns until
// stop_ns, acquire a lock (waiting with the Provider's backoff, at most until stop_ns), hold it
// hold_ms, release it, then spend gap_ms on other work before the next acquire.
//
// Lock choice: round-robin. Contender c's j-th acquire goes to lock (c + j) mod K, so with K
// locks the contenders start spread over them and each lock sees the same share of requests.
// A wait still open at stop_ns (try_acquire gave up) is reported as the open wait, so the
// longest wait counts the contenders that never got the lock.
// Thread rules: run_contender runs on the calling thread, on its own copies of the Locks.
#pragma once

#include <mongolock/mongolock.h>

#include <cstdint>
#include <vector>

#include "records.h"

namespace lockbench {

struct ContenderPlan {
  int index = 0;
  int64_t hold_ms = 0;
  int64_t gap_ms = 0;
  int64_t start_ns = 0;  // CLOCK_MONOTONIC
  int64_t stop_ns = 0;
};

// Never throws: a library error ends the loop and is reported in ContenderReport::error.
ContenderReport run_contender(std::vector<mongolock::Lock> locks, const ContenderPlan& plan);

}  // namespace lockbench
