// Backoff distributions: random is uniform in [min, max]; adaptive is min*1.5^n +-20 %, capped,
// reset on success; decorrelated is min(max, uniform(min, 3 * previous sleep)), previous = min
// at the start and after a reset.
// The model leaves out: the waiting loop that sleeps (acquire_loop), so nothing here says that
// the sleeps are taken; the shape of the distributions beyond their bounds (uniformity is only
// checked in that every value of a small range comes up).
#include "backoff.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

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

RC_GTEST_PROP(Backoff, DecorrelatedDrawsBetweenMinimumAndThreeTimesThePreviousSleep, ()) {
  const Range range = *ranges();
  BackoffPolicy policy(Backoff::kDecorrelated, range.min_ms, range.max_ms,
                       *rc::gen::arbitrary<uint64_t>());
  const int steps = *rc::gen::inRange(1, 60);
  int64_t previous = range.min_ms;
  for (int n = 0; n < steps; ++n) {
    const int64_t sleep = policy.next_sleep_ms();
    RC_ASSERT(sleep >= range.min_ms);
    RC_ASSERT(sleep <= std::min(range.max_ms, 3 * previous));
    previous = sleep;
  }
}

RC_GTEST_PROP(Backoff, DecorrelatedRestartsFromTheMinimumAfterReset, ()) {
  const Range range = *ranges();
  BackoffPolicy policy(Backoff::kDecorrelated, range.min_ms, range.max_ms,
                       *rc::gen::arbitrary<uint64_t>());
  const int busy = *rc::gen::inRange(1, 20);
  for (int i = 0; i < busy; ++i) policy.next_sleep_ms();
  policy.reset();
  const int64_t sleep = policy.next_sleep_ms();
  RC_ASSERT(sleep >= range.min_ms);
  RC_ASSERT(sleep <= std::min(range.max_ms, 3 * range.min_ms));
}

// Uniform draws over a small range show every value in a few thousand draws (the chance that
// one of 10 values never comes up in 5000 draws is below 1e-200): the draws span the range, not
// one end of it.
TEST(Backoff, RandomAndDecorrelatedSpanTheirRanges) {
  BackoffPolicy random(Backoff::kRandom, 5, 14, 42);
  std::set<int64_t> seen;
  for (int i = 0; i < 5000; ++i) seen.insert(random.next_sleep_ms());
  EXPECT_EQ(seen.size(), 10U);
  EXPECT_EQ(*seen.begin(), 5);
  EXPECT_EQ(*seen.rbegin(), 14);
  // Decorrelated from min 5: the first draw is in [5, 15], capped at 14.
  std::set<int64_t> first_draws;
  for (uint64_t seed = 0; seed < 5000; ++seed) {
    BackoffPolicy decorrelated(Backoff::kDecorrelated, 5, 14, seed);
    first_draws.insert(decorrelated.next_sleep_ms());
  }
  EXPECT_EQ(first_draws.size(), 10U);
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
