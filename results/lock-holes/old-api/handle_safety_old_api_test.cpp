// Issue 16 items 4 and 5, written against the Handle API that b9676d2's mongolock already had,
// so that the same experiments run on the library before and after the fixes
// (../run-old-api.sh). Each is the experiment of the test of the same name in
// lib/test/handle_safety_test.cpp, with the same options and the same assertions. Not carried
// over: ThreadCreationFailureAfterAGrantGivesTheHoldBack (it needs a test hook b9676d2 lacks).
//
// Model: one mongosim, one client process (plus one forked child). Left out: a child that goes
// on using the Provider, signals, suspend. An experiment that aborts the process takes the
// whole binary down, so the script runs each test in a process of its own.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <future>
#include <optional>

#include "context.h"
#include "lease.h"
#include "test_server.h"

#ifndef LIB_IS_CURRENT
#error "LIB_IS_CURRENT must be defined (0: b9676d2's library, 1: this checkout's)"
#endif

namespace mongolock::test {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

class HandleSafetyOldApiTest : public ServerTest {};

// Item 5: release() from the lost callback, which the watchdog thread runs.
TEST_F(HandleSafetyOldApiTest, ReleaseFromALostCallbackDoesNotAbort) {
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

// Item 5: a refused extension runs the callbacks inside extend(), on the caller's thread; the
// callback drops the only Handle, and with it the Lease extend() is still using.
TEST_F(HandleSafetyOldApiTest, CallbackThatDropsTheHandleInsideExtendIsSafe) {
  Options options = test_options();
  options.auto_extend = false;
  Provider provider(server_->uri(), fresh_database(), options);
  Handle held = provider.create_lock("callback-drop").acquire(seconds(5));
  std::atomic<bool> ran{false};
  held.on_lost([&] {
    held = Handle();
    ran = true;
  });
  ASSERT_TRUE(provider.force_release("callback-drop"));
  EXPECT_FALSE(held.extend());
  EXPECT_TRUE(ran.load());
  EXPECT_FALSE(held.valid());
  EXPECT_TRUE(provider.create_lock("callback-drop").try_acquire().has_value());
}

// Waits for `child` up to `limit`; kills it and returns -1 if it did not exit.
int wait_child(pid_t child, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (waitpid(child, &status, WNOHANG) == child)
      return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::this_thread::sleep_for(milliseconds(10));
  }
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  return -1;
}

// Item 5: a forked child releases its copy of the parent's Handle. Exit status 1 says the child's
// release removed the hold; -1 that the child hung (or died).
TEST_F(HandleSafetyOldApiTest, AForkedChildCannotReleaseTheParentsHold) {
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
  EXPECT_EQ(wait_child(child, seconds(10)), 0) << "the child released, failed or hung";
  auto info = provider.inspect("forked");
  ASSERT_TRUE(info && info->exclusive);
  EXPECT_EQ(info->exclusive->acquisition_id, held.acquisition_id());
  EXPECT_TRUE(info->exclusive->live) << "the child freed the parent's hold";
  EXPECT_TRUE(held.extend());
  EXPECT_TRUE(held.release());
}

// Item 4: a Lease whose threads were never started stands for a watchdog that has not run yet
// (scheduling, a stopped process); its deadline passed 1 s ago.
TEST(LeaseDeadlineOldApi, LostIsTrueOnceTheDeadlinePassedEvenIfTheWatchdogHasNotFired) {
  Options options;
  options.create_index = false;
  options.expiry_ms = 1000;
  auto context = std::make_shared<detail::Context>("mongodb://127.0.0.1:1/", "db", options);
#if LIB_IS_CURRENT
  ASSERT_TRUE(context->try_reserve_hold());  // the current Lease takes over a reserved slot
#endif
  const auto sent_at = std::chrono::steady_clock::now() - seconds(2);  // deadline passed
  detail::Lease lease(context, detail::HoldSpec{"c", "n", false, true, 0}, "id", 1, sent_at);
  EXPECT_TRUE(lease.lost());
}

}  // namespace
}  // namespace mongolock::test
