// CLOCK_MONOTONIC in nanoseconds (monotonic_now_ns, the histories' clock): the one clock every
// lockbench timestamp is taken on. Unlike std::chrono::steady_clock, whose epoch the standard
// leaves open, it is named because records from different processes on one machine are compared
// with each other.
// Thread rules: none (a system call).
#pragma once

#include <errno.h>
#include <time.h>

#include <cstdint>

#include "checker/history.h"

namespace lockbench {

inline constexpr int64_t kNsPerMs = 1'000'000;
inline constexpr int64_t kNsPerS = 1'000'000'000;

// CLOCK_MONOTONIC in nanoseconds is the histories' clock too (checker/history.h).
using locklab::monotonic_now_ns;

// Sleeps until monotonic_now_ns() >= at_ns (returns at once when that has passed).
inline void sleep_until_ns(int64_t at_ns) {
  timespec ts{static_cast<time_t>(at_ns / kNsPerS), static_cast<long>(at_ns % kNsPerS)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

}  // namespace lockbench
