#include "data/tests/store_fixture.h"

namespace mongosim::data::testing {
namespace {

class FindAndModifyTest : public StoreFixture {
 protected:
  FindAndModifyTest() {
    run(R"({"insert": "c", "documents": [{"_id": 1, "x": 11}, {"_id": 2, "x": 22}, {"_id": 3, "x": 33}]})");
  }
};

TEST_F(FindAndModifyTest, UpdateReturnsPreImageByDefault) {
  Document r = run(R"({"findAndModify": "c", "query": {"_id": 1}, "update": {"$inc": {"x": 1}}})");
  EXPECT_TRUE(Same(r, R"({"lastErrorObject": {"n": 1, "updatedExisting": true},
                          "value": {"_id": 1, "x": 11}})"));
  EXPECT_TRUE(Same(all("c")[0], R"({"_id": 1, "x": 12})"));
}

TEST_F(FindAndModifyTest, NewReturnsPostImageProjected) {
  Document r = run(R"({"findAndModify": "c", "query": {"_id": 2}, "update": {"$inc": {"x": 1}},
                       "new": true, "fields": {"_id": 0}})");
  EXPECT_TRUE(
      Same(r, R"({"lastErrorObject": {"n": 1, "updatedExisting": true}, "value": {"x": 23}})"));
}

TEST_F(FindAndModifyTest, SortPicksTheDocument) {
  Document r = run(R"({"findAndModify": "c", "query": {}, "sort": {"x": -1}, "remove": true})");
  EXPECT_TRUE(Same(r, R"({"lastErrorObject": {"n": 1}, "value": {"_id": 3, "x": 33}})"));
  EXPECT_EQ(all("c").size(), 2u);
}

TEST_F(FindAndModifyTest, NoMatchNoUpsert) {
  EXPECT_TRUE(
      Same(run(R"({"findAndModify": "c", "query": {"_id": 9}, "update": {"$set": {"a": 1}}})"),
           R"({"lastErrorObject": {"n": 0, "updatedExisting": false}, "value": null})"));
  EXPECT_TRUE(Same(run(R"({"findAndModify": "c", "query": {"_id": 9}, "remove": true})"),
                   R"({"lastErrorObject": {"n": 0}, "value": null})"));
}

TEST_F(FindAndModifyTest, UpsertReportsUpsertedId) {
  EXPECT_TRUE(Same(run(R"({"findAndModify": "c", "query": {"_id": 4}, "update": {"$inc": {"x": 1}},
                          "upsert": true, "fields": {"x": 1, "_id": 0}})"),
                   R"({"lastErrorObject": {"n": 1, "updatedExisting": false, "upserted": 4},
                       "value": null})"));
  EXPECT_TRUE(Same(run(R"({"findAndModify": "c", "query": {"_id": 5}, "update": {"$inc": {"x": 1}},
                          "upsert": true, "new": true})"),
                   R"({"lastErrorObject": {"n": 1, "updatedExisting": false, "upserted": 5},
                       "value": {"_id": 5, "x": 1}})"));
  EXPECT_TRUE(Same(all("c")[3], R"({"_id": 4, "x": 1})"));
}

TEST_F(FindAndModifyTest, PipelineUpdate) {
  Document r = run(R"({"findAndModify": "c", "query": {"_id": 1},
                       "update": [{"$set": {"y": {"$add": ["$x", 1]}}}], "new": true})");
  EXPECT_TRUE(Same(r.get("value")->as_document(), R"({"_id": 1, "x": 11, "y": 12})"));
}

TEST_F(FindAndModifyTest, ValidationErrorsAreFailedToParse) {
  for (const char* cmd :
       {R"({"findAndModify": "c", "query": {}})",
        R"({"findAndModify": "c", "remove": true, "update": {"$set": {"a": 1}}})",
        R"({"findAndModify": "c", "remove": true, "upsert": true})",
        R"({"findAndModify": "c", "remove": true, "new": true})",
        R"({"findAndModify": "c", "remove": true, "arrayFilters": []})",
        R"({"findAndModify": "c", "update": [{"$set": {"a": 1}}], "arrayFilters": []})"}) {
    EXPECT_EQ(fail(cmd).code(), code::kFailedToParse) << cmd;
  }
}

TEST_F(FindAndModifyTest, DuplicateKeyOnUpsertIsTopLevelWithKeyPattern) {
  run(R"({"createIndexes": "c", "indexes": [{"key": {"x": 1}, "name": "x_1", "unique": true}]})");
  // The usual "acquire if expired" shape: the filter is not an equality on the unique key alone,
  // so the insert collides and surfaces 11000 (docs/mongodb-behaviour.md, Duplicate keys).
  CommandError e = fail(R"({"findAndModify": "c", "query": {"_id": 1, "x": {"$gt": 100}},
                            "update": {"$set": {"x": 22}}, "upsert": true})");
  EXPECT_EQ(e.code(), code::kDuplicateKey);
  EXPECT_NE(std::string(e.what()).find("E11000 duplicate key error collection: db.c index: _id_"),
            std::string::npos);
  EXPECT_TRUE(Same(*e.extra().get("keyPattern"), R"({"_id": 1})"));
  EXPECT_TRUE(Same(*e.extra().get("keyValue"), R"({"_id": 1})"));
}

TEST_F(FindAndModifyTest, AliasIsRegistered) {
  Document r = run(R"({"findandmodify": "c", "query": {"_id": 1}, "remove": true})");
  EXPECT_EQ(r.get("lastErrorObject")->as_document().get("n")->as_int32(), 1);
}

}  // namespace
}  // namespace mongosim::data::testing
