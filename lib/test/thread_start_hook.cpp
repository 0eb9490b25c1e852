#include "thread_start_hook.h"

#include "hold_scheduler.h"

namespace mongolock::detail {

std::atomic<int> failing_thread_starts_for_testing{0};

}  // namespace mongolock::detail

namespace mongolock::test {

void fail_next_thread_starts(int count) {
  detail::failing_thread_starts_for_testing = count;
}

}  // namespace mongolock::test
