#include "base/change_signal.h"

namespace mongosim {

uint64_t ChangeSignal::generation() const {
  std::lock_guard lock(mu_);
  return generation_;
}

void ChangeSignal::notify() {
  {
    std::lock_guard lock(mu_);
    ++generation_;
  }
  cv_.notify_all();
}

void ChangeSignal::shutdown() {
  {
    std::lock_guard lock(mu_);
    shutting_down_ = true;
    ++generation_;
  }
  cv_.notify_all();
}

bool ChangeSignal::shutting_down() const {
  std::lock_guard lock(mu_);
  return shutting_down_;
}

bool ChangeSignal::wait_for_change(uint64_t seen, Clock::time_point deadline) const {
  std::unique_lock lock(mu_);
  ++waiters_;
  bool changed =
      cv_.wait_until(lock, deadline, [&] { return generation_ != seen || shutting_down_; });
  --waiters_;
  return changed;
}

int64_t ChangeSignal::waiters() const {
  std::lock_guard lock(mu_);
  return waiters_;
}

}  // namespace mongosim
