#include "backoff.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace mongolock::detail {

BackoffPolicy::BackoffPolicy(Backoff kind, int64_t min_ms, int64_t max_ms, uint64_t seed)
    : kind_(kind), min_ms_(min_ms), max_ms_(max_ms), previous_ms_(min_ms), random_(seed) {
  assert(min_ms >= 1 && min_ms <= max_ms);
}

double BackoffPolicy::adaptive_base_ms(int64_t min_ms, int64_t max_ms, int n) {
  const int exponent = std::clamp(n, 0, kAdaptiveExponentMax);
  const double base = static_cast<double>(min_ms) * std::pow(1.5, exponent);
  return std::min(base, static_cast<double>(max_ms));
}

int64_t BackoffPolicy::next_sleep_ms() {
  int64_t sleep_ms = 0;
  if (kind_ == Backoff::kRandom) {
    std::uniform_int_distribution<int64_t> uniform(min_ms_, max_ms_);
    sleep_ms = uniform(random_);
  } else if (kind_ == Backoff::kDecorrelated) {
    // previous_ms_ <= max_ms_ <= 60'000 (Options), so 3 * previous cannot overflow.
    std::uniform_int_distribution<int64_t> uniform(min_ms_, 3 * previous_ms_);
    sleep_ms = std::min(uniform(random_), max_ms_);
  } else {
    const double base = adaptive_base_ms(min_ms_, max_ms_, busy_attempts_);
    std::uniform_real_distribution<double> jitter(-0.2, 0.2);
    sleep_ms = std::llround(base * (1.0 + jitter(random_)));
  }
  if (busy_attempts_ < kAdaptiveExponentMax) ++busy_attempts_;
  sleep_ms = std::clamp(sleep_ms, min_ms_, max_ms_);
  previous_ms_ = sleep_ms;
  assert(sleep_ms >= min_ms_ && sleep_ms <= max_ms_);
  return sleep_ms;
}

}  // namespace mongolock::detail
