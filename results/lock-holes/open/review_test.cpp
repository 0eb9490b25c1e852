// OPEN HOLES, not yet fixed: these experiments FAIL on main by design (each asserts a claim of
// lib/include/mongolock/ that a sequence below refutes). Not part of any build. To run them:
//   cp results/lock-holes/open/review_test.cpp lib/test/ && cmake --build build --target mongolock_tests
//   build/bin/mongolock_tests --gtest_filter='ReviewTest.*'
// When a hole is fixed, its test moves into lib/test/ (passing) and out of this file.
//
// Experiments against mongolock's claims on unknown outcomes and releases, on mongosim with
// fail points. Each test asserts what the headers promise; a failure is a refuted claim.
//
// Model: one server, one process, fail points as the only faults (a server-side hold of a
// command past the client's socket timeout; a refused update). Left out: failover, clock steps,
// network queues other than blockConnection.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <thread>

#include "commands.h"
#include "test_server.h"

namespace mongolock::test {
namespace {

using std::chrono::milliseconds;

class ReviewTest : public ServerTest {
 protected:
  void TearDown() override {
    if (server_ == nullptr) return;
    server_->command("admin", R"({"configureFailPoint": "failCommand", "mode": "off"})");
  }
  static std::optional<HoldInfo> live_exclusive(const Provider& provider, const std::string& name) {
    auto info = provider.inspect(name);
    if (!info || !info->exclusive || !info->exclusive->live) return std::nullopt;
    return info->exclusive;
  }
};

// One caller, one try_acquire(timeout) against a server that holds every findAndModify of this
// client for kBlockMs (longer than the socket timeout, far shorter than expiry_ms +
// reap_after_s). Each attempt times out, is resolved by a tombstone, and the loop tries again
// with a new id; after kAbandonedIdsMax more resolutions the first attempt's tombstone is
// dropped. When the first attempt finally executes, its id is no longer listed and the lock is
// free: it is granted. try_acquire has already returned "not acquired".
// Claim refuted (lock.h): '"not acquired" ... is only reported when the caller does not hold
// the lock and the attempt can never take effect later'. The [tombstone] assumption ("fewer
// than 32 other resolutions on the same lock meanwhile") is broken by the caller's own loop.
TEST_F(ReviewTest, OwnRetriesEvictTheFirstTombstoneAndItsLateAcquireIsGranted) {
  constexpr int kBlockMs = 9000;
  Options options = test_options();
  options.app_name = "review-evict";
  const std::string db = fresh_database();
  Provider provider(server_->uri("&socketTimeoutMS=100"), db, options);
  Provider observer(server_->uri(), db, test_options());
  server_->command("admin", R"({"configureFailPoint": "failCommand", "mode": "alwaysOn",
      "data": {"failCommands": ["findAndModify"], "appName": "review-evict",
               "blockConnection": true, "blockTimeMS": )" +
                                std::to_string(kBlockMs) + R"(}})");
  const int64_t tries_before = server_->command_total("findAndModify");
  std::optional<Handle> held;
  try {
    held = provider.create_lock("evict").try_acquire(milliseconds(kBlockMs - 2000));
  } catch (const UnknownOutcome& error) {
    FAIL() << "resolutions are not blocked: " << error.what();
  }
  const int64_t tries = server_->command_total("findAndModify") - tries_before;
  server_->command("admin", R"({"configureFailPoint": "failCommand", "mode": "off"})");
  ASSERT_FALSE(held.has_value());
  std::printf("attempts sent (and resolved) by one try_acquire: %lld\n",
              static_cast<long long>(tries));
  ASSERT_GT(tries, detail::kAbandonedIdsMax + 1) << "too few attempts to evict the first";
  std::optional<HoldInfo> phantom;
  eventually(
      [&] {
        phantom = live_exclusive(observer, "evict");
        return phantom.has_value();
      },
      milliseconds(2 * kBlockMs));
  EXPECT_FALSE(phantom.has_value())
      << "phantom hold after 'not acquired': id " << (phantom ? phantom->acquisition_id : "")
      << " token " << (phantom ? phantom->fencing_token : 0) << "\n"
      << server_->command(db, R"({"find": "mongolock_locks"})");
  if (phantom) {
    std::printf("another client can acquire while the phantom lives: %d\n",
                observer.create_lock("evict").try_acquire().has_value() ? 1 : 0);
  }
}

// A release refused by the server (here NotWritablePrimary on the try and on the driver's
// retry, as in a step-down) changed nothing: the hold stays on the server until expiry_ms.
// release_result() reports kNotHeld, documented as "found it already gone (expired and taken,
// force-released, or already released)". The caller is told it does not hold, its Handle is
// gone, and the hold lives on with an id no Handle owns.
TEST_F(ReviewTest, RefusedReleaseIsReportedNotHeldWhileTheHoldStays) {
  Options options = test_options();
  options.app_name = "review-release";
  const std::string db = fresh_database();
  Provider provider(server_->uri(), db, options);
  Provider observer(server_->uri(), db, test_options());
  std::optional<Handle> held = provider.create_lock("rel").try_acquire();
  ASSERT_TRUE(held.has_value());
  const std::string id = held->acquisition_id();
  server_->command("admin", R"({"configureFailPoint": "failCommand", "mode": {"times": 2},
      "data": {"failCommands": ["update"], "appName": "review-release", "errorCode": 10107}})");
  const ReleaseResult result = held->release_result();
  server_->command("admin", R"({"configureFailPoint": "failCommand", "mode": "off"})");
  std::optional<HoldInfo> still = live_exclusive(observer, "rel");
  ASSERT_TRUE(still.has_value()) << "the refused release changed nothing";
  EXPECT_EQ(still->acquisition_id, id);
  EXPECT_NE(result, ReleaseResult::kNotHeld)
      << "release_result() says kNotHeld ('already gone') while the server holds id " << id
      << " live until " << still->expires_at.time_since_epoch().count();
  EXPECT_FALSE(observer.create_lock("rel").try_acquire().has_value())
      << "(expected: the stale hold blocks others)";
}

// A collection that an earlier version of the library used still has its TTL index
// "mongolock_ttl" on expiresAt (the plain collection's old index; the library now creates
// "mongolock_reap" on reapAt and never drops the old one). Release sets expiresAt = $$NOW, so
// the old index reaps a released document reap_after_s after the release, tombstones and all.
// An acquire held by the server past the socket timeout is resolved (tombstone), the document
// is reaped, and the held acquire then upserts a fresh document and is granted: a phantom hold
// after "not acquired". (The same early reap is issue 16 item 3's token regression.)
// Claim refuted: mongolock.h [tombstone] / "Fencing": "The TTL monitor removes a document only
// after reapAt + reap_after_s ... release and force-release never lower it".
TEST_F(ReviewTest, LeftoverExpiresAtIndexReapsTheTombstoneAndTheLateAcquireIsGranted) {
  constexpr int kBlockMs = 5000;
  const std::string db = fresh_database();
  server_->command(db, R"({"createIndexes": "mongolock_locks", "indexes": [{"key": {"expiresAt": 1},
      "name": "mongolock_ttl", "expireAfterSeconds": 1}]})");
  Options options = test_options();
  options.app_name = "review-legacy";
  options.create_index = true;  // creates mongolock_reap on reapAt, as the library does now
  options.reap_after_s = 1;
  Provider provider(server_->uri("&socketTimeoutMS=300"), db, options);
  Provider observer(server_->uri(), db, test_options());
  {
    std::optional<Handle> first = observer.create_lock("legacy").try_acquire();
    ASSERT_TRUE(first.has_value());
    ASSERT_TRUE(first->release());
  }
  server_->command("admin", R"({"configureFailPoint": "failCommand", "mode": {"times": 1},
      "data": {"failCommands": ["findAndModify"], "appName": "review-legacy",
               "blockConnection": true, "blockTimeMS": )" +
                                std::to_string(kBlockMs) + R"(}})");
  std::optional<Handle> held = provider.create_lock("legacy").try_acquire();
  ASSERT_FALSE(held.has_value());
  std::printf("after resolution: %s\n",
              server_->command(db, R"({"find": "mongolock_locks"})").c_str());
  std::optional<HoldInfo> phantom;
  eventually(
      [&] {
        phantom = live_exclusive(observer, "legacy");
        return phantom.has_value();
      },
      milliseconds(2 * kBlockMs));
  EXPECT_FALSE(phantom.has_value()) << "phantom hold after 'not acquired': id "
                                    << (phantom ? phantom->acquisition_id : "") << "\n"
                                    << server_->command(db, R"({"find": "mongolock_locks"})");
}

// An extension held by the server past the socket timeout (both the try and the driver's retry)
// executes after the Handle released: it must not revive the hold (holder-checked filter).
// Expected to hold.
TEST_F(ReviewTest, LateExtendAfterReleaseDoesNotReviveTheHold) {
  constexpr int kBlockMs = 1500;
  Options options = test_options();
  options.app_name = "review-late-extend";
  options.auto_extend = false;
  const std::string db = fresh_database();
  Provider provider(server_->uri("&socketTimeoutMS=300"), db, options);
  Provider observer(server_->uri(), db, test_options());
  std::optional<Handle> held = provider.create_lock("ext").try_acquire();
  ASSERT_TRUE(held.has_value());
  server_->command("admin", R"({"configureFailPoint": "failCommand", "mode": {"times": 1},
      "data": {"failCommands": ["update"], "appName": "review-late-extend",
               "blockConnection": true, "blockTimeMS": )" +
                                std::to_string(kBlockMs) + R"(}})");
  const int64_t updates_before = server_->command_total("update");
  const bool extended = held->extend();
  std::printf("extend returned %d; updates sent: %lld\n", extended ? 1 : 0,
              static_cast<long long>(server_->command_total("update") - updates_before));
  EXPECT_EQ(held->release_result(), ReleaseResult::kReleased);
  EXPECT_FALSE(eventually([&] { return live_exclusive(observer, "ext").has_value(); },
                          milliseconds(3 * kBlockMs)))
      << server_->command(db, R"({"find": "mongolock_locks"})");
  EXPECT_TRUE(observer.create_lock("ext").try_acquire().has_value());
}

// Issue 16 item 3 on a collection an earlier version used: the leftover "mongolock_ttl" index on
// expiresAt reaps the released document reap_after_s after the release (not reapAt +
// reap_after_s), and a primary clock step back inside the stated tolerance (expiry_ms +
// reap_after_s = 4 s; here 3.5 s) then yields a LOWER token. Same as
// ReapTest.TokenAfterReleaseReapAndAClockStepBackIsStillHigher plus the leftover index.
// Claim refuted: mongolock.h "Fencing" + [clock-steps].
TEST_F(ReviewTest, LeftoverExpiresAtIndexLetsTokensGoBackInsideTheTolerance) {
  const std::string db = fresh_database();
  server_->command(db, R"({"createIndexes": "mongolock_locks", "indexes": [{"key": {"expiresAt": 1},
      "name": "mongolock_ttl", "expireAfterSeconds": 1}]})");
  Options options = test_options();
  options.create_index = true;
  options.reap_after_s = 1;
  options.expiry_ms = 3000;
  options.auto_extend = false;
  Provider provider(server_->uri(), db, options);
  Lock lock = provider.create_lock("legacy-token");
  Handle first = lock.acquire(std::chrono::seconds(5));
  const int64_t first_token = first.fencing_token();
  ASSERT_TRUE(first.release());
  ASSERT_TRUE(eventually([&] { return !provider.inspect("legacy-token").has_value(); },
                         std::chrono::seconds(20)));
  server_->command("admin", R"({"mongosimSetClockOffset": -3500})");
  Handle second = lock.acquire(std::chrono::seconds(5));
  server_->command("admin", R"({"mongosimSetClockOffset": 0})");
  EXPECT_GT(second.fencing_token(), first_token)
      << "token went back after a reap by the leftover index and a step inside the tolerance";
}

// A release that never left the client (every pooled client busy for pool_wait_ms: kNotSent)
// is reported kNotHeld ("found it already gone") although the hold is certainly still on the
// server. Pool of one client, held by a concurrent acquire on another name that the server
// holds for 2.5 s. The 200 ms pause only lets that acquire take the client first; if it has not,
// the release is sent and the test passes (a false pass, never a false failure).
TEST_F(ReviewTest, UnsentReleaseIsReportedNotHeldWhileTheHoldStays) {
  Options options = test_options();
  options.app_name = "review-unsent";
  options.expiry_ms = 2000;  // pool wait = 1000 ms
  options.auto_extend = false;
  const std::string db = fresh_database();
  Provider provider(server_->uri("&maxPoolSize=1&socketTimeoutMS=5000"), db, options);
  Provider observer(server_->uri(), db, test_options());
  std::optional<Handle> held = provider.create_lock("unsent").try_acquire();
  ASSERT_TRUE(held.has_value());
  const std::string id = held->acquisition_id();
  server_->command("admin", R"({"configureFailPoint": "failCommand", "mode": {"times": 1},
      "data": {"failCommands": ["findAndModify"], "appName": "review-unsent",
               "blockConnection": true, "blockTimeMS": 2500}})");
  std::jthread other([&] { provider.create_lock("other").try_acquire(); });
  std::this_thread::sleep_for(milliseconds(200));  // setup only: lets `other` take the client
  const ReleaseResult result = held->release_result();
  std::optional<HoldInfo> still = live_exclusive(observer, "unsent");
  ASSERT_TRUE(still.has_value()) << "the release was not sent";
  EXPECT_EQ(still->acquisition_id, id);
  EXPECT_NE(result, ReleaseResult::kNotHeld)
      << "release_result() says kNotHeld while the server still holds id " << id;
}

// The RW shared variant of OwnRetriesEvict...: same tombstone list, same loss.
TEST_F(ReviewTest, OwnRetriesEvictTheFirstSharedTombstoneAndItsLateAcquireIsGranted) {
  constexpr int kBlockMs = 9000;
  Options options = test_options();
  options.app_name = "review-evict-rw";
  const std::string db = fresh_database();
  Provider provider(server_->uri("&socketTimeoutMS=100"), db, options);
  Provider observer(server_->uri(), db, test_options());
  server_->command("admin", R"({"configureFailPoint": "failCommand", "mode": "alwaysOn",
      "data": {"failCommands": ["findAndModify"], "appName": "review-evict-rw",
               "blockConnection": true, "blockTimeMS": )" +
                                std::to_string(kBlockMs) + R"(}})");
  std::optional<Handle> held =
      provider.create_rw_lock("evict").try_acquire_shared(milliseconds(kBlockMs - 2000));
  server_->command("admin", R"({"configureFailPoint": "failCommand", "mode": "off"})");
  ASSERT_FALSE(held.has_value());
  const bool phantom = eventually(
      [&] {
        auto info = observer.inspect_rw("evict");
        if (!info) return false;
        for (const HoldInfo& shared : info->shared) {
          if (shared.live) return true;
        }
        return false;
      },
      milliseconds(2 * kBlockMs));
  EXPECT_FALSE(phantom) << "phantom shared hold after 'not acquired'\n"
                        << server_->command(db, R"({"find": "mongolock_rwlocks"})");
  EXPECT_TRUE(observer.create_rw_lock("evict").try_acquire_exclusive().has_value())
      << "a writer is locked out by the phantom reader";
}

}  // namespace
}  // namespace mongolock::test
