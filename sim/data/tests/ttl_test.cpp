#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <thread>

#include "data/tests/store_fixture.h"
#include "poll_until.h"

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
  EXPECT_TRUE(locklab::testkit::poll_until(locklab::testkit::after(std::chrono::seconds(20)),
                                           [&] { return all("c").empty(); }));
}

// stop() wakes a monitor that sleeps for an hour. The monitor asks for its sleep under its lock
// just before it waits, so once it has asked, a stop() (which takes that lock) finds it asleep.
// The 60 s bounds are deadlines against an hour, not a measure of speed. A stop that does not
// wake the monitor fails here rather than hanging the suite: the store is then leaked, and the
// stopping thread left behind.
TEST_F(TtlTest, StopWakesASleepingMonitor) {
  auto asleep = std::make_shared<std::promise<void>>();
  auto told = std::make_shared<std::atomic<bool>>(false);
  on_ttl_sleep_ = [asleep, told] {
    if (!told->exchange(true)) asleep->set_value();
  };
  make_store(3600);
  store_->start_ttl_monitor();
  ASSERT_EQ(asleep->get_future().wait_for(std::chrono::seconds(60)), std::future_status::ready)
      << "the monitor never went to sleep";
  auto stopped = std::make_shared<std::promise<void>>();
  std::future<void> stopped_future = stopped->get_future();
  std::thread([store = store_.get(), stopped] {
    store->stop();
    stopped->set_value();
  }).detach();
  if (stopped_future.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
    (void)store_.release();  // still in use by the stopping thread
    FAIL() << "stop() did not wake the sleeping TTL monitor";
  }
  store_->stop();  // idempotent
  EXPECT_TRUE(*told);
}

}  // namespace
}  // namespace mongosim::data::testing
