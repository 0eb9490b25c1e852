// BackoffPolicy: how long a waiting acquire sleeps after each attempt that found the lock busy.
//
// kRandom:   uniform in [min_ms, max_ms].
// kAdaptive: base = min_ms * 1.5^n (n = busy attempts so far in this wait, capped at 10),
//            clamped to max_ms, then +-20 % uniform jitter, then clamped to [min_ms, max_ms].
//            reset() (a success) sets n back to 0.
// kDecorrelated: uniform in [min_ms, 3 * previous] (previous = the last sleep returned,
//            min_ms before the first), then capped at max_ms. reset() sets previous back to
//            min_ms.
// Invariant: every returned sleep is in [min_ms, max_ms].
// Thread rules: one instance per waiting call; not shared.
#pragma once

#include <cstdint>
#include <random>

#include "mongolock/options.h"

namespace mongolock::detail {

inline constexpr int kAdaptiveExponentMax = 10;

class BackoffPolicy {
 public:
  BackoffPolicy(Backoff kind, int64_t min_ms, int64_t max_ms, uint64_t seed);

  // The sleep after one more busy attempt.
  int64_t next_sleep_ms();
  void reset() {
    busy_attempts_ = 0;
    previous_ms_ = min_ms_;
  }
  int busy_attempts() const { return busy_attempts_; }

  // The un-jittered adaptive sleep after n busy attempts (for tests and documentation).
  static double adaptive_base_ms(int64_t min_ms, int64_t max_ms, int n);

 private:
  Backoff kind_;
  int64_t min_ms_;
  int64_t max_ms_;
  int busy_attempts_ = 0;
  int64_t previous_ms_;  // kDecorrelated: the last sleep returned (min_ms_ before the first)
  std::mt19937_64 random_;
};

}  // namespace mongolock::detail
