#include "notify_waiter.h"

#include <condition_variable>
#include <mutex>

#include "notify_plan.h"

namespace mongolock::detail {

NotifyWaiter::NotifyWaiter(Context& context, const HoldSpec& spec)
    : context_(context),
      spec_(spec),
      active_(context.options().backoff == Backoff::kNotify && !spec.rw),
      waiter_id_(active_ ? new_acquisition_id() : std::string()) {
  if (!active_) return;
  const Options& options = context.options();
  ticket_ = QueueTicket{waiter_id_, context.provider_id(), queue_keep_ms(options),
                        options.busy_wait_max_ms};
  watcher_ = context.release_watcher();
}

NotifyWaiter::~NotifyWaiter() {
  if (!queued_) return;
  try {
    context_.write(*leave_queue_command(spec_.collection, spec_.name, waiter_id_));
  } catch (...) {
    // Allocation failure: the entry lapses keep_ms after the last attempt.
  }
}

uint64_t NotifyWaiter::wakes() {
  if (registration_) return registration_->wakes();
  if (watcher_) before_first_attempt_ = watcher_->state();
  return 0;
}

std::optional<int64_t> NotifyWaiter::planned_sleep_ms(const bson_t* lock_document) {
  if (!active_) return std::nullopt;
  queued_ = true;  // a refused attempt, even one whose reply was lost, may have queued it
  if (!registration_ && watcher_ != nullptr) {
    registration_ = watcher_->register_waiter(waiter_id_);
    // A release between that attempt and now is on no stream this waiter can count on.
    if (registration_ && watcher_->missed_since(before_first_attempt_)) return 0;
  }
  if (lock_document == nullptr || !registration_ || !registration_->streaming()) {
    return std::nullopt;
  }
  return plan_notify_wait(*lock_document, ticket_, context_.options().busy_wait_min_ms).sleep_ms;
}

bool NotifyWaiter::wait(uint64_t seen, std::chrono::steady_clock::time_point until,
                        const std::stop_token& stop) const {
  if (registration_) {
    registration_->wait(seen, until, stop);
  } else {
    std::mutex mutex;
    std::condition_variable_any cv;
    std::unique_lock lock(mutex);
    cv.wait_until(lock, stop, until, [] { return false; });
  }
  return !stop.stop_requested();
}

}  // namespace mongolock::detail
