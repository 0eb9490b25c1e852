#include "contender.h"

#include <sys/prctl.h>

#include <cassert>
#include <chrono>
#include <exception>
#include <optional>
#include <thread>

#include "clock.h"

namespace lockbench {
namespace {

// try_acquire's timeout: what is left of the cell, at least 1 ms (0 would mean one attempt).
std::chrono::milliseconds remaining(int64_t now_ns, int64_t stop_ns) {
  const int64_t left_ms = (stop_ns - now_ns + kNsPerMs - 1) / kNsPerMs;
  return std::chrono::milliseconds(std::max<int64_t>(1, left_ms));
}

// One acquire-hold-release; false when the cell ended during the wait.
bool one_hold(mongolock::Lock& lock, int32_t lock_index, const ContenderPlan& plan,
              ContenderReport& report) {
  Hold hold;
  hold.lock = lock_index;
  hold.asked_ns = monotonic_now_ns();
  std::optional<mongolock::Handle> handle =
      lock.try_acquire(remaining(hold.asked_ns, plan.stop_ns));
  if (!handle) {
    report.open_wait = OpenWait{lock_index, hold.asked_ns, monotonic_now_ns()};
    return false;
  }
  hold.acquired_ns = monotonic_now_ns();
  ++report.acquisitions;
  hold.token = handle->fencing_token();
  // Until hold_ms after the grant, on an absolute clock: the bookkeeping above is part of it.
  if (plan.hold_ms > 0) sleep_until_ns(hold.acquired_ns + plan.hold_ms * kNsPerMs);
  hold.release_asked_ns = monotonic_now_ns();
  const bool released = handle->release();
  hold.released_ns = monotonic_now_ns();
  if (!released) {
    report.error = "release of " + lock.name() + " (token " + std::to_string(hold.token) +
                   ") did not remove the hold";
  } else {
    ++report.releases;
  }
  report.holds.push_back(hold);
  return report.error.empty();
}

}  // namespace

ContenderReport run_contender(std::vector<mongolock::Lock> locks, const ContenderPlan& plan) {
  assert(!locks.empty());
  ContenderReport report;
  // A hold of 1 ms sleeps 1 ms, not 1 ms plus the thread's default 50 us timer slack (the FIFO
  // bound counts hold_ms per turn). It applies to every sleep of this thread (the gap, a
  // strategy's backoff, a notify wait) and to threads it starts (a Provider's stream), for every
  // strategy alike.
  (void)prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  sleep_until_ns(plan.start_ns);
  try {
    for (size_t j = 0; monotonic_now_ns() < plan.stop_ns; ++j) {
      const auto lock_index =
          static_cast<int32_t>((static_cast<size_t>(plan.index) + j) % locks.size());
      if (!one_hold(locks[static_cast<size_t>(lock_index)], lock_index, plan, report)) break;
      if (plan.gap_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(plan.gap_ms));
    }
  } catch (const std::exception& e) {
    report.error = std::string("contender ") + std::to_string(plan.index) + ": " + e.what();
  }
  return report;
}

}  // namespace lockbench
