// LocalLines: for each plain lock, the notify waiters of one Provider that wait behind a hold of
// that same Provider without writing an ask to the server (mongolock.h [notify], "Local line").
//
// A lock's line is OPEN while it names an OWNER: the id of a hold of this Provider that started
// (opened()), or of a waiter of this Provider that one of its releases handed the lock to and
// that has not started its Lease yet (PENDING). A waiter joins only an open line, at its back
// (join(); nullptr when the line is closed or full: the waiter attempts as before). The owner's
// release offers the front seat (offer(): kOffered) after the server's queue, and settle()s:
//   kSeatGranted  the seat holds the lock: kGranted with the release's token and send time (its
//                 lease anchor); it becomes the owner, pending
//   kOwnWaiter    a queued waiter of this Provider holds it: it becomes the owner, pending; the
//                 offered seat waits on at the front
//   kGone         another Provider's waiter holds it, the lock was freed, or the release found no
//                 hold of its id: the line closes
//   kUnknown      the release's outcome is unknown: the offered seat gets kUnknown (its id may
//                 hold the lock; its waiter resolves it) and the line closes
// closed(id) closes the line if `id` is its owner (a hold lost; a pending owner's call that
// ended without starting its Lease). Closing gives every seat not offered kAsk: it leaves the
// line and attempts, queueing on the server. A pending owner that has not started its Lease
// within stale_ms is closed by the first seat that wakes after it (a hand-over nobody claims
// must not stall the line).
//
// Invariants: a seat is in at most one line; at most one seat of a line is kOffered, the front
// one, by its owner's release; seats leave in the order they joined except when closing tells
// them all kAsk; at most kSeatsMax seats a line; a line is kept only while open or seated.
// Thread rules: every method from any thread, under one mutex; each seat's waiter waits on that
// seat's condition variable (wait()), so a settle wakes one waiter, not the line.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <unordered_map>

namespace mongolock::detail {

inline constexpr size_t kSeatsMax = 10'000;

class LocalLines {
 public:
  using SteadyTime = std::chrono::steady_clock::time_point;
  enum class SeatState { kWaiting, kOffered, kGranted, kAsk, kUnknown, kLeft };
  enum class Settled { kSeatGranted, kOwnWaiter, kGone, kUnknown };

  class Seat {
   public:
    explicit Seat(std::string waiter) : waiter_(std::move(waiter)) {}
    const std::string& waiter() const { return waiter_; }

   private:
    friend class LocalLines;
    const std::string waiter_;
    SeatState state_ = SeatState::kWaiting;  // all below under the lines' mutex
    int64_t token_ = 0;
    SteadyTime anchor_{};
    std::condition_variable_any changed_;
  };
  // What wait() ended with: never kWaiting or kOffered.
  struct Outcome {
    SeatState state = SeatState::kLeft;
    int64_t token = 0;    // kGranted: the hold's token
    SteadyTime anchor{};  // kGranted: its lease clock's start (the release's send time)
  };

  explicit LocalLines(int64_t stale_ms) : stale_(stale_ms) {}
  LocalLines(const LocalLines&) = delete;
  LocalLines& operator=(const LocalLines&) = delete;

  std::shared_ptr<Seat> join(const std::string& lock, const std::string& waiter);
  // Waits until the seat is settled (kGranted, kAsk, kUnknown), `until` passes or a stop is
  // requested; then, unless settled, it leaves: a waiting seat at once (kLeft), an offered one
  // once its release settles (a round trip).
  Outcome wait(const std::string& lock, Seat& seat, SteadyTime until, const std::stop_token& stop);

  void opened(const std::string& lock, const std::string& hold);
  void closed(const std::string& lock, const std::string& hold);
  // The front seat, offered by the release of `hold` if it owns the line; nullptr otherwise.
  std::shared_ptr<Seat> offer(const std::string& lock, const std::string& hold);
  // The release of `hold` (which offered `offered`, may be nullptr) ended `how`; `holder` is
  // the waiter id that holds the lock after it (kSeatGranted, kOwnWaiter), `token` and
  // `sent_at` the grant's (kSeatGranted).
  void settle(const std::string& lock, const std::string& hold,
              const std::shared_ptr<Seat>& offered, Settled how, const std::string& holder,
              int64_t token, SteadyTime sent_at);

  // For tests: the lock's owner ("" when closed) and its seats.
  std::string owner(const std::string& lock) const;
  size_t seats(const std::string& lock) const;

 private:
  struct Line {
    std::string owner;  // empty: closed
    bool pending = false;
    SteadyTime pending_since{};
    std::deque<std::shared_ptr<Seat>> seats;  // kWaiting, and at the front one kOffered
  };
  static void set_state(Seat& seat, SeatState state);
  void close(Line& line);
  void own(Line& line, const std::string& holder, bool pending);
  void forget_if_idle(const std::string& lock);

  const std::chrono::milliseconds stale_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, Line> lines_;
};

}  // namespace mongolock::detail
