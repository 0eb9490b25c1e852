#include "data/tests/store_fixture.h"

namespace mongosim::data::testing {
namespace {

using InsertFindTest = StoreFixture;

TEST_F(InsertFindTest, InsertThenFindInNaturalOrder) {
  EXPECT_TRUE(Same(run(R"({"insert": "c", "documents": [{"_id": 2, "x": 1}, {"_id": 1, "x": 2}]})"),
                   R"({"n": 2})"));
  Document r = run(R"({"find": "c", "filter": {}})");
  EXPECT_TRUE(Same(r, R"({"cursor": {"firstBatch": [{"_id": 2, "x": 1}, {"_id": 1, "x": 2}],
                                     "id": {"$numberLong": "0"}, "ns": "db.c"}})"));
}

TEST_F(InsertFindTest, GeneratesObjectIdFirstWhenMissing) {
  run(R"({"insert": "c", "documents": [{"x": 1, "y": 2}]})");
  bson::Array docs = all("c");
  ASSERT_EQ(docs.size(), 1u);
  const Document& d = docs[0].as_document();
  EXPECT_EQ(d.at(0).first, "_id");
  EXPECT_EQ(d.at(0).second.type(), bson::Type::kObjectId);
  EXPECT_EQ(d.at(1).first, "x");
}

TEST_F(InsertFindTest, MovesGivenIdToTheFront) {
  run(R"({"insert": "c", "documents": [{"x": 1, "_id": 7}]})");
  EXPECT_TRUE(Same(all("c")[0], R"({"_id": 7, "x": 1})"));
}

TEST_F(InsertFindTest, DuplicateIdIsAWriteErrorWithKeyPatternAndValue) {
  run(R"({"insert": "c", "documents": [{"_id": 1}]})");
  Document r = run(R"({"insert": "c", "documents": [{"_id": 1}]})");
  EXPECT_TRUE(Same(r, R"({"n": 0, "writeErrors": [{"index": 0, "code": 11000,
      "errmsg": "E11000 duplicate key error collection: db.c index: _id_ dup key: { _id: 1 }",
      "keyPattern": {"_id": 1}, "keyValue": {"_id": 1}}]})"));
}

TEST_F(InsertFindTest, DuplicateStringIdIsQuotedInErrmsg) {
  run(R"({"insert": "c", "documents": [{"_id": "a"}]})");
  Document r = run(R"({"insert": "c", "documents": [{"_id": "a"}]})");
  const Document& we = r.get("writeErrors")->as_array()[0].as_document();
  EXPECT_EQ(we.get("errmsg")->as_string(),
            "E11000 duplicate key error collection: db.c index: _id_ dup key: { _id: \"a\" }");
}

TEST_F(InsertFindTest, OrderedStopsAtFirstErrorUnorderedContinues) {
  run(R"({"insert": "c", "documents": [{"_id": 1}]})");
  Document ordered = run(R"({"insert": "c", "documents": [{"_id": 2}, {"_id": 1}, {"_id": 3}]})");
  EXPECT_EQ(ordered.get("n")->as_int32(), 1);
  EXPECT_EQ(ordered.get("writeErrors")->as_array().size(), 1u);
  EXPECT_EQ(all("c").size(), 2u);
  Document unordered = run(
      R"({"insert": "c", "ordered": false, "documents": [{"_id": 1}, {"_id": 4}, {"_id": 2}]})");
  EXPECT_EQ(unordered.get("n")->as_int32(), 1);
  bson::Array errors = unordered.get("writeErrors")->as_array();
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0].as_document().get("index")->as_int32(), 0);
  EXPECT_EQ(errors[1].as_document().get("index")->as_int32(), 2);
  EXPECT_EQ(all("c").size(), 3u);
}

TEST_F(InsertFindTest, BadArgumentsGetMongodCodes) {
  EXPECT_EQ(fail(R"({"insert": "c", "documents": {"_id": 1}})").code(), code::kTypeMismatch);
  EXPECT_EQ(fail(R"({"insert": "c"})").code(), 40414);
  EXPECT_EQ(fail(R"({"insert": "c", "documents": []})").code(), 16);
  EXPECT_EQ(fail(R"({"insert": 1, "documents": [{}]})").code(), code::kInvalidNamespace);
  EXPECT_EQ(fail(R"({"insert": "", "documents": [{}]})").code(), code::kInvalidNamespace);
  EXPECT_EQ(fail(R"({"insert": "a$b", "documents": [{}]})").code(), code::kInvalidNamespace);
  EXPECT_EQ(fail(R"({"insert": "c", "documents": [{}]})", "bad.db").code(),
            code::kInvalidNamespace);
  EXPECT_EQ(fail(R"({"insert": "c", "documents": [1]})").code(), code::kTypeMismatch);
  EXPECT_EQ(fail(R"({"insert": "c", "documents": [{}], "ordered": "yes"})").code(),
            code::kTypeMismatch);
}

TEST_F(InsertFindTest, ArrayIdIsRefused) {
  Document r = run(R"({"insert": "c", "documents": [{"_id": [1, 2]}]})");
  EXPECT_EQ(r.get("writeErrors")->as_array()[0].as_document().get("code")->as_int32(),
            code::kInvalidIdField);
}

TEST_F(InsertFindTest, TooLargeDocumentIsRefused) {
  Document big{{"_id", bson::V(int32_t{1})}, {"s", bson::V(std::string(17 * 1024 * 1024, 'x'))}};
  Document cmd{{"insert", bson::V("c")}, {"documents", bson::V(bson::Array{bson::V(big)})}};
  Document r = run(cmd);
  EXPECT_EQ(r.get("n")->as_int32(), 0);
  EXPECT_EQ(r.get("writeErrors")->as_array()[0].as_document().get("code")->as_int32(),
            code::kBadValue);
}

TEST_F(InsertFindTest, FindFilterSortSkipLimitProjection) {
  run(R"({"insert": "c", "documents": [{"_id": 1, "x": 11}, {"_id": 2, "x": 22}, {"_id": 3, "x": 33},
          {"_id": 4, "x": 44}, {"_id": 5, "x": 55}, {"_id": 6, "x": 66}]})");
  Document r = run(R"({"find": "c", "filter": {"_id": {"$gt": 2}}, "sort": {"_id": -1},
                       "skip": 1, "limit": 2, "projection": {"_id": 0}})");
  EXPECT_TRUE(Same(cursor_of(r), R"({"firstBatch": [{"x": 55}, {"x": 44}],
                                     "id": {"$numberLong": "0"}, "ns": "db.c"})"));
}

TEST_F(InsertFindTest, FindOnMissingCollectionIsEmpty) {
  EXPECT_TRUE(
      Same(run(R"({"find": "nope"})"),
           R"({"cursor": {"firstBatch": [], "id": {"$numberLong": "0"}, "ns": "db.nope"}})"));
}

TEST_F(InsertFindTest, GetMoreWalksBatchesAndClosesTheCursor) {
  run(R"({"insert": "c", "documents": [{"_id": 1}, {"_id": 2}, {"_id": 3}, {"_id": 4}, {"_id": 5}]})");
  Document first = run(R"({"find": "c", "batchSize": 2})");
  const Value* id = cursor_of(first).get("id");
  ASSERT_EQ(id->type(), bson::Type::kInt64);
  ASSERT_NE(id->as_int64(), 0);
  EXPECT_EQ(cursor_of(first).get("firstBatch")->as_array().size(), 2u);
  Document get_more{{"getMore", *id}, {"collection", bson::V("c")}, {"batchSize", bson::V(2)}};
  Document second = run(get_more);
  EXPECT_EQ(cursor_of(second).get("nextBatch")->as_array().size(), 2u);
  EXPECT_EQ(cursor_of(second).get("id")->as_int64(), id->as_int64());
  Document third = run(get_more);
  EXPECT_TRUE(Same(cursor_of(third), R"({"nextBatch": [{"_id": 5}], "id": {"$numberLong": "0"},
                                          "ns": "db.c"})"));
  try {
    run(get_more);
    FAIL() << "getMore on an exhausted cursor must fail";
  } catch (const CommandError& e) {
    EXPECT_EQ(e.code(), code::kCursorNotFound);
  }
}

TEST_F(InsertFindTest, GetMoreRequiresInt64AndTheSameNamespace) {
  run(R"({"insert": "c", "documents": [{"_id": 1}, {"_id": 2}]})");
  Document first = run(R"({"find": "c", "batchSize": 1})");
  Value id = *cursor_of(first).get("id");
  EXPECT_EQ(fail(R"({"getMore": 5, "collection": "c"})").code(), code::kTypeMismatch);
  try {
    run(Document{{"getMore", id}, {"collection", bson::V("other")}});
    FAIL();
  } catch (const CommandError& e) {
    EXPECT_EQ(e.code(), code::kCursorNotFound);
  }
}

TEST_F(InsertFindTest, KillCursorsReportsKilledAndNotFound) {
  run(R"({"insert": "c", "documents": [{"_id": 1}, {"_id": 2}]})");
  Value id = *cursor_of(run(R"({"find": "c", "batchSize": 1})")).get("id");
  Document r = run(Document{{"killCursors", bson::V("c")},
                            {"cursors", bson::V(bson::Array{id, bson::V(int64_t{42})})}});
  EXPECT_TRUE(r.get("cursorsKilled")->as_array()[0].identical(id));
  EXPECT_EQ(r.get("cursorsNotFound")->as_array()[0].as_int64(), 42);
  EXPECT_TRUE(r.get("cursorsAlive")->as_array().empty());
}

TEST_F(InsertFindTest, SingleBatchNeverOpensACursor) {
  run(R"({"insert": "c", "documents": [{"_id": 1}, {"_id": 2}, {"_id": 3}]})");
  Document r = run(R"({"find": "c", "batchSize": 1, "singleBatch": true})");
  EXPECT_EQ(cursor_of(r).get("id")->as_int64(), 0);
  EXPECT_EQ(cursor_of(r).get("firstBatch")->as_array().size(), 1u);
}

TEST_F(InsertFindTest, NegativeLimitOrSkipIsRefused) {
  EXPECT_EQ(fail(R"({"find": "c", "skip": -1})").code(), 51024);
  EXPECT_EQ(fail(R"({"find": "c", "limit": -1})").code(), 51024);
  EXPECT_EQ(fail(R"({"find": "c", "filter": 3})").code(), code::kTypeMismatch);
}

TEST_F(InsertFindTest, CountWithQuerySkipLimit) {
  run(R"({"insert": "c", "documents": [{"_id": 1, "a": 1}, {"_id": 2, "a": 1}, {"_id": 3, "a": 2}]})");
  EXPECT_TRUE(Same(run(R"({"count": "c"})"), R"({"n": 3})"));
  EXPECT_TRUE(Same(run(R"({"count": "c", "query": {"a": 1}})"), R"({"n": 2})"));
  EXPECT_TRUE(Same(run(R"({"count": "c", "skip": 1, "limit": 1})"), R"({"n": 1})"));
  EXPECT_TRUE(Same(run(R"({"count": "missing"})"), R"({"n": 0})"));
  // A negative limit counts as its absolute value; the most negative long has none (its
  // negation overflows): no limit.
  EXPECT_TRUE(Same(run(R"({"count": "c", "limit": -2})"), R"({"n": 2})"));
  EXPECT_TRUE(Same(run(R"({"count": "c", "limit": {"$numberLong": "-9223372036854775808"}})"),
                   R"({"n": 3})"));
}

TEST_F(InsertFindTest, AggregateCountDocumentsShape) {
  run(R"({"insert": "c", "documents": [{"_id": 1, "a": 1}, {"_id": 2, "a": 1}, {"_id": 3, "a": 2}]})");
  Document r = run(R"({"aggregate": "c", "pipeline": [{"$match": {"a": 1}},
                       {"$group": {"_id": 1, "n": {"$sum": 1}}}], "cursor": {}})");
  EXPECT_TRUE(Same(cursor_of(r), R"({"firstBatch": [{"_id": 1, "n": 2}],
                                     "id": {"$numberLong": "0"}, "ns": "db.c"})"));
  EXPECT_EQ(fail(R"({"aggregate": "c", "pipeline": []})").code(), code::kFailedToParse);
  EXPECT_EQ(fail(R"({"aggregate": "c", "cursor": {}})").code(), 40414);
}

// An empty stage after the first is refused as every stage without exactly one field is (40323);
// the check for a misplaced $changeStream once read its name first and ended the member.
TEST_F(InsertFindTest, AnEmptyStageAfterTheFirstIsRefused) {
  EXPECT_EQ(fail(R"({"aggregate": "c", "cursor": {}, "pipeline": [{"$match": {}}, {}]})").code(),
            40323);
  EXPECT_EQ(fail(R"({"aggregate": "c", "cursor": {}, "pipeline": [{}]})").code(), 40323);
}

// An aggregation can build a document whose encoding is exponential in the memory it holds (a
// $reduce nesting its accumulator twice per step: 2^40 leaves in 40 shared arrays). A result is
// measured within 16 MiB (it used to be walked leaf by leaf, which never ended) and refused as
// mongod refuses a result over its limit.
TEST_F(InsertFindTest, AnAggregationResultBuildingSharedPartsIsRefusedAsTooLarge) {
  run(R"({"insert": "c", "documents": [{"_id": 1}]})");
  const CommandError e = fail(R"({"aggregate": "c", "cursor": {}, "pipeline": [{"$project":
      {"d": {"$reduce": {"input": [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1], "initialValue": 0, "in": ["$$value", "$$value"]}}}}]})");
  EXPECT_EQ(e.code(), code::kBufBuilderTooLarge);
  EXPECT_NE(std::string(e.what()).find("past the 64MB limit"), std::string::npos) << e.what();
  // findAndModify's projected reply: the same error, after the write (as mongod's).
  const CommandError f = fail(R"({"findAndModify": "c", "query": {"_id": 1}, "update": {"$set":
      {"y": 1}}, "fields": {"d": {"$reduce": {"input": [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1], "initialValue": 0, "in": ["$$value", "$$value"]}}}})");
  EXPECT_EQ(f.code(), code::kBufBuilderTooLarge);
  EXPECT_TRUE(Same(all("c")[0], R"({"_id": 1, "y": 1})"));
}

// An aggregation's maxTimeMS bounds its expressions (received an hour ago here: the deadline has
// passed, with no timing involved); a getMore's maxTimeMS is an await time and bounds nothing
// (ChangeStreamTest covers an event evaluated under one).
TEST_F(InsertFindTest, AnAggregationOutOfTimeFails) {
  run(R"({"insert": "c", "documents": [{"_id": 1}]})");
  received_ago_ = std::chrono::hours(1);
  const std::string pipeline =
      R"([{"$project": {"v": {"$reduce": {"input": [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], "initialValue": 0, "in": {"$add": ["$$value", 1]}}}}}])";
  EXPECT_EQ(
      fail(R"({"aggregate": "c", "cursor": {}, "maxTimeMS": 1000, "pipeline": )" + pipeline + "}")
          .code(),
      code::kMaxTimeMSExpired);
  const Document r = run(R"({"aggregate": "c", "cursor": {}, "pipeline": )" + pipeline + "}");
  EXPECT_TRUE(Same(r.get("cursor")->as_document().get("firstBatch")->as_array()[0].as_document(),
                   R"({"_id": 1, "v": 2000})"));
}

// A scan's filter is under the command's maxTimeMS too, with no expression in it: each document
// is matched only before the deadline (the command was received an hour ago here, so it has
// passed, with no timing involved). Without a maxTimeMS the same commands run. What this omits: a
// deadline that passes part-way through a multi-document write (it keeps what it changed before:
// docs Expressions 8), which needs a clock the test could stop mid-scan.
TEST_F(InsertFindTest, AScanOutOfTimeFailsBetweenDocuments) {
  run(R"({"insert": "c", "documents": [{"_id": 1, "a": "x"}, {"_id": 2, "a": "y"}]})");
  received_ago_ = std::chrono::hours(1);
  for (const char* command :
       {R"({"find": "c", "filter": {"a": {"$regex": "^x"}}, "maxTimeMS": 1000})",
        R"({"count": "c", "query": {"a": "y"}, "maxTimeMS": 1000})",
        R"({"delete": "c", "deletes": [{"q": {"a": "x"}, "limit": 0}], "maxTimeMS": 1000})"}) {
    EXPECT_EQ(fail(command).code(), code::kMaxTimeMSExpired) << command;
  }
  EXPECT_EQ(all("c").size(), 2U);  // the delete that ran out removed nothing
  const Document r = run(R"({"count": "c", "query": {"a": {"$regex": "^x"}}})");
  EXPECT_EQ(r.get("n")->number_as_double(), 1.0);
}

// A result may be up to 16 MiB + 16 KiB (mongod's internal limit); one past it is 10334.
TEST_F(InsertFindTest, AResultUpTo16MiBPlus16KiBIsReturned) {
  const std::string big(16 * 1024 * 1024 - 40, 'x');
  bson::Document doc{{"_id", bson::V(int32_t{1})}, {"s", bson::V(big)}};
  run(bson::Document{{"insert", bson::V("c")}, {"documents", bson::V(bson::Array{bson::V(doc)})}});
  const Document r = run(R"({"aggregate": "c", "cursor": {}, "pipeline": [{"$addFields":
      {"y": {"$literal": "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz"}}}]})");
  EXPECT_EQ(r.get("cursor")->as_document().get("firstBatch")->as_array().size(), 1U);
  const std::string over(20 * 1024, 'z');
  const CommandError e = fail(R"({"aggregate": "c", "cursor": {}, "pipeline": [{"$addFields":
      {"y": ")" + over + R"("}}]})");
  EXPECT_EQ(e.code(), code::kBSONObjectTooLarge);
}

}  // namespace
}  // namespace mongosim::data::testing
