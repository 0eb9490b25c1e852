#include <chrono>
#include <thread>

#include "data/tests/store_fixture.h"

namespace mongosim::data::testing {
namespace {

using TtlTest = StoreFixture;

Document doc_with_date(int32_t id, int64_t ms) {
  return Document{{"_id", bson::V(id)}, {"at", bson::Value::date(ms)}};
}

TEST_F(TtlTest, PassDeletesOnlyExpiredDates) {
  run(R"({"createIndexes": "c", "indexes": [{"key": {"at": 1}, "name": "at_1", "expireAfterSeconds": 10}]})");
  int64_t now = clock_.now_ms();
  bson::Array docs{
      bson::V(doc_with_date(1, now - 20'000)), bson::V(doc_with_date(2, now)),
      bson::V(Document{{"_id", bson::V(3)}, {"at", bson::V("not a date")}}),
      bson::V(Document{{"_id", bson::V(4)},
                       {"at", bson::V(bson::Array{bson::Value::date(now + 60'000),
                                                  bson::Value::date(now - 60'000)})}})};
  run(Document{{"insert", bson::V("c")}, {"documents", bson::V(docs)}});
  EXPECT_EQ(store_->run_ttl_pass(), 2u);
  bson::Array left = all("c");
  ASSERT_EQ(left.size(), 2u);
  EXPECT_EQ(left[0].as_document().get("_id")->as_int32(), 2);
  EXPECT_EQ(left[1].as_document().get("_id")->as_int32(), 3);
  // The server clock moving forward expires the rest.
  clock_.set_offset_ms(11'000);
  EXPECT_EQ(store_->run_ttl_pass(), 1u);
  EXPECT_EQ(all("c").size(), 1u);
}

TEST_F(TtlTest, DeletesAreReplicatedOplogEntries) {
  run(R"({"createIndexes": "c", "indexes": [{"key": {"at": 1}, "name": "at_1", "expireAfterSeconds": 0}]})");
  run(Document{
      {"insert", bson::V("c")},
      {"documents", bson::V(bson::Array{bson::V(doc_with_date(1, clock_.now_ms() - 1))})}});
  OpTime before = store_->last_applied();
  ASSERT_EQ(store_->run_ttl_pass(), 1u);
  std::vector<Document> entries = store_->oplog_after(before, 10);
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].get("op")->as_string(), "d");
  EXPECT_TRUE(Same(*entries[0].get("o"), R"({"_id": 1})"));
}

TEST_F(TtlTest, MonitorThreadDeletesUsingClockOffsetAndStopsPromptly) {
  make_store(1);
  run(R"({"createIndexes": "c", "indexes": [{"key": {"at": 1}, "name": "at_1", "expireAfterSeconds": 3600}]})");
  run(Document{{"insert", bson::V("c")},
               {"documents", bson::V(bson::Array{bson::V(doc_with_date(1, clock_.now_ms()))})}});
  store_->start_ttl_monitor();
  clock_.set_offset_ms(2 * 3600 * 1000);
  // Wait (bounded) for the monitor's pass to remove the document.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!all("c").empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(all("c").empty());
}

TEST_F(TtlTest, StopWakesASleepingMonitor) {
  // With an hour's sleep, a stop() that waited the sleep out would hit the test timeout.
  make_store(3600);
  store_->start_ttl_monitor();
  store_->stop();
  store_->stop();  // idempotent
  SUCCEED();
}

}  // namespace
}  // namespace mongosim::data::testing
