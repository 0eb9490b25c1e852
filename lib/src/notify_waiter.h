// NotifyWaiter: one waiting acquire's side of the notify strategy (mongolock.h [notify]): its
// queue ticket, its registration with the Provider's ReleaseWatcher, its sleeps, and the
// hand-overs a release makes to it.
//
// Inactive (ticket() nullptr, sleeps as the fallback policy) unless Options::backoff is
// kNotify and the hold is a plain lock. Active: every attempt carries the ticket. After the first
// refused one the waiter registers with the watcher (release_watcher.h: why no release is
// missed) with that attempt's cluster time, and attempts again at once unless a stream covers
// it (missed_since); after a refused one it sleeps until the watcher wakes it or
// plan_notify_wait's time passes, or, while the stream is not open or the waiter is not queued,
// for the fallback's sleep (woken early when a stream opens that does not cover it).
//
// Hand-overs. A release may grant the lock to this waiter's entry directly (hold id = the
// waiter id). The waiter learns it from its stream (take_grant after a wake-up) or from an
// attempt's reply that names it holder. Its lease clock starts at the ANCHOR: the send time of
// the latest attempt whose reply showed the lock not held by the waiter (that attempt ran
// before the hand-over, which runs later and starts the server's lease at its own NOW), or,
// before any such reply, of the call's first sent attempt (the hand-over needs the entry an
// attempt of this call made). So the client's lease ends before the server's, under the same
// assumptions as an acquire's (mongolock.h "Lease timing"). A hand-over whose token is not above
// that reply's token ran before it (tokens of a lock only grow) and is over: it is dropped.
// (The rules are HandOverClock's, hand_over_clock.h, a pure class tested on its own.)
//
// Local line (local_line.h): the waiter id arrives in the Provider's lines while the call lasts
// (a hand-over to an id that departed does not give it the line). A release of this Provider may
// have made this waiter's id the owner of the lock's line (a hand-over to it, not yet claimed); a
// call that ends without a grant, and renew(), close the line that id owns, so its seats attempt.
// On leaving without a grant (timeout, cancellation, an error) after one of its attempts was sent
// (a call refused before sending any, by the holds limit or the index check, sends nothing) it
// sends the leave (commands.h:
// a hand-over to it is handed on, its entry removed), once; if that fails, one tombstone of
// the waiter id (a release then never hands the lock to it), whose failure is ignored: the
// entry lapses keep_ms after the waiter's last attempt, and a hand-over to a waiter that left
// ends with its lease. renew() gives the call a new waiter id after its old one was tombstoned.
// Thread rules: one per waiting call, used by that call's thread only.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>

#include "commands.h"
#include "context.h"
#include "hand_over_clock.h"
#include "hold_spec.h"
#include "release_watcher.h"

namespace mongolock::detail {

class NotifyWaiter {
 public:
  using SteadyTime = std::chrono::steady_clock::time_point;
  struct HandOver {
    std::string id;  // the hold's id: the waiter id it was handed to
    int64_t token = 0;
    SteadyTime anchor;  // the lease clock's start (above)
  };

  NotifyWaiter(Context& context, const HoldSpec& spec);
  ~NotifyWaiter();  // leaves the queue unless granted() was called
  NotifyWaiter(const NotifyWaiter&) = delete;
  NotifyWaiter& operator=(const NotifyWaiter&) = delete;

  // The ticket an attempt carries (nullptr: inactive).
  const QueueTicket* ticket() const { return active_ ? &ticket_ : nullptr; }
  // An attempt with the ticket was sent (whatever became of it): from then on the waiter may be
  // queued, so it leaves on its way out unless granted() (a try_acquire that gives up after its
  // first attempt leaves too).
  void attempt_sent() { queued_ = queued_ || active_; }
  // Called just before each attempt: the wake count wait() compares with (it returns early once
  // the count differs); before the first, the watcher's state (release_watcher.h).
  uint64_t before_attempt();
  // After an attempt that was sent at `sent_at` and refused with `lock_document` (nullptr: its
  // reply was lost and its outcome resolved) and its Reply::operation_time (0: none): moves the
  // anchor, notes a hand-over it shows, and the cluster time the waiter registers with.
  void note_attempt(SteadyTime sent_at, const bson_t* lock_document, ClusterTime operation_time);
  // A hand-over seen by the stream or by an attempt's reply, once.
  std::optional<HandOver> take_hand_over();
  // After a refused attempt that returned `lock_document` (nullptr: none came back): how long
  // to sleep, or nullopt to sleep by the fallback policy.
  std::optional<int64_t> planned_sleep_ms(const bson_t* lock_document);
  // Sleeps until `until`, a wake-up after `seen`, or a stop request; false if stopped.
  bool wait(uint64_t seen, SteadyTime until, const std::stop_token& stop) const;
  void granted() {
    queued_ = false;
    granted_ = true;
  }
  // The waiter id, which is also the hold id of a hand-over to it.
  const std::string& waiter_id() const { return waiter_id_; }
  // A release granted this waiter's seat in its local line: until granted(), leaving hands that
  // hold on (as a queued waiter's leave does).
  void seat_granted() { queued_ = true; }
  // This waiter leads the lock's local line (local_line.h): until its attempt is granted, the
  // line's owner is its id. after_attempt() closes the line when the attempt was not granted.
  void lead() { leading_ = true; }
  void after_attempt(bool granted_now);
  // The waiter id was tombstoned: go on as a new waiter (not queued, not registered).
  void renew();

 private:
  void leave() noexcept;
  void close_line() noexcept;
  void depart(bool close) noexcept;

  Context& context_;
  const HoldSpec& spec_;
  const bool active_;
  std::string waiter_id_;
  QueueTicket ticket_{};
  ReleaseWatcher* watcher_ = nullptr;
  ReleaseWatcher::State before_first_attempt_;
  // Until registered: the first refused attempt's operation time (its queue entry's write).
  ClusterTime first_attempt_time_ = 0;
  std::unique_ptr<ReleaseWatcher::Registration> registration_;  // after the first refusal
  bool queued_ = false;  // a sent attempt may have queued this waiter (or it holds a hand-over)
  bool granted_ = false;  // the call returns a hold
  bool leading_ = false;  // its id owns the local line while its first attempt is in flight
  HandOverClock clock_;  // the anchor and the hand-overs seen (hand_over_clock.h)
};

}  // namespace mongolock::detail
