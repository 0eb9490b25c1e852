#include "base/change_signal.h"

#include "base/change_pump.h"

namespace mongosim {

ChangeSignal::ChangeSignal() = default;

ChangeSignal::~ChangeSignal() {
  pump_.reset();
}

ChangePump& ChangeSignal::pump() {
  std::call_once(pump_made_, [this] { pump_ = std::make_unique<ChangePump>(*this); });
  return *pump_;
}

void ChangeSignal::count_parked(int64_t delta) const {
  std::lock_guard lock(mu_);
  stream_waiters_ += delta;
}

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

bool ChangeSignal::wait_for_change(uint64_t seen, Clock::time_point deadline, Waiter who) const {
  std::unique_lock lock(mu_);
  int64_t pump_thread = 0;
  int64_t& count = who == Waiter::kOplogFetch ? fetch_waiters_
                   : who == Waiter::kPump     ? pump_thread
                                              : stream_waiters_;
  ++count;
  bool changed =
      cv_.wait_until(lock, deadline, [&] { return generation_ != seen || shutting_down_; });
  --count;
  return changed;
}

int64_t ChangeSignal::waiters(Waiter who) const {
  std::lock_guard lock(mu_);
  if (who == Waiter::kPump) return 0;
  return who == Waiter::kOplogFetch ? fetch_waiters_ : stream_waiters_;
}

}  // namespace mongosim
