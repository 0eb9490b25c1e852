// release_result(): what a release tells its caller. kNotHeld only when the server answered
// that no hold with this id exists (or the Handle had nothing to release); a release that was
// refused or never sent is kUnknown, since the hold may still be on the server until its lease
// ends.
//
// Model: one mongosim member, one process, fail points as the only faults (a refused update, a
// pool of one client held by a blocked command, an extension held past the socket timeout). Left
// out: a refusal after the update ran (interrupted waiting for the write concern: the same
// kUnknown), failover.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <thread>

#include "test_server.h"

namespace mongolock::test {
namespace {

using std::chrono::milliseconds;

class ReleaseResultTest : public FailPointTest {
 protected:
  static std::optional<HoldInfo> live_exclusive(const Provider& provider, const std::string& name) {
    auto info = provider.inspect(name);
    if (!info || !info->exclusive || !info->exclusive->live) return std::nullopt;
    return info->exclusive;
  }
};

// A release refused by the server (NotWritablePrimary, as in a step-down) changed nothing: the
// hold stays until its lease ends. It used to be reported kNotHeld ("already gone").
TEST_F(ReleaseResultTest, RefusedReleaseIsUnknownWhileTheHoldStays) {
  Options options = test_options();
  options.app_name = "release-refused";
  const std::string db = fresh_database();
  Provider provider(server_->uri(), db, options);
  Provider observer(server_->uri(), db, test_options());
  std::optional<Handle> held = provider.create_lock("rel").try_acquire();
  ASSERT_TRUE(held.has_value());
  const std::string id = held->acquisition_id();
  server_->member(0).command("admin", R"({"configureFailPoint": "failCommand", "mode": {"times": 2},
      "data": {"failCommands": ["update"], "appName": "release-refused", "errorCode": 10107}})");
  const ReleaseResult result = held->release_result();
  server_->member(0).command("admin", R"({"configureFailPoint": "failCommand", "mode": "off"})");
  std::optional<HoldInfo> still = live_exclusive(observer, "rel");
  ASSERT_TRUE(still.has_value()) << "the refused release changed nothing";
  EXPECT_EQ(still->acquisition_id, id);
  EXPECT_EQ(result, ReleaseResult::kUnknown)
      << "a refused release is not 'already gone': the server still holds id " << id;
}

// A release that never left the client (its only pooled client busy for the whole pool wait)
// changed nothing either. Pool of one client, taken by a concurrent acquire on another name
// that the server holds for 2.5 s; the release starts once the server has received that
// acquire (its findAndModify count went up), so the client is busy for the whole 1 s pool wait.
TEST_F(ReleaseResultTest, UnsentReleaseIsUnknownWhileTheHoldStays) {
  Options options = test_options();
  options.app_name = "release-unsent";
  options.expiry_ms = 4000;  // pool wait 2000 ms
  options.auto_extend = false;
  const std::string db = fresh_database();
  Provider provider(server_->uri("maxPoolSize=1&socketTimeoutMS=5000"), db, options);
  Provider observer(server_->uri(), db, test_options());
  std::optional<Handle> held = provider.create_lock("unsent").try_acquire();
  ASSERT_TRUE(held.has_value());
  const std::string id = held->acquisition_id();
  server_->member(0).command("admin", R"({"configureFailPoint": "failCommand", "mode": {"times": 1},
      "data": {"failCommands": ["findAndModify"], "appName": "release-unsent",
               "blockConnection": true, "blockTimeMS": 3000}})");
  const int64_t tries_before = server_->member(0).command_total("findAndModify");
  std::jthread other([&] { provider.create_lock("other").try_acquire(); });
  ASSERT_TRUE(poll_until(after(kEventually), [&] {
    return server_->member(0).command_total("findAndModify") > tries_before;
  })) << "the concurrent acquire never reached the server";
  const ReleaseResult result = held->release_result();
  std::optional<HoldInfo> still = live_exclusive(observer, "unsent");
  ASSERT_TRUE(still.has_value()) << "the release was sent after all";
  EXPECT_EQ(still->acquisition_id, id);
  EXPECT_EQ(result, ReleaseResult::kUnknown)
      << "an unsent release is not 'already gone': the server still holds id " << id;
}

// The answer "no hold with this id" is still kNotHeld: force-released before the release.
TEST_F(ReleaseResultTest, ReleaseOfAForceReleasedHoldIsNotHeld) {
  const std::string db = fresh_database();
  Provider provider(server_->uri(), db, test_options());
  std::optional<Handle> held = provider.create_lock("forced").try_acquire();
  ASSERT_TRUE(held.has_value());
  ASSERT_TRUE(provider.force_release("forced"));
  EXPECT_EQ(held->release_result(), ReleaseResult::kNotHeld);
}

// An extension held by the server past the socket timeout executes after the Handle
// released: its holder-checked filter must not revive the hold. (The extend `update` is sent
// once: libmongoc retries only a findAndModify given to its write helper.) The revival is
// looked for during 3 x the block; the late extension runs at about 1 x.
TEST_F(ReleaseResultTest, LateExtendAfterReleaseDoesNotReviveTheHold) {
  constexpr int kBlockMs = 1500;
  Options options = test_options();
  options.app_name = "release-late-extend";
  options.auto_extend = false;
  const std::string db = fresh_database();
  Provider provider(server_->uri("socketTimeoutMS=300"), db, options);
  Provider observer(server_->uri(), db, test_options());
  std::optional<Handle> held = provider.create_lock("ext").try_acquire();
  ASSERT_TRUE(held.has_value());
  server_->member(0).command("admin", R"({"configureFailPoint": "failCommand", "mode": {"times": 1},
      "data": {"failCommands": ["update"], "appName": "release-late-extend",
               "blockConnection": true, "blockTimeMS": )" +
                                          std::to_string(kBlockMs) + R"(}})");
  const int64_t updates_before = server_->member(0).command_total("update");
  EXPECT_FALSE(held->extend()) << "the extension's reply cannot arrive before the timeout";
  EXPECT_EQ(server_->member(0).command_total("update") - updates_before, 1)
      << "the extension was resent";
  EXPECT_EQ(held->release_result(), ReleaseResult::kReleased);
  EXPECT_FALSE(poll_until(after(milliseconds(3 * kBlockMs)), [&] {
    return live_exclusive(observer, "ext").has_value();
  })) << server_->member(0).command(db, R"({"find": "mongolock_locks"})");
  EXPECT_TRUE(observer.create_lock("ext").try_acquire().has_value());
}

}  // namespace
}  // namespace mongolock::test
