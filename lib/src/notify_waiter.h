// NotifyWaiter: one waiting acquire's side of the notify strategy (mongolock.h [notify]): its
// queue ticket, its registration with the Provider's ReleaseWatcher, and its sleeps.
//
// Inactive (ticket() nullptr, sleeps as the fallback policy) unless Options::backoff is kNotify
// and the hold is a plain lock. Active: every attempt carries the ticket. After the first
// refused one the waiter registers with the watcher (release_watcher.h: why no release is
// missed) and attempts again at once unless the stream open before that attempt still is;
// after a refused one it sleeps until the watcher wakes it or plan_notify_wait's time passes,
// or, while the stream is not open or the waiter is not queued, for the fallback's sleep (woken
// early when the stream opens). On leaving without a grant (timeout, cancellation, an error) it
// removes its entry, one update sent once whose failure is ignored: the entry lapses keep_ms after
// the waiter's last attempt in any case. Thread rules: one per waiting call, used by that call's
// thread only.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>

#include "commands.h"
#include "context.h"
#include "hold_spec.h"
#include "release_watcher.h"

namespace mongolock::detail {

class NotifyWaiter {
 public:
  NotifyWaiter(Context& context, const HoldSpec& spec);
  ~NotifyWaiter();  // leaves the queue unless granted() was called
  NotifyWaiter(const NotifyWaiter&) = delete;
  NotifyWaiter& operator=(const NotifyWaiter&) = delete;

  const QueueTicket* ticket() const { return active_ ? &ticket_ : nullptr; }
  // Read before each attempt; wait() returns early once it differs.
  uint64_t wakes();
  // After a refused attempt that returned `lock_document` (nullptr: none came back): how long
  // to sleep, or nullopt to sleep by the fallback policy.
  std::optional<int64_t> planned_sleep_ms(const bson_t* lock_document);
  // Sleeps until `until`, a wake-up after `seen`, or a stop request; false if stopped.
  bool wait(uint64_t seen, std::chrono::steady_clock::time_point until,
            const std::stop_token& stop) const;
  void granted() { queued_ = false; }

 private:
  Context& context_;
  const HoldSpec& spec_;
  const bool active_;
  const std::string waiter_id_;
  QueueTicket ticket_{};
  ReleaseWatcher* watcher_ = nullptr;
  ReleaseWatcher::State before_first_attempt_;
  std::unique_ptr<ReleaseWatcher::Registration> registration_;  // after the first refusal
  bool queued_ = false;  // an attempt may have queued this waiter
};

}  // namespace mongolock::detail
