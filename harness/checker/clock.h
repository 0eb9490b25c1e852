// The harness's clock for deadlines, timeouts and durations measured inside one process:
// std::chrono::steady_clock in milliseconds since an unspecified start. It never jumps with the
// wall clock (NTP, the skew faults move wall clocks only), so a deadline computed from it holds.
//
// Not a timestamp: its values mean nothing across processes or against calendar time. History
// events carry monotonic_now_ns() (checker/history.h), the CLOCK_MONOTONIC nanoseconds every
// history writer shares; code that needs a date uses std::chrono::system_clock explicitly.
//
// Thread rules: none (a pure read of the clock).
#pragma once

#include <chrono>
#include <cstdint>

namespace locklab {

inline int64_t steady_now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace locklab
