// judge_indexes on listIndexes replies written by hand: which TTL indexes a collection may hold
// before an acquire is sent into it (index_check.h). Pure: no server; the integration side is
// reap_index_test.cpp.
#include "index_check.h"

#include <gtest/gtest.h>

#include <string>

#include "bson_ptr.h"

namespace mongolock::detail {
namespace {

Bson reply_with(const std::string& indexes_json) {
  const std::string json = R"({"cursor": {"id": 0, "ns": "db.mongolock_locks", "firstBatch": [)" +
                           indexes_json + "]}, \"ok\": 1}";
  bson_error_t error;
  bson_t* doc = bson_new_from_json(reinterpret_cast<const uint8_t*>(json.data()),
                                   static_cast<ssize_t>(json.size()), &error);
  EXPECT_NE(doc, nullptr) << error.message;
  return Bson(doc);
}

const std::string kIdIndex = R"({"v": 2, "key": {"_id": 1}, "name": "_id_"})";

std::string reap_index(int64_t expire_after_s, const char* name = "mongolock_reap") {
  return R"({"v": 2, "key": {"reapAt": 1}, "name": ")" + std::string(name) +
         R"(", "expireAfterSeconds": )" + std::to_string(expire_after_s) + "}";
}

IndexRule rule(int64_t reap_after_s, bool creates_index = true, bool plain = true) {
  return IndexRule{"db.mongolock_locks", reap_after_s, creates_index, plain};
}

TEST(IndexCheck, ReapIndexWithAtLeastTheProvidersReapIsUsableAndFinal) {
  EXPECT_EQ(judge_indexes(*reply_with(kIdIndex + "," + reap_index(60)), rule(60)).kind,
            IndexVerdictKind::kUsable);
  EXPECT_EQ(judge_indexes(*reply_with(kIdIndex + "," + reap_index(600)), rule(60)).kind,
            IndexVerdictKind::kUsable);
  // Another name on the same key keeps documents as long: the library's own never appears then
  // (createIndexes answers a conflict), so waiting for it would ask forever.
  EXPECT_EQ(judge_indexes(*reply_with(reap_index(60, "by_hand")), rule(60)).kind,
            IndexVerdictKind::kUsable);
}

TEST(IndexCheck, ReapIndexShorterThanTheProvidersReapIsRefusedNamingBothValues) {
  const IndexVerdict verdict = judge_indexes(*reply_with(kIdIndex + "," + reap_index(0)), rule(60));
  ASSERT_EQ(verdict.kind, IndexVerdictKind::kRefused);
  EXPECT_NE(verdict.detail.find("\"mongolock_reap\""), std::string::npos) << verdict.detail;
  EXPECT_NE(verdict.detail.find("expireAfterSeconds 0"), std::string::npos) << verdict.detail;
  EXPECT_NE(verdict.detail.find("reap_after_s 60"), std::string::npos) << verdict.detail;
  EXPECT_NE(verdict.detail.find("collMod"), std::string::npos) << verdict.detail;
  // One second short is short: the boundary is >=.
  EXPECT_EQ(judge_indexes(*reply_with(reap_index(59)), rule(60)).kind, IndexVerdictKind::kRefused);
}

TEST(IndexCheck, LegacyExpiresAtIndexIsRefusedInThePlainCollectionWithItsDropCommand) {
  const std::string legacy =
      R"({"v": 2, "key": {"expiresAt": 1}, "name": "mongolock_ttl", "expireAfterSeconds": 600})";
  const IndexVerdict verdict = judge_indexes(*reply_with(legacy), rule(60));
  ASSERT_EQ(verdict.kind, IndexVerdictKind::kRefused);
  EXPECT_NE(verdict.detail.find("earlier mongolock version"), std::string::npos) << verdict.detail;
  EXPECT_NE(
      verdict.detail.find(
          R"(db.getSiblingDB("db").getCollection("mongolock_locks").dropIndex("mongolock_ttl"))"),
      std::string::npos)
      << verdict.detail;
}

TEST(IndexCheck, AnyOtherTtlIndexIsRefusedWhateverItsValue) {
  for (const char* key :
       {R"({"expiresAt": 1})", R"({"reapAt": 1, "holder": 1})", R"({"createdAt": -1})"}) {
    const std::string index = R"({"v": 2, "key": )" + std::string(key) +
                              R"(, "name": "other", "expireAfterSeconds": 100000})";
    const IndexVerdict verdict = judge_indexes(*reply_with(index), rule(60, true, false));
    EXPECT_EQ(verdict.kind, IndexVerdictKind::kRefused) << key;
    EXPECT_NE(verdict.detail.find("dropIndex(\"other\")"), std::string::npos) << verdict.detail;
  }
}

TEST(IndexCheck, WithoutAReapIndexTheVerdictWaitsForTheProvidersOwnUnlessItCreatesNone) {
  EXPECT_EQ(judge_indexes(*reply_with(kIdIndex), rule(60, true)).kind,
            IndexVerdictKind::kUsableUntilIndexed);
  EXPECT_EQ(judge_indexes(*reply_with(kIdIndex), rule(60, false)).kind, IndexVerdictKind::kUsable);
  // A non-TTL index on reapAt deletes nothing, and is not a reap index either.
  EXPECT_EQ(judge_indexes(*reply_with(R"({"v": 2, "key": {"reapAt": 1}, "name": "plain"})"),
                          rule(60, true))
                .kind,
            IndexVerdictKind::kUsableUntilIndexed);
  // A reply without a cursor is a collection without indexes.
  EXPECT_EQ(judge_indexes(*make_bson(), rule(60, true)).kind,
            IndexVerdictKind::kUsableUntilIndexed);
}

// A value the judge cannot read is not "no TTL": Decimal128, NaN, a string and a double beyond
// int64 are refused (a NaN once reached an undefined double-to-integer cast).
TEST(IndexCheck, AnUnreadableExpireAfterSecondsIsRefusedNotIgnored) {
  for (const char* value : {R"({"$numberDecimal": "60"})", R"({"$numberDouble": "NaN"})", R"("60")",
                            R"({"$numberDouble": "1e300"})"}) {
    const std::string index = R"({"v": 2, "key": {"reapAt": 1}, "name": "mongolock_reap",
        "expireAfterSeconds": )" +
                              std::string(value) + "}";
    const IndexVerdict verdict = judge_indexes(*reply_with(index), rule(60));
    EXPECT_EQ(verdict.kind, IndexVerdictKind::kRefused) << value;
    EXPECT_NE(verdict.detail.find("(not a number)"), std::string::npos) << verdict.detail;
  }
}

// A reply that leaves a cursor open is part of the list: nothing is judged on it.
TEST(IndexCheck, AListInMoreThanOneBatchIsIncomplete) {
  const std::string json =
      R"({"cursor": {"id": {"$numberLong": "77"}, "ns": "db.mongolock_locks", "firstBatch": [)" +
      reap_index(60) + R"(]}, "ok": 1})";
  bson_error_t error;
  Bson reply(bson_new_from_json(reinterpret_cast<const uint8_t*>(json.data()),
                                static_cast<ssize_t>(json.size()), &error));
  ASSERT_TRUE(reply) << error.message;
  const IndexVerdict verdict = judge_indexes(*reply, rule(60));
  EXPECT_EQ(verdict.kind, IndexVerdictKind::kIncomplete);
  EXPECT_NE(verdict.detail.find("more than one batch"), std::string::npos) << verdict.detail;
}

// A collection named with a dash is named through getCollection in the hint, not as a property.
TEST(IndexCheck, HintsNameAnyCollectionThroughGetCollection) {
  const IndexRule dashed{"app.app-locks", 60, true, true};
  const IndexVerdict verdict = judge_indexes(*reply_with(reap_index(5, "short")), dashed);
  ASSERT_EQ(verdict.kind, IndexVerdictKind::kRefused);
  EXPECT_NE(verdict.detail.find(R"(collMod: "app-locks")"), std::string::npos) << verdict.detail;
  const IndexVerdict foreign = judge_indexes(
      *reply_with(R"({"v": 2, "key": {"at": 1}, "name": "x", "expireAfterSeconds": 9})"), dashed);
  EXPECT_NE(foreign.detail.find(R"(getCollection("app-locks").dropIndex("x"))"), std::string::npos)
      << foreign.detail;
}

// Names are quoted for JavaScript: a quote or a backslash in a name is escaped.
TEST(IndexCheck, HintsEscapeQuotesAndBackslashesInNames) {
  const IndexVerdict verdict = judge_indexes(
      *reply_with(R"({"v": 2, "key": {"at": 1}, "name": "x\\y", "expireAfterSeconds": 9})"),
      IndexRule{"app.a\"b", 60, true, true});
  EXPECT_NE(verdict.detail.find(R"(getCollection("a\"b").dropIndex("x\\y"))"), std::string::npos)
      << verdict.detail;
}

// A raw line break ends a JavaScript string: control characters are written as \uXXXX.
TEST(IndexCheck, HintsEscapeLineBreaksInNames) {
  const IndexVerdict verdict =
      judge_indexes(*reply_with(reap_index(5, "r")), IndexRule{"app.a\nb\rc", 60, true, true});
  ASSERT_EQ(verdict.kind, IndexVerdictKind::kRefused);
  EXPECT_NE(verdict.detail.find(R"(collMod: "a\u000ab\u000dc")"), std::string::npos)
      << verdict.detail;
  const std::string hint = verdict.detail.substr(verdict.detail.find("mongosh: "));
  EXPECT_EQ(hint.find_first_of("\n\r"), std::string::npos) << hint;
}

// A refusal wins over a suitable index listed before it.
TEST(IndexCheck, OneBadIndexAmongGoodOnesRefuses) {
  const IndexVerdict verdict =
      judge_indexes(*reply_with(reap_index(600) + "," + reap_index(5, "short")), rule(60));
  EXPECT_EQ(verdict.kind, IndexVerdictKind::kRefused);
  EXPECT_NE(verdict.detail.find("\"short\""), std::string::npos) << verdict.detail;
}

}  // namespace
}  // namespace mongolock::detail
