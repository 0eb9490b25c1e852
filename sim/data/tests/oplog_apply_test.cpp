// A secondary's side of replication in the data layer: applying a primary's oplog entries
// reproduces its data and its oplog, re-applying is harmless, and bad entries are refused.
#include <gtest/gtest.h>

#include "base/error_codes.h"
#include "data/tests/store_fixture.h"

namespace mongosim::data::testing {
namespace {

// A second store playing the secondary, with its own registry for reads.
struct SecondaryStore {
  SecondaryStore() {
    StoreOptions options;
    options.clock = &clock;
    options.failpoints = &failpoints;
    store = std::make_unique<Store>(std::move(options));
    store->register_commands(registry);
  }
  bson::Array all(const std::string& coll) {
    CommandContext ctx;
    ctx.db = "db";
    ctx.body = Document{{"find", bson::V(coll)}, {"batchSize", bson::V(int64_t{100000})}};
    ctx.name = "find";
    ctx.now_ms = clock.now_ms();
    Document r = registry.find("find")->handler(ctx);
    return r.get("cursor")->as_document().get("firstBatch")->as_array();
  }
  void apply_all(const std::vector<Document>& entries) {
    for (const auto& e : entries) store->apply_oplog_entry(e);
  }

  ServerClock clock;
  FailPoints failpoints;
  CommandRegistry registry;
  std::unique_ptr<Store> store;
};

using OplogApplyTest = StoreFixture;

bool same_arrays(const bson::Array& a, const bson::Array& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!a[i].identical(b[i])) return false;
  }
  return true;
}

TEST_F(OplogApplyTest, ApplyingThePrimaryOplogReproducesItsDataAndOplog) {
  run(R"({"insert": "c", "documents": [{"_id": 1, "a": 1}, {"_id": 2}, {"_id": 3}]})");
  run(R"({"update": "c", "updates": [{"q": {"_id": 1}, "u": {"$set": {"a": 2}}}]})");
  run(R"({"delete": "c", "deletes": [{"q": {"_id": 2}, "limit": 1}]})");
  run(R"({"insert": "gone", "documents": [{"_id": 1}]})");
  run(R"({"drop": "gone"})");
  OpTime noop = store_->append_noop("new primary", 1);
  EXPECT_EQ(store_->last_applied(), noop);

  SecondaryStore secondary;
  std::vector<Document> entries = store_->oplog_after(OpTime{}, 1000);
  secondary.apply_all(entries);
  EXPECT_TRUE(same_arrays(secondary.all("c"), all("c"))) << js(bson::V(secondary.all("c")));
  EXPECT_TRUE(secondary.all("gone").empty());
  EXPECT_EQ(secondary.store->last_applied(), store_->last_applied());
  std::vector<Document> copied = secondary.store->oplog_after(OpTime{}, 1000);
  ASSERT_EQ(copied.size(), entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    EXPECT_TRUE(copied[i].get("ts")->identical(*entries[i].get("ts"))) << i;
    EXPECT_EQ(copied[i].get("op")->as_string(), entries[i].get("op")->as_string()) << i;
  }
  EXPECT_TRUE(secondary.store->has_oplog_entry(noop));
  EXPECT_FALSE(secondary.store->has_oplog_entry(OpTime{noop.ts, noop.term + 1}));

  // A re-fetched batch changes nothing.
  secondary.apply_all(entries);
  EXPECT_EQ(secondary.store->oplog_after(OpTime{}, 1000).size(), entries.size());
  EXPECT_TRUE(same_arrays(secondary.all("c"), all("c")));
}

// A sync source answers a fetch from one read: the entries after `after` only when `after` is
// in its oplog (same term and timestamp), nothing when it is not (the fetcher then rolls back).
// Left out: the interleaving this exists for (a rollback between a check and a read on another
// thread) has no fail point between them; the single hold of the data lock is what rules it out.
TEST_F(OplogApplyTest, FetchAnswerContinuesOnlyFromAnEntryTheOplogHolds) {
  run(R"({"insert": "c", "documents": [{"_id": 1}]})");
  OpTime first = store_->last_applied();
  run(R"({"insert": "c", "documents": [{"_id": 2}]})");
  run(R"({"insert": "c", "documents": [{"_id": 3}]})");
  auto from_first = store_->oplog_continuing(first, 1000);
  ASSERT_TRUE(from_first.has_value());
  EXPECT_EQ(from_first->size(), 2u);
  EXPECT_EQ(from_first->size(), store_->oplog_after(first, 1000).size());
  auto limited = store_->oplog_continuing(first, 1);
  ASSERT_TRUE(limited.has_value());
  EXPECT_EQ(limited->size(), 1u);
  auto from_null = store_->oplog_continuing(OpTime{}, 1000);
  ASSERT_TRUE(from_null.has_value());
  EXPECT_EQ(from_null->size(), store_->oplog_after(OpTime{}, 1000).size());
  // Same timestamp, another term: another history's entry.
  EXPECT_FALSE(store_->oplog_continuing(OpTime{first.ts, first.term + 1}, 1000).has_value());
  bson::Timestamp absent = first.ts;
  absent.increment += 100;
  EXPECT_FALSE(store_->oplog_continuing(OpTime{absent, first.term}, 1000).has_value());
}

// The code and message an entry's application failed with; {0, ""} when it was applied.
std::pair<int32_t, std::string> apply_error(Store& store, const Document& entry) {
  try {
    store.apply_oplog_entry(entry);
  } catch (const CommandError& e) {
    return {e.code(), e.what()};
  }
  return {0, ""};
}

TEST_F(OplogApplyTest, EntriesItCannotReadAreRefusedNamingTheField) {
  SecondaryStore secondary;
  auto code_of = [&](const Document& entry) { return apply_error(*secondary.store, entry); };
  Document no_ts = J(R"({"t": 1, "op": "i", "ns": "db.c", "o": {"_id": 1}})");
  EXPECT_EQ(code_of(no_ts).first, code::kBadValue);
  EXPECT_NE(code_of(no_ts).second.find("'ts'"), std::string::npos);
  Document bad_op =
      J(R"({"ts": {"$timestamp": {"t": 5, "i": 1}}, "t": 1, "op": "x", "ns": "db.c", "o": {}})");
  EXPECT_NE(code_of(bad_op).second.find("'op'"), std::string::npos);
  Document update_without_o2 = J(
      R"({"ts": {"$timestamp": {"t": 5, "i": 1}}, "t": 1, "op": "u", "ns": "db.c", "o": {"_id": 1}})");
  EXPECT_NE(code_of(update_without_o2).second.find("'o2'"), std::string::npos);
  // A sync source's numbers are checked, not cast: a term or txnNumber of 1e300 (undefined as
  // an int64) and a stmtId past 32 bits (not the statement it names) are refused.
  const std::string insert =
      R"("ts": {"$timestamp": {"t": 5, "i": 1}}, "op": "i", "ns": "db.c", "o": {"_id": 1})";
  EXPECT_NE(code_of(J("{" + insert + R"(, "t": 1e300})")).second.find("'t'"), std::string::npos);
  EXPECT_NE(code_of(J("{" + insert + R"(, "t": 1.5})")).second.find("'t'"), std::string::npos);
  const std::string session =
      R"(, "t": 1, "lsid": {"id": {"$binary": {"base64": "AAAAAAAAAAAAAAAAAAAAAA==", "subType": "04"}}}, )";
  const std::string txn_message =
      code_of(J("{" + insert + session + R"("txnNumber": 1e300, "stmtId": 0})")).second;
  EXPECT_NE(txn_message.find("'txnNumber'"), std::string::npos) << txn_message;
  const std::string stmt_message =
      code_of(
          J("{" + insert + session + R"("txnNumber": 1, "stmtId": {"$numberLong": "4294967296"}})"))
          .second;
  EXPECT_NE(stmt_message.find("'stmtId'"), std::string::npos) << stmt_message;
  EXPECT_TRUE(secondary.store->last_applied().is_null());  // nothing was logged
}

// Entries are another process's (a sync source) or a file's: an update whose document names
// another _id than the one it updates is a bad entry (it reached an assertion in the collection:
// an insert of an _id already there). A unique index is relaxed, as a secondary's is in mongod:
// after a rollback, entries replayed over the source's refetched documents collide for a while,
// and refusing them stalled the member for good.
TEST_F(OplogApplyTest, AnUpdateOfAnotherIdIsRefusedAndUniqueIndexesAreRelaxed) {
  SecondaryStore secondary;
  auto at = [](uint32_t i) {
    return R"("ts": {"$timestamp": {"t": 9, "i": )" + std::to_string(i) + "}}, \"t\": 1";
  };
  auto apply = [&](uint32_t i, const std::string& rest) {
    return apply_error(*secondary.store, J("{" + at(i) + rest + "}"));
  };
  EXPECT_EQ(
      apply(
          1,
          R"(, "op": "c", "ns": "db.$cmd", "o": {"createIndexes": "c", "v": 2, "key": {"x": 1}, "name": "x_1", "unique": true})")
          .first,
      0);
  EXPECT_EQ(apply(2, R"(, "op": "i", "ns": "db.c", "o": {"_id": 1, "x": 1})").first, 0);
  EXPECT_EQ(apply(3, R"(, "op": "i", "ns": "db.c", "o": {"_id": 2, "x": 2})").first, 0);
  const auto other_id = apply(
      4,
      R"(, "op": "u", "ns": "db.c", "o": {"_id": 1, "x": 5}, "o2": {"_id": 2}, "updateKind": "replacement")");
  EXPECT_EQ(other_id.first, code::kBadValue);
  EXPECT_NE(other_id.second.find("'o._id'"), std::string::npos) << other_id.second;
  // x: 1 twice for a moment, then not.
  EXPECT_EQ(
      apply(
          4,
          R"(, "op": "u", "ns": "db.c", "o": {"_id": 2, "x": 1}, "o2": {"_id": 2}, "updateKind": "replacement")")
          .first,
      0);
  EXPECT_EQ(
      apply(
          5,
          R"(, "op": "u", "ns": "db.c", "o": {"_id": 1, "x": 0}, "o2": {"_id": 1}, "updateKind": "replacement")")
          .first,
      0);
  EXPECT_EQ(secondary.store->last_applied().ts.increment, 5u);
  const bson::Array docs = secondary.all("c");
  ASSERT_EQ(docs.size(), 2U);
  EXPECT_TRUE(docs[0].identical(bson::V(J(R"({"_id": 1, "x": 0})"))));
  EXPECT_TRUE(docs[1].identical(bson::V(J(R"({"_id": 2, "x": 1})"))));
}

}  // namespace
}  // namespace mongosim::data::testing
