// ChangePump: waiters parked with a look are woken only when their own look is done, each look
// runs once per move of the signal and never after its wait returned, errors reach the waiter,
// and shutdown or a stale generation sends the waiter back to look itself.
//
// What the model leaves out: the data a look reads (a look here is a flag and a counter; the
// change-stream getMore's look is covered by the change stream tests against a running member)
// and time (deadlines here are already past or an hour away; no test waits for one). Each
// "the pump has looked" is a counter the look itself bumps, waited for; nothing sleeps.
#include "base/change_pump.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <stdexcept>
#include <thread>
#include <vector>

namespace mongosim {
namespace {

using Clock = ChangeSignal::Clock;

// Tests of what the pump does with its looks leave the round's budget out of them.
constexpr auto kNoBudget =
    std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::hours(1));

Clock::time_point in_an_hour() {
  return Clock::now() + std::chrono::hours(1);
}

// Spins (yielding) until `done`: each condition is one a waiter or the pump makes true, and
// only grows (a count reached), so a wrong pump fails the exact checks after it, not a hang.
template <typename Done>
void until(Done done) {
  while (!done()) std::this_thread::yield();
}

// A waiter whose look says done once `ready` is set, counting its runs.
struct Waiter {
  std::atomic<bool> ready{false};
  std::atomic<int> looks{0};
  std::function<bool()> look() {
    return [this] {
      looks.fetch_add(1);
      return ready.load();
    };
  }
};

// Parks one wait per waiter, each from generation `seen`, and returns once all are parked.
std::vector<std::future<ChangePump::Woken>> park_all(ChangePump& pump, std::vector<Waiter>& waiters,
                                                     uint64_t seen) {
  std::vector<std::future<ChangePump::Woken>> waits;
  for (Waiter& w : waiters) {
    waits.push_back(std::async(
        std::launch::async, [&pump, &w, seen] { return pump.wait(seen, in_an_hour(), w.look()); }));
  }
  until([&] { return pump.parked() == waiters.size(); });
  return waits;
}

TEST(ChangePump, OnlyTheWaiterWhoseLookIsDoneIsWoken) {
  ChangeSignal signal;
  ChangePump pump(signal, kNoBudget);
  Waiter a, b;
  const uint64_t seen = signal.generation();
  auto wait_a =
      std::async(std::launch::async, [&] { return pump.wait(seen, in_an_hour(), a.look()); });
  auto wait_b =
      std::async(std::launch::async, [&] { return pump.wait(seen, in_an_hour(), b.look()); });
  until([&] { return pump.parked() >= 2; });
  EXPECT_EQ(signal.waiters(), 2);
  EXPECT_EQ(a.looks.load() + b.looks.load(), 0);  // parked with a fresh generation: not looked at

  a.ready = true;
  signal.notify();
  EXPECT_EQ(wait_a.get(), ChangePump::Woken::kDone);
  until([&] { return b.looks.load() >= 1; });
  EXPECT_EQ(b.looks.load(), 1);
  // b was looked at and is still parked: it was not woken for a's move.
  EXPECT_EQ(pump.parked(), 1u);
  EXPECT_EQ(signal.waiters(), 1);
  EXPECT_EQ(a.looks.load(), 1);

  b.ready = true;
  signal.notify();
  EXPECT_EQ(wait_b.get(), ChangePump::Woken::kDone);
  EXPECT_EQ(b.looks.load(), 2);  // once per move
  EXPECT_EQ(pump.parked(), 0u);
  EXPECT_EQ(signal.waiters(), 0);
}

TEST(ChangePump, AStaleGenerationIsNotParkedAndItsLookIsNotRun) {
  ChangeSignal signal;
  const uint64_t seen = signal.generation();
  signal.notify();
  Waiter w;
  w.ready = true;
  // A deadline already past: had it been parked, the wait would end kDeadline.
  EXPECT_EQ(signal.pump().wait(seen, Clock::now() - std::chrono::seconds(1), w.look()),
            ChangePump::Woken::kLookAgain);
  EXPECT_EQ(w.looks.load(), 0);
}

TEST(ChangePump, ALookThatThrowsRethrowsInItsWaiter) {
  ChangeSignal signal;
  ChangePump pump(signal, kNoBudget);
  const uint64_t seen = signal.generation();
  auto waiting = std::async(std::launch::async, [&] {
    return pump.wait(seen, in_an_hour(), []() -> bool { throw std::runtime_error("read failed"); });
  });
  until([&] { return pump.parked() == 1; });
  signal.notify();
  EXPECT_THROW(
      {
        try {
          waiting.get();
        } catch (const std::runtime_error& e) {
          EXPECT_STREQ(e.what(), "read failed");
          throw;
        }
      },
      std::runtime_error);
  EXPECT_EQ(pump.parked(), 0u);
}

TEST(ChangePump, APassedDeadlineEndsTheWaitAndItsLookNeverRunsAfter) {
  ChangeSignal signal;
  ChangePump pump(signal, kNoBudget);
  Waiter gone, later;
  const uint64_t seen = signal.generation();
  EXPECT_EQ(pump.wait(seen, Clock::now() - std::chrono::seconds(1), gone.look()),
            ChangePump::Woken::kDeadline);
  // A later waiter's look runs after a move; the pump looks at parked waiters only.
  auto waiting =
      std::async(std::launch::async, [&] { return pump.wait(seen, in_an_hour(), later.look()); });
  until([&] { return pump.parked() == 1; });
  later.ready = true;
  signal.notify();
  EXPECT_EQ(waiting.get(), ChangePump::Woken::kDone);
  EXPECT_EQ(gone.looks.load(), 0);
  EXPECT_EQ(later.looks.load(), 1);
}

TEST(ChangePump, ADeadlineThatPassesDuringALookWaitsForTheLookToEnd) {
  // The look reads into the waiter's frame, so a wait may not return while it runs. The look
  // here runs past the waiter's deadline (it waits for the deadline itself, not for a duration).
  // If the pump reached the look only after the deadline, the waiter was gone and the look never
  // ran: both outcomes are checked, and the first is the likely one.
  ChangeSignal signal;
  ChangePump pump(signal, kNoBudget);
  const auto deadline = Clock::now() + std::chrono::milliseconds(200);
  std::atomic<bool> started{false}, finished{false}, returned{false}, ran_after_return{false};
  auto look = [&] {
    if (returned.load()) ran_after_return = true;
    started = true;
    until([&] { return Clock::now() > deadline + std::chrono::milliseconds(20); });
    finished = true;
    return false;
  };
  const uint64_t seen = signal.generation();
  auto waiting = std::async(std::launch::async, [&] {
    ChangePump::Woken woken = pump.wait(seen, deadline, look);
    EXPECT_EQ(started.load(), finished.load());
    returned = true;
    return woken;
  });
  until([&] {
    return pump.parked() >= 1 ||
           waiting.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
  });
  signal.notify();
  EXPECT_EQ(waiting.get(), ChangePump::Woken::kDeadline);
  signal.notify();  // a further round finds no waiter
  Waiter next;
  next.ready = true;
  auto later = std::async(std::launch::async, [&] {
    return pump.wait(signal.generation(), in_an_hour(), next.look());
  });
  until([&] { return pump.parked() >= 1; });
  signal.notify();
  EXPECT_EQ(later.get(), ChangePump::Woken::kDone);
  EXPECT_FALSE(ran_after_return.load());
}

TEST(ChangePump, ShutdownSendsEveryParkedWaiterBackToLookAndParksNobodyAfter) {
  ChangeSignal signal;
  ChangePump pump(signal, kNoBudget);
  constexpr int kWaiters = 8;
  std::vector<Waiter> waiters(kWaiters);
  auto waits = park_all(pump, waiters, signal.generation());
  signal.shutdown();
  for (auto& wait : waits) EXPECT_EQ(wait.get(), ChangePump::Woken::kLookAgain);
  Waiter after;
  EXPECT_EQ(pump.wait(signal.generation(), in_an_hour(), after.look()),
            ChangePump::Woken::kLookAgain);
  EXPECT_EQ(pump.parked(), 0u);
}

TEST(ChangePump, ManyWaitersDoneOnOneMoveAreEachLookedAtOnceAndAllWoken) {
  ChangeSignal signal;
  ChangePump pump(signal, kNoBudget);
  constexpr int kWaiters = 64;
  std::vector<Waiter> waiters(kWaiters);
  for (Waiter& w : waiters) w.ready = true;
  auto waits = park_all(pump, waiters, signal.generation());
  signal.notify();
  for (auto& wait : waits) EXPECT_EQ(wait.get(), ChangePump::Woken::kDone);
  for (const Waiter& w : waiters) EXPECT_EQ(w.looks.load(), 1);
}

TEST(ChangePump, ARoundOverItsBudgetSendsTheWaitersItHasNotReachedToLookThemselves) {
  // A budget of zero: each round looks at its first waiter only (a round's first look always
  // runs) and sends the others back to look on their own threads, their looks never run.
  ChangeSignal signal;
  ChangePump pump(signal, std::chrono::microseconds(0));
  constexpr int kWaiters = 4;
  std::vector<Waiter> waiters(kWaiters);
  for (int i = 1; i < kWaiters; ++i) waiters[i].ready = true;  // their looks would say done
  const uint64_t seen = signal.generation();
  std::vector<std::future<ChangePump::Woken>> waits;
  for (Waiter& w : waiters) {  // one at a time: the pump's list is in the order they parked
    waits.push_back(std::async(
        std::launch::async, [&pump, &w, seen] { return pump.wait(seen, in_an_hour(), w.look()); }));
    until([&] { return pump.parked() == waits.size(); });
  }
  signal.notify();
  for (int i = 1; i < kWaiters; ++i) {
    EXPECT_EQ(waits[i].get(), ChangePump::Woken::kLookAgain);
    EXPECT_EQ(waiters[i].looks.load(), 0);
  }
  EXPECT_EQ(waiters[0].looks.load(), 1);  // looked at, not done: still parked
  EXPECT_EQ(pump.parked(), 1u);
  waiters[0].ready = true;
  signal.notify();
  EXPECT_EQ(waits[0].get(), ChangePump::Woken::kDone);
}

}  // namespace
}  // namespace mongosim
