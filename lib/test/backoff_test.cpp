// Backoff distributions: random is uniform in [min, max]; adaptive is min*1.5^n +-20 %, capped,
// reset on success.
#include "backoff.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>

namespace mongolock::detail {
namespace {

struct Range {
  int64_t min_ms;
  int64_t max_ms;
};

rc::Gen<Range> ranges() {
  return rc::gen::mapcat(rc::gen::inRange<int64_t>(1, 5'000), [](int64_t low) {
    return rc::gen::map(rc::gen::inRange<int64_t>(low, 60'001), [low](int64_t high) {
      return Range{low, high};
    });
  });
}

RC_GTEST_PROP(Backoff, RandomStaysInRange, ()) {
  const Range range = *ranges();
  BackoffPolicy policy(Backoff::kRandom, range.min_ms, range.max_ms,
                       *rc::gen::arbitrary<uint64_t>());
  for (int i = 0; i < 50; ++i) {
    const int64_t sleep = policy.next_sleep_ms();
    RC_ASSERT(sleep >= range.min_ms);
    RC_ASSERT(sleep <= range.max_ms);
  }
}

RC_GTEST_PROP(Backoff, AdaptiveIsWithinTwentyPercentOfTheCappedExponential, ()) {
  const Range range = *ranges();
  BackoffPolicy policy(Backoff::kAdaptive, range.min_ms, range.max_ms,
                       *rc::gen::arbitrary<uint64_t>());
  const int steps = *rc::gen::inRange(1, 30);
  for (int n = 0; n < steps; ++n) {
    const double base =
        std::min(range.min_ms * std::pow(1.5, std::min(n, 10)), static_cast<double>(range.max_ms));
    const int64_t sleep = policy.next_sleep_ms();
    RC_ASSERT(sleep >= range.min_ms);
    RC_ASSERT(sleep <= range.max_ms);
    RC_ASSERT(static_cast<double>(sleep) >= std::floor(base * 0.8) - 1);
    RC_ASSERT(static_cast<double>(sleep) <= std::ceil(base * 1.2) + 1);
  }
}

RC_GTEST_PROP(Backoff, AdaptiveResetsToMinimumAfterSuccess, ()) {
  const Range range = *ranges();
  BackoffPolicy policy(Backoff::kAdaptive, range.min_ms, range.max_ms,
                       *rc::gen::arbitrary<uint64_t>());
  const int busy = *rc::gen::inRange(1, 20);
  for (int i = 0; i < busy; ++i) policy.next_sleep_ms();
  policy.reset();
  RC_ASSERT(policy.busy_attempts() == 0);
  const int64_t sleep = policy.next_sleep_ms();
  RC_ASSERT(static_cast<double>(sleep) <= std::ceil(range.min_ms * 1.2) + 1);
}

TEST(Backoff, AdaptiveGrowsThenCaps) {
  EXPECT_DOUBLE_EQ(BackoffPolicy::adaptive_base_ms(10, 800, 0), 10.0);
  EXPECT_DOUBLE_EQ(BackoffPolicy::adaptive_base_ms(10, 800, 1), 15.0);
  EXPECT_DOUBLE_EQ(BackoffPolicy::adaptive_base_ms(10, 800, 3), 33.75);
  EXPECT_DOUBLE_EQ(BackoffPolicy::adaptive_base_ms(10, 800, 30), 576.650390625);  // 1.5^10 cap
  EXPECT_DOUBLE_EQ(BackoffPolicy::adaptive_base_ms(10, 100, 10), 100.0);
}

}  // namespace
}  // namespace mongolock::detail
