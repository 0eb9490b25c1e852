#include "data/tests/store_fixture.h"

namespace mongosim::data::testing {
namespace {

using CatalogTest = StoreFixture;

TEST_F(CatalogTest, CreateIndexesReportsCountsAndIsIdempotent) {
  EXPECT_TRUE(
      Same(run(R"({"createIndexes": "c", "indexes": [{"key": {"a": 1}, "name": "a_1"}]})"),
           R"({"numIndexesBefore": 1, "numIndexesAfter": 2, "createdCollectionAutomatically": true,
                       "commitQuorum": "votingMembers"})"));
  EXPECT_TRUE(Same(
      run(R"({"createIndexes": "c", "indexes": [{"key": {"a": 1}, "name": "a_1"}]})"),
      R"({"numIndexesBefore": 2, "numIndexesAfter": 2, "note": "all indexes already exist"})"));
}

TEST_F(CatalogTest, IndexNameDefaultsFromKey) {
  run(R"({"createIndexes": "c", "indexes": [{"key": {"a": 1, "b": -1}}]})");
  Document r = run(R"({"listIndexes": "c"})");
  EXPECT_TRUE(Same(cursor_of(r), R"({"firstBatch": [
      {"v": 2, "key": {"_id": 1}, "name": "_id_"},
      {"v": 2, "key": {"a": 1, "b": -1}, "name": "a_1_b_-1"}],
      "id": {"$numberLong": "0"}, "ns": "db.$cmd.listIndexes.c"})"));
}

TEST_F(CatalogTest, ConflictingIndexesGet85And86) {
  run(R"({"createIndexes": "c", "indexes": [{"key": {"a": 1}, "name": "a_1"}]})");
  EXPECT_EQ(fail(R"({"createIndexes": "c", "indexes": [{"key": {"b": 1}, "name": "a_1"}]})").code(),
            code::kIndexKeySpecsConflict);
  EXPECT_EQ(
      fail(R"({"createIndexes": "c", "indexes": [{"key": {"a": 1}, "name": "other"}]})").code(),
      code::kIndexOptionsConflict);
  EXPECT_EQ(
      fail(
          R"({"createIndexes": "c", "indexes": [{"key": {"a": 1}, "name": "a_1", "unique": true}]})")
          .code(),
      code::kIndexOptionsConflict);
}

TEST_F(CatalogTest, BadIndexSpecs) {
  EXPECT_EQ(fail(R"({"createIndexes": "c", "indexes": [{"name": "x"}]})").code(),
            code::kFailedToParse);
  EXPECT_EQ(fail(R"({"createIndexes": "c", "indexes": [{"key": {"a": 0}}]})").code(),
            code::kCannotCreateIndex);
  EXPECT_EQ(
      fail(
          R"({"createIndexes": "c", "indexes": [{"key": {"a": 1, "b": 1}, "expireAfterSeconds": 5}]})")
          .code(),
      code::kCannotCreateIndex);
  EXPECT_EQ(
      fail(R"({"createIndexes": "c", "indexes": [{"key": {"a": 1}, "expireAfterSeconds": "x"}]})")
          .code(),
      code::kCannotCreateIndex);
  EXPECT_EQ(
      fail(R"({"createIndexes": "c", "indexes": [{"key": {"_id": 1}, "unique": true}]})").code(),
      code::kInvalidOptions);
  EXPECT_EQ(fail(R"({"createIndexes": "c", "indexes": {}})").code(), code::kTypeMismatch);
  // Beyond 2^31 - 1 seconds, or NaN: refused as mongod refuses it, never cast (1e300 to int64 is
  // undefined).
  for (const char* ttl : {"1e300", "2147483648", R"({"$numberDouble": "NaN"})"}) {
    const CommandError e =
        fail(std::string(R"({"createIndexes": "c", "indexes": [{"key": {"a": 1}, )") +
             R"("name": "a_1", "expireAfterSeconds": )" + ttl + "}]}");
    EXPECT_EQ(e.code(), code::kCannotCreateIndex) << ttl;
    EXPECT_NE(std::string(e.what()).find("must be within an acceptable range"), std::string::npos)
        << ttl << ": " << e.what();
  }
}

TEST_F(CatalogTest, UniqueIndexOverDuplicatesFails) {
  run(R"({"insert": "c", "documents": [{"_id": 1, "a": 1}, {"_id": 2, "a": 1}]})");
  CommandError e = fail(
      R"({"createIndexes": "c", "indexes": [{"key": {"a": 1}, "name": "a_1", "unique": true}]})");
  EXPECT_EQ(e.code(), code::kDuplicateKey);
  EXPECT_EQ(cursor_of(run(R"({"listIndexes": "c"})")).get("firstBatch")->as_array().size(), 1u);
}

TEST_F(CatalogTest, UniqueCompoundIndexEnforcedOnInsertAndUpdate) {
  run(R"({"createIndexes": "c", "indexes": [{"key": {"a": 1, "b": 1}, "name": "a_1_b_1", "unique": true}]})");
  run(R"({"insert": "c", "documents": [{"_id": 1, "a": 1, "b": 1}, {"_id": 2, "a": 1, "b": 2}]})");
  Document dup = run(R"({"insert": "c", "documents": [{"_id": 3, "a": 1, "b": 1}]})");
  const Document& we = dup.get("writeErrors")->as_array()[0].as_document();
  EXPECT_EQ(we.get("code")->as_int32(), code::kDuplicateKey);
  EXPECT_EQ(we.get("errmsg")->as_string(),
            "E11000 duplicate key error collection: db.c index: a_1_b_1 dup key: { a: 1, b: 1 }");
  EXPECT_TRUE(Same(*we.get("keyValue"), R"({"a": 1, "b": 1})"));
  Document upd = run(R"({"update": "c", "updates": [{"q": {"_id": 2}, "u": {"$set": {"b": 1}}}]})");
  EXPECT_EQ(upd.get("writeErrors")->as_array()[0].as_document().get("code")->as_int32(),
            code::kDuplicateKey);
  EXPECT_TRUE(Same(all("c")[1], R"({"_id": 2, "a": 1, "b": 2})"));
}

// A document with arrays in two fields of a compound unique index is refused as mongod refuses it
// (171, "cannot index parallel arrays"): its keys would be the product of the arrays (twenty
// two-element arrays made a million keys, 20 s and 4 GB for one insert). One array is indexed.
TEST_F(CatalogTest, ParallelArraysUnderACompoundUniqueIndexAreRefused) {
  run(R"({"createIndexes": "c", "indexes": [{"key": {"a": 1, "b": 1}, "name": "a_1_b_1", "unique": true}]})");
  Document parallel =
      run(R"({"insert": "c", "documents": [{"_id": 1, "a": [1, 2], "b": [3, 4]}]})");
  const Document& we = parallel.get("writeErrors")->as_array()[0].as_document();
  EXPECT_EQ(we.get("code")->as_int32(), 171);
  EXPECT_NE(we.get("errmsg")->as_string().find("cannot index parallel arrays"), std::string::npos);
  run(R"({"insert": "c", "documents": [{"_id": 2, "a": [1, 2], "b": 3}, {"_id": 3, "a": 4, "b": [5, 6]}]})");
  EXPECT_EQ(all("c").size(), 2U);
  // An index built over a document with parallel arrays fails the same way.
  run(R"({"insert": "d", "documents": [{"_id": 1, "a": [1], "c": [2, 3]}]})");
  EXPECT_EQ(
      fail(
          R"({"createIndexes": "d", "indexes": [{"key": {"a": 1, "c": 1}, "name": "a_1_c_1", "unique": true}]})")
          .code(),
      171);
}

TEST_F(CatalogTest, UniqueIndexTreatsMissingFieldAsNull) {
  run(R"({"createIndexes": "c", "indexes": [{"key": {"k": 1}, "name": "k_1", "unique": true}]})");
  run(R"({"insert": "c", "documents": [{"_id": 1}]})");
  Document r = run(R"({"insert": "c", "documents": [{"_id": 2}]})");
  EXPECT_EQ(r.get("writeErrors")->as_array()[0].as_document().get("code")->as_int32(),
            code::kDuplicateKey);
}

TEST_F(CatalogTest, DeletingFreesUniqueKeys) {
  run(R"({"createIndexes": "c", "indexes": [{"key": {"k": 1}, "name": "k_1", "unique": true}]})");
  run(R"({"insert": "c", "documents": [{"_id": 1, "k": 5}]})");
  run(R"({"delete": "c", "deletes": [{"q": {"_id": 1}, "limit": 1}]})");
  EXPECT_TRUE(Same(run(R"({"insert": "c", "documents": [{"_id": 2, "k": 5}]})"), R"({"n": 1})"));
}

TEST_F(CatalogTest, ListIndexesOnMissingCollectionIs26) {
  EXPECT_EQ(fail(R"({"listIndexes": "nope"})").code(), code::kNamespaceNotFound);
}

TEST_F(CatalogTest, ListCollectionsWithNameFilter) {
  run(R"({"insert": "a", "documents": [{}]})");
  run(R"({"create": "b"})");
  Document r = run(R"({"listCollections": 1, "filter": {"name": "b"}})");
  const bson::Array& batch = cursor_of(r).get("firstBatch")->as_array();
  ASSERT_EQ(batch.size(), 1u);
  const Document& info = batch[0].as_document();
  EXPECT_EQ(info.get("name")->as_string(), "b");
  EXPECT_EQ(info.get("type")->as_string(), "collection");
  EXPECT_EQ(info.get("info")->as_document().get("uuid")->binary_subtype(), 4);
  EXPECT_EQ(cursor_of(r).get("ns")->as_string(), "db.$cmd.listCollections");
  EXPECT_EQ(cursor_of(run(R"({"listCollections": 1})")).get("firstBatch")->as_array().size(), 2u);
}

TEST_F(CatalogTest, DropAndDropDatabase) {
  run(R"({"insert": "c", "documents": [{"_id": 1}]})");
  EXPECT_TRUE(Same(run(R"({"drop": "c"})"), R"({"nIndexesWas": 1, "ns": "db.c"})"));
  EXPECT_TRUE(all("c").empty());
  EXPECT_TRUE(Same(run(R"({"drop": "c"})"), R"({})"));
  run(R"({"insert": "c", "documents": [{"_id": 1}]})");
  EXPECT_TRUE(Same(run(R"({"dropDatabase": 1})"), R"({"dropped": "db"})"));
  EXPECT_TRUE(all("c").empty());
}

TEST_F(CatalogTest, ListDatabasesShowsNonEmptyDatabases) {
  run("one", J(R"({"insert": "c", "documents": [{"_id": 1}]})"));
  Document r = run("admin", J(R"({"listDatabases": 1, "nameOnly": true})"));
  EXPECT_TRUE(Same(r, R"({"databases": [{"name": "one"}]})"));
}

}  // namespace
}  // namespace mongosim::data::testing
