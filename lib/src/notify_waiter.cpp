#include "notify_waiter.h"

#include <algorithm>
#include <cassert>
#include <condition_variable>
#include <mutex>
#include <utility>

#include "notify_plan.h"

namespace mongolock::detail {

NotifyWaiter::NotifyWaiter(Context& context, const HoldSpec& spec)
    : context_(context),
      spec_(spec),
      active_(context.options().backoff == Backoff::kNotify && !spec.rw),
      waiter_id_(active_ ? new_acquisition_id() : std::string()) {
  if (!active_) return;
  const Options& options = context.options();
  ticket_ = QueueTicket{
      waiter_id_,        context.provider_id(), queue_keep_ms(options), options.busy_wait_max_ms,
      options.expiry_ms, &options.owner};
  watcher_ = context.release_watcher();
  context.lines().arrive(waiter_id_);
}

NotifyWaiter::~NotifyWaiter() {
  if (queued_) leave();
  if (active_) depart(/*close=*/!granted_);
}

void NotifyWaiter::after_attempt(bool granted_now) {
  if (!leading_) return;
  leading_ = false;
  if (!granted_now) close_line();  // a granted attempt's Lease owns the line now
}

void NotifyWaiter::depart(bool close) noexcept {
  try {
    context_.lines().depart(line_key(spec_), waiter_id_, close);
  } catch (...) {
    // Allocation failure building the key: a line this id owns closes when a seat finds the
    // hand-over stale (local_line.h).
  }
}

void NotifyWaiter::close_line() noexcept {
  try {
    context_.lines().closed(line_key(spec_), waiter_id_);
  } catch (...) {
    // As depart().
  }
}

void NotifyWaiter::leave() noexcept {
  try {
    Reply reply = context_.write(*leave_queue_command(spec_.collection, spec_.name, waiter_id_));
    if (reply.outcome != Outcome::kOk) {
      // The leave may not have run (not sent: the entry is certainly there): a release could
      // still hand the lock to this id. The tombstone outlives the entry (KEEP); a full list
      // records nothing, and then the entry lapses as it would have.
      context_.write(
          *resolve_for(spec_, waiter_id_, context_.options(), queue_keep_ms(context_.options())));
    }
  } catch (...) {
    // Allocation failure: the entry lapses keep_ms after the last attempt.
  }
}

uint64_t NotifyWaiter::before_attempt() {
  if (registration_) return registration_->wakes();
  if (watcher_) before_first_attempt_ = watcher_->state();
  return 0;
}

void NotifyWaiter::note_attempt(SteadyTime sent_at, const bson_t* lock_document,
                                ClusterTime operation_time) {
  if (!active_) return;
  if (!registration_) first_attempt_time_ = operation_time;
  clock_.sent(sent_at);
  if (lock_document == nullptr) return;
  const int64_t token = find_int64(*lock_document, "token").value_or(0);
  if (find_utf8(*lock_document, "holder") == waiter_id_) {
    clock_.reply_held(token);  // handed over before this attempt ran
  } else {
    clock_.reply_not_held(sent_at, token);
  }
}

std::optional<NotifyWaiter::HandOver> NotifyWaiter::take_hand_over() {
  if (!active_) return std::nullopt;
  if (registration_) {
    if (std::optional<int64_t> streamed = registration_->take_grant()) clock_.streamed(*streamed);
  }
  std::optional<HandOverClock::Taken> taken = clock_.take();
  if (!taken) return std::nullopt;
  return HandOver{waiter_id_, taken->token, taken->anchor};
}

void NotifyWaiter::renew() {
  assert(active_);
  depart(/*close=*/true);
  registration_.reset();
  waiter_id_ = new_acquisition_id();
  context_.lines().arrive(waiter_id_);
  ticket_.waiter = waiter_id_;
  queued_ = false;
  first_attempt_time_ = 0;
  clock_ = HandOverClock{};
}

std::optional<int64_t> NotifyWaiter::planned_sleep_ms(const bson_t* lock_document) {
  if (!active_) return std::nullopt;
  if (!registration_ && watcher_ != nullptr) {
    // The attempt's cluster time counts only when its reply lists the waiter: then that attempt
    // wrote its entry, and its operationTime is that write's (release_watcher.h).
    const bool entered =
        lock_document != nullptr &&
        plan_notify_wait(*lock_document, ticket_, context_.options().busy_wait_min_ms).queued;
    const ClusterTime known = entered ? first_attempt_time_ : 0;
    registration_ = watcher_->register_waiter(waiter_id_, known);
    // A release between that attempt and now is on no stream this waiter can count on.
    if (registration_ && watcher_->missed_since(before_first_attempt_, known)) return 0;
  }
  if (lock_document == nullptr || !registration_ || !registration_->streaming()) {
    return std::nullopt;
  }
  return plan_notify_wait(*lock_document, ticket_, context_.options().busy_wait_min_ms).sleep_ms;
}

bool NotifyWaiter::wait(uint64_t seen, SteadyTime until, const std::stop_token& stop) const {
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
