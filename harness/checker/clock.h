// The harness's clocks. steady_now_ms() is the clock for deadlines, timeouts and durations measured
// inside one process: std::chrono::steady_clock in milliseconds since an unspecified start. It
// never jumps with the wall clock (NTP, the skew faults move wall clocks only), so a deadline
// computed from it holds.
//
// Not a timestamp: its values mean nothing across processes or against calendar time. History
// events carry monotonic_now_ns() (checker/history.h), the CLOCK_MONOTONIC nanoseconds every
// history writer shares; code that needs a date uses wall_now_ms() below.
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

// The wall clock in ms since the Unix epoch (std::chrono::system_clock): a date, for what a
// timestamp must mean across processes or against a server's clock (a seed lock's expiry
// written from the client's clock; a test bracketing a member's $$NOW). The clock-skew-worker
// and clock-jump-worker faults move it in a worker; NTP may step it anywhere.
inline int64_t wall_now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace locklab
