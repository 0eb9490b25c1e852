// LocalLines: for each plain lock, the notify waiters of one Provider that wait behind a hold of
// that same Provider without writing an ask to the server (mongolock.h [notify], "Local line").
//
// A lock's line is OPEN while it names an OWNER: the id of a hold of this Provider that started
// (opened()), or of a waiter of this Provider that one of its releases handed the lock to and
// that has not started its Lease yet (PENDING), or of a waiter whose first attempt is in flight
// (a LEADER: a closed line's first comer, join(leads); its attempt, if granted, starts the Lease
// that owns the line, else its caller closes the line). A waiter joins only an open line, at its
// back (join(); nullptr when the line is closed or full: the waiter attempts as before). The
// owner's release offers the front seat (offer(): kOffered) after the server's queue, and
// settle()s:
//   kSeatGranted  the seat holds the lock: kGranted with the release's token and send time (its
//                 lease anchor); it becomes the owner, pending
//   kOwnWaiter    a queued waiter of this Provider holds it: it becomes the owner, pending; the
//                 offered seat waits on at the front
//   kGone         another Provider's waiter holds it, the lock was freed, or the release found no
//                 hold of its id: the line closes
//   kUnknown      the release's outcome is unknown: the offered seat gets kUnknown (its id may
//                 hold the lock; its waiter resolves it) and the line closes
// closed(id) closes the line if `id` is its owner (a hold lost; a pending owner's call that
// ended without starting its Lease: depart()); a hand-over to a waiter whose call has departed
// counts as kGone. Closing gives every seat not offered kAsk: it leaves the
// line and attempts, queueing on the server. A pending owner that has not started its Lease
// within stale_ms, or a leader whose attempt has not come back within leader_stale_ms, is closed
// by the first seat that wakes after it (a hand-over nobody claims, or one slow attempt, must not
// stall the line while the lock may be free).
//
// Order: releases' replies reach settle() in whatever order their threads run, not the order the
// server ran them (a grantee may take its hand-over from its stream or its own attempt, hold and
// release before its releaser reads the reply). So only a release by the line's owner moves the
// line on; a Lease that starts owns it (it is the newest grant: its token is not below the
// line's); an offered seat that goes back to waiting returns to the front only of a line still
// open (else it attempts).
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
#include <unordered_set>

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

  // A pending hand-over goes stale after stale_ms; a leader's attempt after leader_stale_ms
  // (short: seats must not idle behind one slow attempt while the lock may be free).
  LocalLines(int64_t stale_ms, int64_t leader_stale_ms)
      : stale_(stale_ms), leader_stale_(leader_stale_ms) {}
  LocalLines(const LocalLines&) = delete;
  LocalLines& operator=(const LocalLines&) = delete;

  // A seat at the back of the open line; nullptr when the line is full, or closed: then, when
  // `leads` is given, `waiter` becomes the closed line's pending owner (*leads set), so waiters
  // that come while its first attempt is in flight take seats behind it (the caller closes it
  // when that attempt is not granted).
  std::shared_ptr<Seat> join(const std::string& lock, const std::string& waiter,
                             bool* leads = nullptr);
  // Waits until the seat is settled (kGranted, kAsk, kUnknown), `until` passes or a stop is
  // requested; then, unless settled, it leaves: a waiting seat at once (kLeft), an offered one
  // once its release settles (a round trip).
  Outcome wait(const std::string& lock, Seat& seat, SteadyTime until, const std::stop_token& stop);

  // The notify waiting calls of this Provider, by waiter id: a release's hand-over to one that has
  // ended (its leave ran first) does not give it the line. depart() also closes the line the id
  // owns when `close` (the call returns no hold).
  void arrive(const std::string& waiter);
  void depart(const std::string& lock, const std::string& waiter, bool close);
  // A Lease of this Provider started: hold `hold` with fencing token `token`.
  void opened(const std::string& lock, const std::string& hold, int64_t token);
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
    int64_t token = 0;  // the highest fencing token of a grant the line was given
    bool pending = false;
    SteadyTime stale_at{};  // when pending: the first seat to wake after it closes the line
    std::deque<std::shared_ptr<Seat>> seats;  // kWaiting, and at the front one kOffered
  };
  static void set_state(Seat& seat, SeatState state);
  void close(Line& line);
  void own(Line& line, const std::string& holder, int64_t token, bool pending,
           std::chrono::milliseconds stale_after);
  void forget_if_idle(const std::string& lock);

  const std::chrono::milliseconds stale_;
  const std::chrono::milliseconds leader_stale_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, Line> lines_;
  std::unordered_set<std::string> waiters_;  // arrived and not departed
};

}  // namespace mongolock::detail
