// Holds on the Provider's scheduler (hold_scheduler.h) against mongosim: many holds run on the
// scheduler's bounded threads, all extend, and all are lost at their deadlines while the
// extensions hang on a paused server; a slow lost callback or observer of one hold does not hold
// back another hold's notification; the last Handle dropped inside a callback after the
// Provider is gone ends every thread; a Provider destroyed while holds live; a forked child that
// destroys a Provider whose scheduler runs in the parent.
//
// Model: one mongosim member, one client process (plus one forked child), server faults only as
// a whole-process pause (SIGSTOP). Left out: a server that answers some requests and drops
// others, failover during the loss, user callbacks that block forever (the notifiers' cap), a
// thread creation that fails while a pool grows, a suspended client host.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <csignal>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <semaphore>
#include <string>
#include <thread>
#include <vector>

#include "hold_scheduler.h"
#include "test_server.h"

namespace mongolock::test {
namespace {

using Clock = std::chrono::steady_clock;
using locklab::testkit::own_thread_count;
using locklab::testkit::wait_child_exit;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr const char* kDeadlineCause = "the lease deadline passed without a successful extension";

// What the on_event observer saw, per lock name.
class Recorder {
 public:
  struct Hold {
    int extended = 0;
    int lost = 0;
    std::string lost_cause;
    Clock::time_point lost_at;
    int64_t in_flight_at_loss = 0;  // extensions sent and not yet answered when it was lost
  };

  void on_event(const Event& event) {
    std::lock_guard guard(mutex_);  // notified under the mutex: a waiter may destroy this next
    Hold& hold = holds_[std::string(event.lock)];
    switch (event.kind) {
      case EventKind::kExtendSent:
        ++sent_;
        break;
      case EventKind::kExtended:
        ++answered_;
        ++hold.extended;
        break;
      case EventKind::kExtendRefused:
      case EventKind::kExtendUnknown:
        ++answered_;
        break;
      case EventKind::kLost:
        ++hold.lost;
        hold.lost_cause = std::string(event.detail);
        hold.lost_at = Clock::now();
        hold.in_flight_at_loss = sent_ - answered_;
        break;
    }
    changed_.notify_all();
  }
  // Waits until `done` holds for every name in `names`, for at most `within`.
  bool wait_all(const std::vector<std::string>& names, const std::function<bool(const Hold&)>& done,
                milliseconds within = kEventually) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, within, [&] {
      for (const std::string& name : names) {
        if (!done(holds_[name])) return false;
      }
      return true;
    });
  }
  Hold hold(const std::string& name) {
    std::lock_guard guard(mutex_);
    return holds_[name];
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, Hold> holds_;
  int64_t sent_ = 0;
  int64_t answered_ = 0;
};

// Resumes a paused member when the test leaves, so Handles release against a live server.
struct ResumeOnExit {
  ReplicaSet& set;
  ~ResumeOnExit() {
    if (set.member(0).paused()) set.resume(0);
  }
};

class LeaseSchedulerTest : public ServerTest {
 protected:
  void second_loss_arrives_while_the_first_blocks(bool block_in_observer);
};

TEST_F(LeaseSchedulerTest, ManyHoldsRunOnTheSchedulersThreadsAndAreLostOnTimeInAPause) {
  constexpr int kHolds = 200;
  std::unique_ptr<ReplicaSet> server = start_server();  // its own: this test pauses it
  ASSERT_NE(server, nullptr);
  Recorder recorder;
  Options options = test_options();
  // Cadence 3.3 s, lease span 9 s (margin 1 s): each hold's first extension has about 5.7 s to
  // come back before its deadline (the one timing this test rests on). With a 3 s lease (1.7 s)
  // a TSan build on two busy cores lost some of the 200 holds before their first extension.
  options.expiry_ms = 10'000;
  options.on_event = [&](const Event& event) { recorder.on_event(event); };
  // Extensions sent into the pause hang far longer than the test: every loss must come from
  // the deadline timers, never from an extension that returned.
  Provider provider(server->uri("socketTimeoutMS=120000&connectTimeoutMS=60000"), fresh_database(),
                    options);
  ASSERT_FALSE(provider.inspect("warm-up").has_value());  // the pool and its monitors run now
  const int before = own_thread_count();
  std::vector<std::string> names;
  std::vector<Handle> holds;
  for (int i = 0; i < kHolds; ++i) {
    names.push_back("many-" + std::to_string(i));
    holds.push_back(provider.create_lock(names.back()).acquire(seconds(5)));
  }
  ResumeOnExit resume{*server};
  ASSERT_TRUE(recorder.wait_all(names, [](const Recorder::Hold& h) { return h.extended >= 1; }))
      << "not every hold was extended";
  EXPECT_LE(own_thread_count() - before, detail::kSchedulerThreadsMax) << "threads while extending";

  server->pause(0);
  // Losses come up to a lease span after the pause: the wait is the usual one plus a lease.
  ASSERT_TRUE(recorder.wait_all(
      names, [](const Recorder::Hold& h) { return h.lost >= 1; },
      kEventually + milliseconds(options.expiry_ms)))
      << "not every hold was lost";
  EXPECT_LE(own_thread_count() - before, detail::kSchedulerThreadsMax)
      << "threads after the losses";
  for (int i = 0; i < kHolds; ++i) {
    const Recorder::Hold hold = recorder.hold(names[i]);
    SCOPED_TRACE(names[i]);
    EXPECT_EQ(hold.lost, 1);
    EXPECT_EQ(hold.lost_cause, kDeadlineCause);
    EXPECT_GE(hold.lost_at, holds[i].lease_deadline()) << "lost before its deadline";
    EXPECT_GT(hold.in_flight_at_loss, 0) << "no extension was hanging: the pause was not seen";
    EXPECT_TRUE(holds[i].lost());
    EXPECT_TRUE(holds[i].lost_token().stop_requested());
  }
}

// Two holds: the first's slow reaction to its loss (a blocked on_lost callback, or a blocked
// observer of its kLost event) is still running when the second hold's loss is notified: its
// callback runs, its token is requested and wait_lost() returns. The second hold is acquired
// only once the first blocks, so its loss comes strictly later.
void LeaseSchedulerTest::second_loss_arrives_while_the_first_blocks(bool block_in_observer) {
  std::counting_semaphore<> first_blocked(0);
  std::counting_semaphore<> unblock(0);
  std::promise<void> second_notified;
  Options options = test_options();
  options.expiry_ms = 1000;  // the first's callback is registered long before its loss
  options.auto_extend = false;
  auto block = [&] {
    first_blocked.release();
    unblock.acquire();
  };
  if (block_in_observer) {
    options.on_event = [&](const Event& event) {
      if (event.kind == EventKind::kLost && event.lock == "first") block();
    };
  }
  Provider provider(server_->uri(), fresh_database(), options);
  Handle first = provider.create_lock("first").acquire(seconds(5));
  Handle second;
  struct Unblock {  // before the Handles go: releasing the first waits for its notification
    std::counting_semaphore<>& gate;
    ~Unblock() { gate.release(); }
  } unblock_on_exit{unblock};
  if (!block_in_observer) first.on_lost(block);
  ASSERT_TRUE(first_blocked.try_acquire_for(kEventually)) << "the first hold was never lost";

  second = provider.create_lock("second").acquire(seconds(5));
  second.on_lost([&] { second_notified.set_value(); });
  ASSERT_EQ(second_notified.get_future().wait_for(kEventually), std::future_status::ready)
      << "the second hold's loss waited for the first's "
      << (block_in_observer ? "observer" : "callback");
  EXPECT_TRUE(second.lost_token().stop_requested());
  EXPECT_TRUE(second.wait_lost(kEventually));
  EXPECT_FALSE(first_blocked.try_acquire()) << "the first was not blocked throughout";
}

TEST_F(LeaseSchedulerTest, ASlowLostCallbackDoesNotDelayAnotherHoldsLoss) {
  second_loss_arrives_while_the_first_blocks(false);
}

TEST_F(LeaseSchedulerTest, ASlowLostObserverDoesNotDelayAnotherHoldsLoss) {
  second_loss_arrives_while_the_first_blocks(true);
}

// The Provider goes first, then the Handle is dropped inside its own lost callback: the last
// reference to the shared state drops on a scheduler thread, which destroys the scheduler it
// runs on. Every thread of the Provider (scheduler and pool) still ends.
TEST_F(LeaseSchedulerTest, LastHandleDroppedInsideItsLostCallbackEndsEveryThread) {
  const int before = own_thread_count();
  std::promise<std::thread::id> dropped;
  Handle held;
  {
    Options options = test_options();
    options.expiry_ms = 1000;
    options.auto_extend = false;
    Provider provider(server_->uri(), fresh_database(), options);
    held = provider.create_lock("dropped-inside").acquire(seconds(5));
  }
  held.on_lost([&] {
    held = Handle();
    dropped.set_value(std::this_thread::get_id());
  });
  auto on = dropped.get_future();
  ASSERT_EQ(on.wait_for(kEventually), std::future_status::ready) << "never lost";
  EXPECT_NE(on.get(), std::this_thread::get_id()) << "ran inside on_lost(): lost too early";
  EXPECT_TRUE(poll_until(after(kEventually), [&] { return own_thread_count() == before; }))
      << own_thread_count() - before << " threads left";
  EXPECT_FALSE(held.valid());
}

// The shared state keeps the scheduler running after the Provider is destroyed: the hold goes
// on being extended and is released; then every thread ends.
TEST_F(LeaseSchedulerTest, AHoldOutlivesItsProvider) {
  const int before = own_thread_count();
  Recorder recorder;
  Options options = test_options();
  options.expiry_ms = 3000;
  options.extension_cadence_ms = 200;
  options.on_event = [&](const Event& event) { recorder.on_event(event); };
  std::optional<Provider> provider(std::in_place, server_->uri(), fresh_database(), options);
  Handle held = provider->create_lock("outlives").acquire(seconds(5));
  provider.reset();
  const int extended = recorder.hold("outlives").extended;
  EXPECT_TRUE(recorder.wait_all({"outlives"}, [&](const Recorder::Hold& h) {
    return h.extended >= extended + 2;
  })) << "not extended after the Provider went";
  EXPECT_TRUE(held.release());
  EXPECT_TRUE(poll_until(after(kEventually), [&] { return own_thread_count() == before; }))
      << own_thread_count() - before << " threads left";
}

// A child destroys a Provider whose scheduler threads run in the parent (they do not exist in
// the child): it must neither join them nor abort.
TEST_F(LeaseSchedulerTest, AForkedChildCanDestroyAProviderWhoseSchedulerRunsInTheParent) {
  std::optional<Provider> provider(std::in_place, server_->uri(), fresh_database(), test_options());
  EXPECT_TRUE(provider->create_lock("fork-scheduler").acquire(seconds(5)).release());
  // The scheduler's threads run now, and the Provider holds the only reference to its state.
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    provider.reset();
    _exit(0);
  }
  EXPECT_EQ(wait_child_exit(child, after(seconds(10))), 0) << "the child hung or aborted";
  EXPECT_TRUE(provider->create_lock("fork-scheduler").acquire(seconds(5)).release());
}

}  // namespace
}  // namespace mongolock::test
