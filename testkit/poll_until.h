// Waiting in tests: every wait is a condition polled until a deadline, never a sleep standing in
// for synchronisation and never an assertion on elapsed time.
//
//   ASSERT_TRUE(poll_until(after(std::chrono::seconds(15)), [&] { return done(); }));
//
// Thread rules: none (no shared state); `done` runs on the calling thread.
#pragma once

#include <chrono>
#include <functional>

namespace locklab::testkit {

using Clock = std::chrono::steady_clock;
using Deadline = Clock::time_point;

// Deadlines of the kit's own waits.
inline constexpr std::chrono::milliseconds kPollInterval{20};

// The deadline `timeout` from now.
inline Deadline after(std::chrono::milliseconds timeout) {
  return Clock::now() + timeout;
}

// Calls `done` every `interval` until it returns true (true) or the deadline has passed (false).
// `done` is always asked at least once, and once more after the deadline has passed, so a
// condition that became true during the last interval is not reported as a timeout.
bool poll_until(Deadline deadline, const std::function<bool()>& done,
                std::chrono::milliseconds interval = kPollInterval);

}  // namespace locklab::testkit
