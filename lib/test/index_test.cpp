// The TTL index: created in the background once per (cluster, database, collection) per
// process, never on the acquire path, and its failure never blocks acquisition.
#include <gtest/gtest.h>

#include <optional>

#include "test_server.h"

namespace mongolock::test {
namespace {

using std::chrono::seconds;

class IndexTest : public ServerTest {
 protected:
  static Options index_options() {
    Options options = test_options();
    options.create_index = true;
    return options;
  }
};

TEST_F(IndexTest, CreatedOncePerProcessForBothCollections) {
  const std::string db = fresh_database();
  const int64_t before = server_->member(0).command_total("createIndexes");
  Provider first(server_->uri(), db, index_options());
  ASSERT_TRUE(poll_until(after(kEventually), [&] {
    return server_->member(0).command_total("createIndexes") - before >= 2;
  })) << "the background index creation never ran";
  const int64_t after_first = server_->member(0).command_total("createIndexes");
  EXPECT_EQ(after_first - before, 2) << "one createIndexes per collection (plain and rw)";
  {
    Provider second(server_->uri(), db, index_options());
    Handle held = second.create_lock("indexed").acquire(seconds(5));
  }  // destruction joins any background work of `second`
  EXPECT_EQ(server_->member(0).command_total("createIndexes"), after_first)
      << "a second Provider in the same process created the index again";
  const std::string indexes =
      server_->member(0).command(db, R"({"listIndexes": "mongolock_locks"})").dump();
  EXPECT_NE(indexes.find("mongolock_reap"), std::string::npos) << indexes;
  EXPECT_NE(indexes.find("reapAt"), std::string::npos) << indexes;
}

// Issue 16 item 3: an index of the same name with other options (IndexOptionsConflict, 85)
// used to be taken as "already there" without a word, although the header says it is logged.
TEST_F(IndexTest, AnIndexWithOtherOptionsIsLoggedNotSilentlyAccepted) {
  const std::string db = fresh_database();
  server_->member(0).command(
      db, R"({"createIndexes": "mongolock_locks", "indexes": [{"key": {"reapAt": 1},
      "name": "mongolock_reap", "expireAfterSeconds": 999}]})");
  const int64_t before = server_->member(0).command_total("createIndexes");
  ::testing::internal::CaptureStderr();
  {
    Provider provider(server_->uri(), db, index_options());
    ASSERT_TRUE(poll_until(after(kEventually), [&] {
      return server_->member(0).command_total("createIndexes") - before >= 2;
    }));
  }  // joins the index threads, which log before they end
  const std::string logged = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(logged.find("mongolock_reap"), std::string::npos) << logged;
  EXPECT_NE(logged.find("exists with other options"), std::string::npos) << logged;
}

TEST_F(IndexTest, AnUnauthorizedCreateIndexesDoesNotBlockAcquisition) {
  Options options = index_options();
  options.app_name = "no-index-client";
  server_->member(0).command("admin",
                             R"({"configureFailPoint": "failCommand", "mode": {"times": 10},
      "data": {"failCommands": ["createIndexes"], "appName": "no-index-client",
               "errorCode": 13}})");
  Provider provider(server_->uri(), fresh_database(), options);
  Lock lock = provider.create_lock("unindexed");
  Handle held = lock.acquire(seconds(5));
  EXPECT_GT(held.fencing_token(), 0);
  EXPECT_TRUE(held.release());
  server_->member(0).command("admin", R"({"configureFailPoint": "failCommand", "mode": "off"})");
}

}  // namespace
}  // namespace mongolock::test
