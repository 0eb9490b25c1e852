#include "poll_until.h"

#include <cassert>
#include <thread>

namespace locklab::testkit {

bool poll_until(Deadline deadline, const std::function<bool()>& done,
                std::chrono::milliseconds interval) {
  assert(interval.count() > 0);
  for (;;) {
    const bool expired = Clock::now() >= deadline;
    if (done()) return true;
    if (expired) return false;
    std::this_thread::sleep_for(interval);
  }
}

}  // namespace locklab::testkit
