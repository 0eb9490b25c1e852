// Store::roll_back (docs/mongodb-behaviour.md, Oplog and rollback): documents go back to the sync
// source's versions, the pre-rollback versions are returned for the rollback file, collections
// created only on the rolled-back branch are dropped, the oplog ends at the common point, and the
// session records of rolled-back retryable writes are forgotten so a retry executes again.
#include <gtest/gtest.h>

#include <set>
#include <stdexcept>

#include "data/tests/store_fixture.h"

namespace mongosim::data::testing {
namespace {

constexpr const char* kRetryableInsert =
    R"({"insert": "c", "documents": [{"_id": 4}],
        "lsid": {"id": {"$binary": {"base64": "AAAAAAAAQACAAAAAAAAAAg==", "subType": "04"}}},
        "txnNumber": {"$numberLong": "7"}})";

std::set<std::string> json_set(const bson::Array& docs) {
  std::set<std::string> out;
  for (const auto& d : docs) out.insert(bson::to_json(d));
  return out;
}

std::set<std::string> json_set(const std::vector<Document>& docs) {
  std::set<std::string> out;
  for (const auto& d : docs) out.insert(bson::to_json(d));
  return out;
}

using StoreRollbackTest = StoreFixture;

TEST_F(StoreRollbackTest, RestoresSourceVersionsAndTruncatesAtTheCommonPoint) {
  run(R"({"insert": "c", "documents": [{"_id": 1}, {"_id": 2}]})");
  OpTime common = store_->last_applied();
  // The divergent branch: an insert, an update, a delete, a retryable insert, a new collection.
  run(R"({"insert": "c", "documents": [{"_id": 3}]})");
  run(R"({"update": "c", "updates": [{"q": {"_id": 1}, "u": {"$set": {"v": 9}}}]})");
  run(R"({"delete": "c", "deletes": [{"q": {"_id": 2}, "limit": 1}]})");
  EXPECT_EQ(run(kRetryableInsert).get("n")->as_int32(), 1);
  run(R"({"insert": "fresh", "documents": [{"_id": "x"}]})");

  RollbackRequest request;
  request.expected_last = store_->last_applied();
  request.common_point = common;
  request.documents = {{"db.c", bson::V(1), J(R"({"_id": 1})")},
                       {"db.c", bson::V(2), J(R"({"_id": 2})")},
                       {"db.c", bson::V(3), std::nullopt},
                       {"db.c", bson::V(4), std::nullopt},
                       {"db.fresh", bson::V("x"), std::nullopt}};
  request.drop_namespaces = {"db.fresh"};
  RollbackOutcome outcome = store_->roll_back(request);

  EXPECT_EQ(store_->last_applied(), common);
  EXPECT_EQ(json_set(all("c")),
            json_set(bson::Array{bson::V(J(R"({"_id": 1})")), bson::V(J(R"({"_id": 2})"))}));
  EXPECT_FALSE(store_->collection_exists("db.fresh"));
  EXPECT_EQ(outcome.oplog_entries_removed, 6u);  // 4 writes + create of fresh + its insert
  EXPECT_EQ(outcome.statements_forgotten, 1u);
  ASSERT_EQ(outcome.removed.size(), 2u);
  EXPECT_EQ(outcome.removed[0].ns, "db.c");
  EXPECT_EQ(json_set(outcome.removed[0].documents),
            json_set(std::vector<Document>{J(R"({"_id": 1, "v": 9})"), J(R"({"_id": 3})"),
                                           J(R"({"_id": 4})")}));
  EXPECT_EQ(outcome.removed[1].ns, "db.fresh");
  EXPECT_EQ(outcome.removed[1].documents.size(), 1u);
  EXPECT_TRUE(store_->oplog_after(common, 10).empty());

  // The retry of the rolled-back retryable insert executes again instead of being answered
  // from a record of a write that no longer exists.
  Document retried = run(kRetryableInsert);
  EXPECT_FALSE(retried.has("retriedStmtIds"));
  EXPECT_EQ(all("c").size(), 3u);
}

TEST_F(StoreRollbackTest, RefusesWhenTheOplogMovedSinceThePlan) {
  run(R"({"insert": "c", "documents": [{"_id": 1}]})");
  OpTime planned = store_->last_applied();
  run(R"({"insert": "c", "documents": [{"_id": 2}]})");
  RollbackRequest request;
  request.expected_last = planned;
  request.common_point = planned;
  EXPECT_THROW(store_->roll_back(request), std::logic_error);
  EXPECT_EQ(all("c").size(), 2u);
}

TEST_F(StoreRollbackTest, SourceSideReadsFindDocumentsAndOplogFromAnOptime) {
  run(R"({"insert": "c", "documents": [{"_id": 1, "a": 1}, {"_id": 2}]})");
  EXPECT_EQ(bson::to_json(*store_->find_by_id("db.c", bson::V(1))),
            bson::to_json(J(R"({"_id": 1, "a": 1})")));
  EXPECT_FALSE(store_->find_by_id("db.c", bson::V(9)));
  EXPECT_FALSE(store_->find_by_id("db.none", bson::V(1)));
  std::vector<Document> all_entries = store_->oplog_from(OpTime{}, 100);
  ASSERT_EQ(all_entries.size(), 3u);  // create + two inserts
  OpTime second{all_entries[1].get("ts")->as_timestamp(), all_entries[1].get("t")->as_int64()};
  EXPECT_EQ(store_->oplog_from(second, 100).size(), 2u);  // inclusive
  EXPECT_EQ(store_->oplog_from(second, 1).size(), 1u);
}

}  // namespace
}  // namespace mongosim::data::testing
