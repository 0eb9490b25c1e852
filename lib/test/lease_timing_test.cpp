// Lease timing: the client's lease clock starts when a request is SENT, so a slow extension
// cannot stretch the client's view of the lease past what the server granted.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <optional>

#include "test_server.h"

namespace mongolock::test {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

class LeaseTimingTest : public ServerTest {};

TEST_F(LeaseTimingTest, SlowExtensionCountsFromItsSendTimeNotItsReply) {
  constexpr auto kBlock = milliseconds(1000);
  Options options = test_options();
  options.expiry_ms = 6000;  // lease span 5400 ms, cadence 2000 ms: the blocked reply fits
  options.app_name = "slow-extend";
  std::mutex mutex;
  std::condition_variable extended;
  std::optional<Clock::time_point> reply_seen_at;
  std::optional<Clock::time_point> deadline_after_reply;
  std::atomic<const Handle*> handle{nullptr};
  options.on_event = [&](const Event& event) {
    if (event.kind != EventKind::kExtended) return;
    std::lock_guard guard(mutex);
    if (reply_seen_at || handle.load() == nullptr) return;
    reply_seen_at = Clock::now();
    deadline_after_reply = handle.load()->lease_deadline();
    extended.notify_all();
  };
  Provider provider(server_->uri(), fresh_database(), options);
  server_->member(0).command("admin", R"({"configureFailPoint": "failCommand", "mode": {"times": 1},
      "data": {"failCommands": ["update"], "appName": "slow-extend",
               "blockConnection": true, "blockTimeMS": 1000}})");
  Handle held = provider.create_lock("slow").acquire(seconds(5));
  handle = &held;
  {
    std::unique_lock lock(mutex);
    ASSERT_TRUE(extended.wait_for(lock, seconds(20), [&] { return reply_seen_at.has_value(); }))
        << "no extension succeeded";
  }
  const auto span = milliseconds(options.expiry_ms - options.expiry_ms / 10);
  // The request was sent at least kBlock before its reply arrived.
  EXPECT_LE(*deadline_after_reply, *reply_seen_at - kBlock + span)
      << "the lease was counted from the reply, not from the send";
  EXPECT_FALSE(held.lost());
  handle = nullptr;
}

}  // namespace
}  // namespace mongolock::test
