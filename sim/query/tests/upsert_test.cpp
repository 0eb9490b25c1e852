#include "query/tests/query_test_util.h"

namespace mongosim::query {
namespace {

using testing::error_code_of;
using testing::J;

TEST(UpsertSeed, TakesEqualitiesOnly) {
  EXPECT_DOC_EQ(upsert_seed(J(R"({"a": 1, "b": {"$gt": 2}, "c": {"$eq": 3}})")),
                R"({"a": 1, "c": 3})");
  EXPECT_DOC_EQ(upsert_seed(J(R"({"x": 1, "_id": 5})")), R"({"_id": 5, "x": 1})");
  EXPECT_DOC_EQ(upsert_seed(J(R"({"$and": [{"a": 1}, {"$and": [{"b": 2}]}]})")),
                R"({"a": 1, "b": 2})");
  EXPECT_DOC_EQ(upsert_seed(J(R"({"$or": [{"a": 1}], "e": {"$exists": true}})")), R"({})");
  EXPECT_DOC_EQ(upsert_seed(J(R"({"a.b": 1, "a.c": 2})")), R"({"a": {"b": 1, "c": 2}})");
  EXPECT_DOC_EQ(upsert_seed(J(R"({"a": {"$in": [1, 2]}})")), R"({})");
  EXPECT_DOC_EQ(upsert_seed(J(R"({"a": [1, 2]})")), R"({"a": [1, 2]})");
  EXPECT_DOC_EQ(upsert_seed(J(R"({"a": {"$regularExpression": {"pattern": "x", "options": ""}}})")),
                R"({})");
  EXPECT_DOC_EQ(upsert_seed(J(R"({"$expr": {"$eq": ["$a", 1]}, "b": 1})")), R"({"b": 1})");
}

TEST(UpsertSeed, ConflictingEqualitiesFailWith54) {
  std::string msg;
  EXPECT_EQ(error_code_of([] { (void)upsert_seed(J(R"({"a": 1, "$and": [{"a": 2}]})")); }, &msg),
            54);
  EXPECT_EQ(msg, "cannot infer query fields to set, path 'a' is matched twice");
  EXPECT_EQ(error_code_of([] { (void)upsert_seed(J(R"({"a": 1, "a.b": 2})")); }), 54);
  EXPECT_EQ(error_code_of([] { (void)upsert_seed(J(R"({"a": 1, "b": 2})")); }), 0);
}

TEST(UpsertSeed, ThenUpdateAppliesWithSetOnInsert) {
  EvalContext ctx;
  Document seed = upsert_seed(J(R"({"_id": 4})"));
  Update u =
      Update::parse(bson::Value::document(J(R"({"$inc": {"x": 1}, "$setOnInsert": {"y": 1}})")));
  EXPECT_DOC_EQ(u.apply(seed, true, ctx), R"({"_id": 4, "x": 1, "y": 1})");
  // A replacement upsert keeps only the _id of the seed.
  Document seed2 = upsert_seed(J(R"({"_id": 4, "z": 1})"));
  Update r = Update::parse(bson::Value::document(J(R"({"q": 1})")));
  EXPECT_DOC_EQ(r.apply(seed2, true, ctx), R"({"_id": 4, "q": 1})");
}

}  // namespace
}  // namespace mongosim::query
