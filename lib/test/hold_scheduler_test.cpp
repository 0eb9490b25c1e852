// Unit tests of HoldScheduler with fake clients (no server, no Lease): timers fire in deadline
// order, a timer fires while every extension worker is blocked, jobs beyond the cap wait and a
// cancelled one never runs, idle threads beyond the first leave, and a scheduler destroyed by
// one of its own jobs lets that thread go.
//
// Model: a client is a fake that blocks on a semaphore where a Lease blocks in a round trip or a
// user callback. Left out: the Lease's own rules (lease_scheduler_test.cpp), real round trips,
// fork(), and a failed thread creation while a pool grows.
#include "hold_scheduler.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <semaphore>
#include <thread>
#include <vector>

#include "testkit.h"

namespace mongolock::test {
namespace {

using detail::HoldScheduler;
using detail::kExtensionWorkersMax;
using locklab::testkit::after;
using locklab::testkit::own_thread_count;
using locklab::testkit::poll_until;
using Timer = HoldScheduler::Timer;
using Job = HoldScheduler::Job;
using std::chrono::milliseconds;

constexpr milliseconds kEventually{15'000};

class FakeClient : public HoldScheduler::Client {
 public:
  explicit FakeClient(HoldScheduler& scheduler) : scheduler_(scheduler) {}
  ~FakeClient() override { scheduler_.cancel(ticket); }
  void on_timer(Timer timer) override {
    if (timer_fn) timer_fn(timer);
  }
  void run(Job job) override {
    if (run_fn) run_fn(job);
  }
  std::function<void(Timer)> timer_fn;
  std::function<void(Job)> run_fn;
  HoldScheduler::Ticket ticket;

 private:
  HoldScheduler& scheduler_;
};

// A counter that tests wait on.
class Count {
 public:
  void add() {
    std::lock_guard guard(mutex_);  // notified under the mutex: a waiter may destroy this next
    ++value_;
    changed_.notify_all();
  }
  int value() const {
    std::lock_guard guard(mutex_);
    return value_;
  }
  bool wait_for_at_least(int n) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, kEventually, [&] { return value_ >= n; });
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  int value_ = 0;
};

// `n` clients whose extension job blocks until `gate` lets it through.
std::vector<std::shared_ptr<FakeClient>> blocked_jobs(HoldScheduler& scheduler, int n,
                                                      std::counting_semaphore<>& gate,
                                                      Count& entered, Count& finished) {
  std::vector<std::shared_ptr<FakeClient>> clients;
  for (int i = 0; i < n; ++i) {
    auto client = std::make_shared<FakeClient>(scheduler);
    client->run_fn = [&](Job) {
      entered.add();
      gate.acquire();
      finished.add();
    };
    scheduler.post(client->ticket, client, Job::kExtend);
    clients.push_back(std::move(client));
  }
  return clients;
}

// Each test declares what its jobs touch before the scheduler, which joins its threads first.
// Three timers all due while the timer thread is held up (in a first timer) fire in time order.
TEST(HoldScheduler, TimersFireInDeadlineOrder) {
  std::mutex mutex;
  std::vector<int> order;
  Count fired;
  std::binary_semaphore busy(0);
  std::binary_semaphore go(0);
  HoldScheduler scheduler;
  scheduler.start(false);
  const auto now = std::chrono::steady_clock::now();
  auto holder = std::make_shared<FakeClient>(scheduler);
  holder->timer_fn = [&](Timer) {
    busy.release();
    go.acquire();
  };
  scheduler.arm(holder->ticket, holder, Timer::kDeadline, now);
  busy.acquire();
  const int before_ms[] = {30, 10, 20};  // due this long before now: 0, then 2, then 1
  std::vector<std::shared_ptr<FakeClient>> clients;
  for (int i = 0; i < 3; ++i) {
    auto client = std::make_shared<FakeClient>(scheduler);
    client->timer_fn = [&, i](Timer) {
      {
        std::lock_guard guard(mutex);
        order.push_back(i);
      }
      fired.add();
    };
    scheduler.arm(client->ticket, client, Timer::kDeadline, now - milliseconds(before_ms[i]));
    clients.push_back(std::move(client));
  }
  go.release();
  ASSERT_TRUE(fired.wait_for_at_least(3));
  std::lock_guard guard(mutex);
  EXPECT_EQ(order, (std::vector<int>{0, 2, 1}));
}

// The watchdog's guarantee: a timer is acted on while every worker is blocked in a job, and the
// pool stops growing at its cap (the job beyond it waits).
TEST(HoldScheduler, ATimerFiresWhileEveryWorkerIsBlocked) {
  std::counting_semaphore<> gate(0);
  Count entered;
  Count finished;
  std::promise<void> fired;
  HoldScheduler scheduler;
  scheduler.start(true);
  auto clients = blocked_jobs(scheduler, kExtensionWorkersMax + 1, gate, entered, finished);
  ASSERT_TRUE(entered.wait_for_at_least(kExtensionWorkersMax));
  EXPECT_EQ(scheduler.threads(), 1 + kExtensionWorkersMax + 1) << "timer, workers, a notifier";

  auto watched = std::make_shared<FakeClient>(scheduler);
  watched->timer_fn = [&](Timer) { fired.set_value(); };
  scheduler.arm(watched->ticket, watched, Timer::kDeadline, std::chrono::steady_clock::now());
  EXPECT_EQ(fired.get_future().wait_for(kEventually), std::future_status::ready)
      << "the timer waited for a worker";
  EXPECT_EQ(entered.value(), kExtensionWorkersMax) << "a job ran beyond the cap";
  EXPECT_EQ(finished.value(), 0);

  gate.release(kExtensionWorkersMax + 1);
  EXPECT_TRUE(finished.wait_for_at_least(kExtensionWorkersMax + 1));
}

TEST(HoldScheduler, ACancelledJobNeverRuns) {
  std::counting_semaphore<> gate(0);
  Count entered;
  Count finished;
  std::atomic<bool> cancelled_ran{false};
  std::promise<bool> next_ran;  // whether the cancelled job had run when the next one ran
  HoldScheduler scheduler;
  scheduler.start(true);
  auto clients = blocked_jobs(scheduler, kExtensionWorkersMax, gate, entered, finished);
  ASSERT_TRUE(entered.wait_for_at_least(kExtensionWorkersMax));
  auto cancelled = std::make_shared<FakeClient>(scheduler);
  cancelled->run_fn = [&](Job) { cancelled_ran = true; };
  auto next = std::make_shared<FakeClient>(scheduler);
  next->run_fn = [&](Job) { next_ran.set_value(cancelled_ran.load()); };
  scheduler.post(cancelled->ticket, cancelled, Job::kExtend);
  scheduler.post(next->ticket, next, Job::kExtend);
  scheduler.cancel(cancelled->ticket);
  gate.release(1);  // one worker frees: it takes the first job still queued
  auto result = next_ran.get_future();
  ASSERT_EQ(result.wait_for(kEventually), std::future_status::ready);
  EXPECT_FALSE(result.get()) << "the cancelled job ran";
  gate.release(kExtensionWorkersMax - 1);
  EXPECT_TRUE(finished.wait_for_at_least(kExtensionWorkersMax));
  EXPECT_FALSE(cancelled_ran.load());
}

TEST(HoldScheduler, IdleThreadsBeyondTheFirstOfEachPoolLeave) {
  const int before = own_thread_count();
  std::counting_semaphore<> gate(0);
  Count entered;
  Count finished;
  HoldScheduler scheduler;
  scheduler.start(true);
  auto clients = blocked_jobs(scheduler, kExtensionWorkersMax, gate, entered, finished);
  ASSERT_TRUE(entered.wait_for_at_least(kExtensionWorkersMax));
  EXPECT_EQ(own_thread_count() - before, 1 + kExtensionWorkersMax + 1);
  gate.release(kExtensionWorkersMax);
  ASSERT_TRUE(finished.wait_for_at_least(kExtensionWorkersMax));
  EXPECT_TRUE(poll_until(after(kEventually), [&] { return scheduler.threads() == 3; }))
      << scheduler.threads() << " threads stay";
  EXPECT_TRUE(poll_until(after(kEventually), [&] { return own_thread_count() - before == 3; }))
      << own_thread_count() - before << " threads stay";
}

// What a Context is to a Lease: the owner of the scheduler, kept alive by its clients.
struct Owner {
  HoldScheduler scheduler;
  // Shared: a test that fails early must not leave the scheduler's thread writing to its stack.
  std::shared_ptr<std::atomic<std::thread::id>> destroyed_on;
  ~Owner() {
    if (destroyed_on) *destroyed_on = std::this_thread::get_id();
  }
};

class OwningClient : public HoldScheduler::Client {
 public:
  explicit OwningClient(std::shared_ptr<Owner> owner) : owner_(std::move(owner)) {}
  ~OwningClient() override { owner_->scheduler.cancel(ticket); }
  void on_timer(Timer) override {}
  void run(Job) override { run_fn(); }
  std::function<void()> run_fn;
  HoldScheduler::Ticket ticket;

 private:
  std::shared_ptr<Owner> owner_;
};

// The last reference to the owner drops inside a job: the scheduler is destroyed on its own
// worker, which it detaches (joining itself would throw); every thread still ends.
TEST(HoldScheduler, DestroyedByItsOwnJobItsThreadsStillEnd) {
  const int before = own_thread_count();
  auto destroyed_on = std::make_shared<std::atomic<std::thread::id>>();
  auto owner = std::make_shared<Owner>();
  owner->destroyed_on = destroyed_on;
  owner->scheduler.start(true);
  auto client = std::make_shared<OwningClient>(owner);
  HoldScheduler& scheduler = owner->scheduler;
  owner.reset();  // the client holds the owner now
  std::binary_semaphore entered(0);
  std::binary_semaphore go(0);
  client->run_fn = [&] {
    entered.release();
    go.acquire();
  };
  scheduler.post(client->ticket, client, Job::kExtend);
  entered.acquire();
  client.reset();  // the running job holds the last reference
  go.release();
  ASSERT_TRUE(poll_until(after(kEventually), [&] { return own_thread_count() == before; }))
      << own_thread_count() - before << " threads left";
  EXPECT_NE(destroyed_on->load(), std::thread::id());
  EXPECT_NE(destroyed_on->load(), std::this_thread::get_id()) << "not destroyed inside the job";
}

}  // namespace
}  // namespace mongolock::test
