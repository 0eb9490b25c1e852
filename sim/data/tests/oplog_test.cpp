#include "data/oplog.h"

#include <gtest/gtest.h>

#include "data/tests/store_fixture.h"

namespace mongosim::data::testing {
namespace {

using OplogStoreTest = StoreFixture;

TEST(OplogTest, TimestampsIncreaseEvenWhenTheClockGoesBack) {
  Oplog log;
  int64_t clocks_ms[] = {10'000, 10'500, 9'000, 9'000, 20'000, 1'000};
  OpTime last;
  for (int64_t now : clocks_ms) {
    OplogEntry e;
    e.optime = log.next_optime(now, 1);
    EXPECT_TRUE(last.is_null() || last.ts < e.optime.ts);
    last = e.optime;
    log.append(std::move(e));
  }
  EXPECT_EQ(log.last_optime().ts.seconds, 20u);
  EXPECT_EQ(log.last_optime().ts.increment, 2u);
}

TEST_F(OplogStoreTest, EveryWriteProducesOneEntryWithIncreasingOptimes) {
  Reply ins = run_full("db", J(R"({"insert": "c", "documents": [{"_id": 1}, {"_id": 2}]})"));
  run(R"({"update": "c", "updates": [{"q": {"_id": 1}, "u": {"$set": {"a": 1}}}]})");
  run(R"({"update": "c", "updates": [{"q": {"_id": 1}, "u": {"$set": {"a": 1}}}]})");  // no-op
  Reply del = run_full("db", J(R"({"delete": "c", "deletes": [{"q": {"_id": 2}, "limit": 1}]})"));
  std::vector<Document> entries = store_->oplog_after(OpTime{}, 100);
  ASSERT_EQ(entries.size(), 5u);  // create, i, i, u, d
  const char* ops[] = {"c", "i", "i", "u", "d"};
  for (size_t i = 0; i < entries.size(); ++i) {
    EXPECT_EQ(entries[i].get("op")->as_string(), ops[i]) << i;
    if (i > 0) {
      EXPECT_LT(entries[i - 1].get("ts")->as_timestamp(), entries[i].get("ts")->as_timestamp());
    }
  }
  EXPECT_EQ(entries[1].get("ns")->as_string(), "db.c");
  EXPECT_EQ(entries[1].get("ui")->binary_subtype(), 4);
  EXPECT_TRUE(Same(*entries[3].get("o2"), R"({"_id": 1})"));
  EXPECT_TRUE(Same(*entries[3].get("o"), R"({"_id": 1, "a": 1})"));
  EXPECT_EQ(entries[3].get("wall")->type(), bson::Type::kDateTime);
  ASSERT_TRUE(ins.last_write.has_value());
  EXPECT_EQ(ins.last_write->ts, entries[2].get("ts")->as_timestamp());
  ASSERT_TRUE(del.last_write.has_value());
  EXPECT_EQ(*del.last_write, store_->last_applied());
  EXPECT_EQ(store_->last_applied().term, 1);
}

TEST_F(OplogStoreTest, RetryableWritesCarrySessionInfo) {
  run(J(R"({"insert": "c", "documents": [{"_id": 1}],
            "lsid": {"id": {"$binary": {"base64": "AAAAAAAAQACAAAAAAAAAAQ==", "subType": "04"}}},
            "txnNumber": {"$numberLong": "3"}})"));
  std::vector<Document> entries = store_->oplog_after(OpTime{}, 100);
  const Document& e = entries.back();
  EXPECT_EQ(e.get("txnNumber")->as_int64(), 3);
  EXPECT_EQ(e.get("stmtId")->as_int32(), 0);
  EXPECT_TRUE(e.get("lsid")->is_document());
}

}  // namespace
}  // namespace mongosim::data::testing
