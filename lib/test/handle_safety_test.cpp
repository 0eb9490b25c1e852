// Handle safety outside the happy path (issue 16 items 4 and 5): release() from a lost
// callback, a callback that drops the Handle while extend() runs it, a forked child that
// releases the parent's Handle, a thread that cannot be created after a grant, and lost()
// answering from the deadline when the watchdog has not fired.
//
// Model: one mongosim member, one client process (plus one forked child). Left out: a child
// that goes on using the Provider (unsupported, see provider.h), signals, suspend.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <future>
#include <mutex>
#include <optional>

#include "context.h"
#include "lease.h"
#include "test_server.h"
#include "thread_start_hook.h"

namespace mongolock::test {
namespace {

using locklab::testkit::wait_child_exit;
using std::chrono::milliseconds;
using std::chrono::seconds;

class HandleSafetyTest : public ServerTest {
 protected:
  void TearDown() override { fail_next_thread_starts(0); }
};

// Used to abort the process: the watchdog thread ran the callback, and release() joined it.
TEST_F(HandleSafetyTest, ReleaseFromALostCallbackDoesNotAbort) {
  Options options = test_options();
  options.expiry_ms = 300;
  options.auto_extend = false;
  Provider provider(server_->uri(), fresh_database(), options);
  Lock lock = provider.create_lock("callback-release");
  Handle held = lock.acquire(seconds(5));
  std::promise<void> released;
  held.on_lost([&] {
    held.release();  // true or false: the server lease may outlive the client's view by the margin
    released.set_value();
  });
  std::future<void> done = released.get_future();
  ASSERT_EQ(done.wait_for(seconds(20)), std::future_status::ready) << "the hold was never lost";
  EXPECT_FALSE(held.valid());
  EXPECT_TRUE(lock.acquire(seconds(5)).valid());
}

// A refused extension runs the callbacks on the caller's thread, inside extend(); a callback
// that drops the Handle used to destroy the Lease extend() was still using.
TEST_F(HandleSafetyTest, CallbackThatDropsTheHandleInsideExtendIsSafe) {
  Options options = test_options();
  options.auto_extend = false;
  Provider provider(server_->uri(), fresh_database(), options);
  Handle held = provider.create_lock("callback-drop").acquire(seconds(5));
  std::atomic<bool> ran{false};
  held.on_lost([&] {
    held = Handle();  // releases and drops the only reference the caller had
    ran = true;
  });
  ASSERT_TRUE(provider.force_release("callback-drop"));
  EXPECT_FALSE(held.extend());
  EXPECT_TRUE(ran.load());
  EXPECT_FALSE(held.valid());
  EXPECT_TRUE(provider.create_lock("callback-drop").try_acquire().has_value());
}

// A child inherits a copy of the parent's Handle. Its release() and destructor used to send an
// owner-checked release through the parent's pooled sockets: the parent's hold was freed (or
// the child hung on the shared socket).
TEST_F(HandleSafetyTest, AForkedChildCannotReleaseTheParentsHold) {
  Options options = test_options();
  options.auto_extend = false;
  options.expiry_ms = 20'000;
  Provider provider(server_->uri(), fresh_database(), options);
  Handle held = provider.create_lock("forked").acquire(seconds(5));
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const bool released = held.release();
    _exit(released ? 1 : 0);
  }
  EXPECT_EQ(wait_child_exit(child, after(seconds(10))), 0) << "the child released, failed or hung";
  auto info = provider.inspect("forked");
  ASSERT_TRUE(info && info->exclusive);
  EXPECT_EQ(info->exclusive->acquisition_id, held.acquisition_id());
  EXPECT_TRUE(info->exclusive->live) << "the child freed the parent's hold";
  EXPECT_TRUE(held.extend());
  EXPECT_TRUE(held.release());
}

// A grant whose lease threads cannot start used to escape as std::system_error with the hold
// left on the server (nobody extends or releases it: a phantom for expiry_ms).
TEST_F(HandleSafetyTest, ThreadCreationFailureAfterAGrantGivesTheHoldBack) {
  Provider provider(server_->uri(), fresh_database(), test_options());
  Lock lock = provider.create_lock("no-threads");
  fail_next_thread_starts(1);
  EXPECT_THROW(lock.try_acquire(), Error);
  auto info = provider.inspect("no-threads");
  EXPECT_FALSE(info && info->exclusive && info->exclusive->live) << "a hold nobody watches";
  EXPECT_TRUE(lock.try_acquire().has_value());
}

// lost() used to return only the watchdog's flag; a watchdog that has not run yet (scheduling,
// a stopped process) left lost() false past the deadline. A Lease whose threads were never
// started stands for such a watchdog.
TEST(LeaseDeadline, LostIsTrueOnceTheDeadlinePassedEvenIfTheWatchdogHasNotFired) {
  Options options;
  options.create_index = false;
  options.expiry_ms = 1000;
  auto context = std::make_shared<detail::Context>("mongodb://127.0.0.1:1/", "db", options);
  ASSERT_TRUE(context->try_reserve_hold());
  const auto sent_at = std::chrono::steady_clock::now() - seconds(2);  // deadline passed
  detail::Lease lease(context, detail::HoldSpec{"c", "n", false, true, 0}, "id", 1, sent_at);
  EXPECT_TRUE(lease.lost());
}

}  // namespace
}  // namespace mongolock::test
