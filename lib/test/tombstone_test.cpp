// Tombstones: every resolved acquire attempt leaves {id, until} in its lock document, kept for
// expiry_ms + reap_after_s, and an acquire whose id is listed is never granted. No number of
// attempts, by one call or many, drops a tombstone before its keep time ends; past
// kTombstonesMax kept at once a resolution is refused instead (UnknownOutcome).
//
// Model: one mongosim member, one client process, fail points as the only faults: a
// blockConnection that holds every findAndModify of one client past its socket timeout, so
// each attempt executes late, after try_acquire gave up on it. Left out: failover, clock steps
// (the keep time is on the server clock), a network queue instead of a blocked connection, a
// late execution beyond the keep time (outside the library's stated assumption [tombstone]).
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>

#include "commands.h"
#include "test_server.h"

namespace mongolock::test {
namespace {

using std::chrono::milliseconds;

// How many ids an earlier bound kept (the newest 32): the tests make more attempts than that.
constexpr int64_t kEarlierBoundIds = 32;
constexpr int kBlockMs = 9000;

class TombstoneTest : public FailPointTest {
 protected:
  void block_every_acquire(const std::string& app_name) {
    server_->member(0).command("admin", R"({"configureFailPoint": "failCommand", "mode": "alwaysOn",
        "data": {"failCommands": ["findAndModify"], "appName": ")" +
                                            app_name +
                                            R"(", "blockConnection": true, "blockTimeMS": )" +
                                            std::to_string(kBlockMs) + R"(}})");
  }
  static bool live_hold(const Provider& provider, const std::string& name, bool rw) {
    auto info = rw ? provider.inspect_rw(name) : provider.inspect(name);
    if (!info) return false;
    if (info->exclusive && info->exclusive->live) return true;
    return std::any_of(info->shared.begin(), info->shared.end(),
                       [](const HoldInfo& shared) { return shared.live; });
  }
  // Tombstones recorded in the one document of `collection` (each entry has one "until").
  int64_t tombstones_in(const std::string& db, const std::string& collection) {
    const std::string docs =
        server_->member(0).command(db, R"({"find": ")" + collection + R"("})").dump();
    int64_t count = 0;
    for (size_t at = docs.find("\"until\""); at != std::string::npos;
         at = docs.find("\"until\"", at + 1)) {
      ++count;
    }
    return count;
  }
  void expect_no_phantom_after_many_own_attempts(bool rw);
};

// One caller, one try_acquire(kBlockMs - 2000) against a server that holds every findAndModify
// of this client for kBlockMs (socket timeout 100 ms): each attempt times out, is resolved by a
// tombstone, and the loop tries again with a new id, dozens of times. Every attempt executes
// later, the first about 2 s after try_acquire returned "not acquired". With the newest 32 ids
// kept, the first attempts' tombstones were dropped by the caller's own later ones and their
// late execution was granted: a phantom hold after "not acquired". Now every tombstone is kept
// for expiry_ms + reap_after_s (90 s here): all are still there and none of the late attempts
// is granted. The phantom is looked for until 3 s after the last attempt can execute.
void TombstoneTest::expect_no_phantom_after_many_own_attempts(bool rw) {
  Options options = test_options();
  options.app_name = rw ? "tombstone-many-rw" : "tombstone-many";
  const std::string db = fresh_database();
  const std::string collection = rw ? options.rw_collection : options.collection;
  Provider provider(server_->uri("socketTimeoutMS=100"), db, options);
  Provider observer(server_->uri(), db, test_options());
  block_every_acquire(options.app_name);
  const int64_t tries_before = server_->member(0).command_total("findAndModify");
  std::optional<Handle> held;
  try {
    held = rw ? provider.create_rw_lock("many").try_acquire_shared(milliseconds(kBlockMs - 2000))
              : provider.create_lock("many").try_acquire(milliseconds(kBlockMs - 2000));
  } catch (const UnknownOutcome& error) {
    FAIL() << "resolutions are not blocked and must succeed: " << error.what();
  }
  const int64_t tries = server_->member(0).command_total("findAndModify") - tries_before;
  server_->member(0).command("admin", R"({"configureFailPoint": "failCommand", "mode": "off"})");
  ASSERT_FALSE(held.has_value()) << "every attempt was held past the socket timeout";
  ASSERT_GT(tries, kEarlierBoundIds + 1) << "too few attempts to show the earlier loss";
  EXPECT_EQ(tombstones_in(db, collection), tries)
      << "every attempt's tombstone must still be kept\n"
      << server_->member(0).command(db, R"({"find": ")" + collection + R"("})");
  EXPECT_FALSE(poll_until(after(milliseconds(kBlockMs + 3000)),
                          [&] { return live_hold(observer, "many", rw); }))
      << "a late attempt took effect after 'not acquired': a phantom hold\n"
      << server_->member(0).command(db, R"({"find": ")" + collection + R"("})");
  EXPECT_TRUE(rw ? observer.create_rw_lock("many").try_acquire_exclusive().has_value()
                 : observer.create_lock("many").try_acquire().has_value())
      << "another client is locked out of the free lock";
}

TEST_F(TombstoneTest, OwnAttemptsNeverDropTheFirstTombstone) {
  expect_no_phantom_after_many_own_attempts(false);
}

TEST_F(TombstoneTest, OwnSharedAttemptsNeverDropTheFirstTombstone) {
  expect_no_phantom_after_many_own_attempts(true);
}

// At kTombstonesMax kept tombstones a resolution is refused, not made room for: the attempt is
// reported as UnknownOutcome (naming the limit), and every kept tombstone stays. The list is
// filled directly (an operator's write), each entry kept for an hour.
TEST_F(TombstoneTest, AFullListRefusesTheResolutionInsteadOfDroppingOne) {
  Options options = test_options();
  options.app_name = "tombstone-full";
  const std::string db = fresh_database();
  std::string entries;
  for (int64_t i = 0; i < detail::kTombstonesMax; ++i) {
    if (i > 0) entries += ",";
    entries += R"({"id": "filler)" + std::to_string(i) +
               R"(", "until": {"$date": "2100-01-01T00:00:00Z"}})";
  }
  server_->member(0).command(db, R"({"insert": "mongolock_locks", "documents": [{"_id": "full",
      "token": 1, "holder": null, "tombstones": [)" +
                                     entries + "]}]}");
  Provider provider(server_->uri(), db, options);
  server_->member(0).command("admin", R"({"configureFailPoint": "failCommand", "mode": {"times": 1},
      "data": {"failCommands": ["findAndModify"], "appName": "tombstone-full", "errorCode": 64}})");
  try {
    provider.create_lock("full").try_acquire();
    ADD_FAILURE() << "a resolution past the limit was reported as resolved";
  } catch (const UnknownOutcome& error) {
    EXPECT_NE(std::string(error.what()).find(std::to_string(detail::kTombstonesMax)),
              std::string::npos)
        << error.what();
  }
  EXPECT_EQ(tombstones_in(db, "mongolock_locks"), detail::kTombstonesMax);
  const std::string doc = server_->member(0).command(db, R"({"find": "mongolock_locks"})").dump();
  EXPECT_NE(doc.find("\"filler0\""), std::string::npos) << "the oldest tombstone was dropped";
  EXPECT_TRUE(provider.create_lock("full").try_acquire().has_value())
      << "a fresh attempt with no failure is granted";
}

}  // namespace
}  // namespace mongolock::test
