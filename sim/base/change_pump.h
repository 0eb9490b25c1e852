// ChangePump: one thread that looks, for every waiter parked on it, at whether the data moved
// in a way that waiter cares about, and wakes only the waiters it was for.
//
// Why: every change-stream getMore waits for "a new event for me", but a ChangeSignal can only
// say "something moved". Woken by the signal itself, every waiting getMore of the member woke
// for every oplog append and every commit-point move, took the data mutex and read, and all but
// one (usually) went back to sleep: with 32 waiting streams a lock hand-over cost 64 thread
// wake-ups and as many rounds of the data mutex (docs/mongodb-behaviour.md, Change streams).
// Parked here, a getMore hands its look (a closure that reads its next batch) to the pump; the
// pump runs each parked look once per generation of the signal, one after another on its own
// thread, and wakes a waiter only when its look says it is done (or threw).
//
// Invariants: a waiter's look runs only on the pump thread and only while its waiter is inside
// wait(), never after wait() returns, and never twice at once; each look sees the state of at
// least the generation the waiter passed or a later one (a look that returned false is run
// again only after the generation moved past the one read before that run). A waiter whose
// `seen` is already stale when it parks is not parked: wait() returns kLookAgain at once, so no
// move of the signal is lost between a waiter's own look and its parking.
// Thread rules: wait() from any thread, holding no lock a producer of the signal or a look
// needs. Each ChangeSignal owns one pump (ChangeSignal::pump()); the pump thread starts at the
// first wait() and is stopped and joined by the destructor (the signal's), which must not run
// while a wait() is in progress. The internal mutex is never held while a
// look runs. While the signal is shutting down, every parked waiter is woken with kLookAgain and
// wait() parks nobody.
// Limits: at most kMaxParked waiters (beyond it wait() returns kLookAgain after waiting on the
// signal itself, as before the pump); a waiter woken at its deadline waits for its look to
// finish if one is running. The looks of a round run one after another on one thread; a round
// that has run for kRoundBudget sends every waiter it has not looked at yet back to look itself
// (kLookAgain), as every waiter did before the pump (the round's first look always runs, so a
// round is never empty). Without that bound one thread fell behind
// a write storm by seconds where the waiters' own threads kept up (docs/mongodb-behaviour.md,
// Change streams, "Cursors and waiting" 7).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <list>
#include <mutex>
#include <thread>

#include "base/change_signal.h"

namespace mongosim {

class ChangePump {
 public:
  static constexpr size_t kMaxParked = 100'000;
  // How long one round may look before the waiters it has not reached look for themselves: a
  // round of 32 lock streams takes 0.1-0.5 ms here.
  static constexpr std::chrono::microseconds kRoundBudget{1'000};

  enum class Woken {
    kDone,       // the look returned true
    kDeadline,   // the deadline passed first
    kLookAgain,  // the caller must look itself (stale `seen`, shutdown, or no room)
  };

  // round_budget: kRoundBudget, except in tests of the budget itself.
  explicit ChangePump(ChangeSignal& signal, std::chrono::microseconds round_budget = kRoundBudget);
  ~ChangePump();
  ChangePump(const ChangePump&) = delete;
  ChangePump& operator=(const ChangePump&) = delete;

  // Parks the caller until `look` (run on the pump thread after every move of the signal's
  // generation past `seen`) returns true, or `deadline`. A look that throws wakes the caller,
  // and wait() rethrows it. Counted in signal.waiters(kChangeStream) while parked.
  Woken wait(uint64_t seen, ChangeSignal::Clock::time_point deadline, std::function<bool()> look);

  // How many waiters are parked now.
  size_t parked() const;

 private:
  struct Slot;
  void run();
  // One round: every parked slot whose generation is older than `generation` is looked at.
  void look_round(uint64_t generation);
  void start_if_needed();  // under mu_

  ChangeSignal& signal_;
  const std::chrono::microseconds round_budget_;
  mutable std::mutex mu_;
  std::list<Slot*> slots_;  // parked, in the order they parked
  bool stopping_ = false;
  std::condition_variable stop_cv_;  // the pump thread waits here once the signal shut down
  std::thread thread_;
};

}  // namespace mongosim
