#include "query/tests/query_test_util.h"

namespace mongosim::query {
namespace {

using testing::ctx_at;
using testing::error_code_of;
using testing::J;
using testing::JV;

std::vector<Document> docs(std::initializer_list<std::string_view> jsons) {
  std::vector<Document> out;
  for (auto j : jsons) out.push_back(J(j));
  return out;
}

std::vector<Document> run(std::string_view stages, std::vector<Document> input) {
  return run_pipeline(JV(stages).as_array(), std::move(input), ctx_at());
}

TEST(Pipeline, CountDocumentsShape) {
  auto input = docs({R"({"_id": 1, "a": 1})", R"({"_id": 2, "a": 2})", R"({"_id": 3, "a": 2})"});
  auto out = run(R"([{"$match": {"a": 2}}, {"$group": {"_id": 1, "n": {"$sum": 1}}}])", input);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_DOC_EQ(out[0], R"({"_id": 1, "n": 2})");
  EXPECT_TRUE(
      run(R"([{"$match": {"a": 9}}, {"$group": {"_id": 1, "n": {"$sum": 1}}}])", input).empty());
}

TEST(Pipeline, SortSkipLimitCountProject) {
  auto input = docs({R"({"_id": 1, "a": 3})", R"({"_id": 2, "a": 1})", R"({"_id": 3, "a": 2})"});
  auto out =
      run(R"([{"$sort": {"a": 1}}, {"$skip": 1}, {"$limit": 1}, {"$project": {"a": 1, "_id": 0}}])",
          input);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_DOC_EQ(out[0], R"({"a": 2})");
  out = run(R"([{"$count": "total"}])", input);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_DOC_EQ(out[0], R"({"total": 3})");
  EXPECT_TRUE(run(R"([{"$match": {"a": 7}}, {"$count": "total"}])", input).empty());
}

TEST(Pipeline, GroupAccumulators) {
  auto input = docs({R"({"k": "x", "v": 1})", R"({"k": "y", "v": 5})", R"({"k": "x", "v": 3})"});
  auto out = run(R"([{"$group": {"_id": "$k", "s": {"$sum": "$v"}, "m": {"$max": "$v"},
                     "a": {"$avg": "$v"}, "p": {"$push": "$v"}}}, {"$sort": {"_id": 1}}])",
                 input);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_DOC_EQ(out[0], R"({"_id": "x", "s": 4, "m": 3, "a": 2.0, "p": [1, 3]})");
  EXPECT_DOC_EQ(out[1], R"({"_id": "y", "s": 5, "m": 5, "a": 5.0, "p": [5]})");
}

TEST(Pipeline, AddFieldsUnsetUnwind) {
  auto out = run(R"([{"$addFields": {"b": {"$multiply": ["$a", 2]}}}, {"$unset": "a"}])",
                 docs({R"({"_id": 1, "a": 2})"}));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_DOC_EQ(out[0], R"({"_id": 1, "b": 4})");
  // Colliding paths fail when the stage is parsed, with no document to apply it to.
  EXPECT_EQ(error_code_of([] { (void)run(R"([{"$unset": ["a", "a.b"]}])", {}); }), 31249);
  // $unset reaches into arrays nested in arrays, as every projection does.
  out = run(R"([{"$unset": "a.b"}])", docs({R"({"_id": 1, "a": [[{"b": 1, "c": 1}], {"b": 2}]})"}));
  EXPECT_DOC_EQ(out[0], R"({"_id": 1, "a": [[{"c": 1}], {}]})");
  out = run(R"([{"$unwind": "$a"}])", docs({R"({"_id": 1, "a": [1, 2]})", R"({"_id": 2})"}));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_DOC_EQ(out[1], R"({"_id": 1, "a": 2})");
}

// In a pipeline's $project an operator object is an expression, $slice included; find's
// projection reads {$slice: ...} as its own operator, which mongosim refuses (238).
TEST(Pipeline, ProjectTakesSliceAsAnExpression) {
  auto out = run(R"([{"$project": {"r": {"$slice": ["$a", -2]}}}])",
                 docs({R"({"_id": 1, "a": [1, 2, 3]})"}));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_DOC_EQ(out[0], R"({"_id": 1, "r": [2, 3]})");
  EXPECT_EQ(error_code_of([] { (void)Projection::parse(J(R"({"r": {"$slice": ["$a", 2]}})")); }),
            code::kNotImplemented);
  EXPECT_EQ(error_code_of([&] {
              (void)run(R"([{"$project": {"r": {"$elemMatch": {"x": 1}}}}])", docs({"{}"}));
            }),
            code::kInvalidPipelineOperator);
}

// Each stage may wrap what the last one built; a document deeper than any BSON is refused (15)
// at the stage that builds it, in aggregation and update pipelines alike, and an update
// pipeline is held to the aggregation limit of 1000 stages.
// What it omits: the stack a deeper document would overflow (encode, compare, destroy).
TEST(Pipeline, StagesCannotNestADocumentDeeperThanBson) {
  std::string stages = "[";
  for (int i = 0; i < 41; ++i)
    stages += std::string(i ? ", " : "") + R"({"$set": {"a": [[[[["$a"]]]]]}})";
  stages += "]";
  auto input = docs({R"({"_id": 1, "a": 1})"});
  std::string msg;
  EXPECT_EQ(error_code_of([&] { (void)run(stages, input); }, &msg), code::kOverflow);
  EXPECT_EQ(msg, "a stage's document nests deeper than 200 levels");
  EXPECT_EQ(error_code_of([&] {
              (void)Update::parse(JV(stages)).apply(J(R"({"_id": 1, "a": 1})"), false, ctx_at());
            }),
            code::kOverflow);
  std::string forty = stages.substr(0, stages.rfind(", ")) + "]";
  EXPECT_EQ(error_code_of([&] { (void)run(forty, input); }), 0);  // 200 levels: allowed
  std::string many = "[";
  for (int i = 0; i < 1001; ++i) many += std::string(i ? ", " : "") + R"({"$set": {"x": 1}})";
  many += "]";
  EXPECT_EQ(error_code_of([&] { (void)Update::parse(JV(many)); }), code::kFailedToParse);
}

TEST(Pipeline, BadStagesFailUpFront) {
  auto input = docs({R"({"a": 1})"});
  EXPECT_EQ(error_code_of([&] { (void)run(R"([{"$bogus": 1}])", input); }), 40324);
  EXPECT_EQ(error_code_of([&] { (void)run(R"([{"$match": {"a": 1}, "$limit": 1}])", input); }),
            40323);
  EXPECT_EQ(error_code_of([&] { (void)run(R"([{"$limit": 0}])", input); }), 15958);
  EXPECT_EQ(error_code_of([&] { (void)run(R"([{"$group": {"n": {"$sum": 1}}}])", input); }), 15955);
  EXPECT_EQ(error_code_of([&] { (void)run(R"([{"$match": {"a": {"$bad": 1}}}])", input); }), 2);
  EXPECT_EQ(error_code_of([&] { (void)run(R"([{"$match": {"a": 1}}])", input); }), 0);
}

// What this leaves out: a Pipeline run from many threads at once (its parsed stages are shared
// and only read; the change-stream tests run it from the pump's thread and getMore threads).
TEST(Pipeline, ParsedOnceRunsAsRunPipelineOnEveryInput) {
  const std::string stages =
      R"([{"$match": {"a": {"$gt": 1}}}, {"$addFields": {"b": {"$add": ["$a", 10]}}},
          {"$match": {"b": {"$lt": 15}}}, {"$sort": {"a": -1}}, {"$project": {"_id": 0}}])";
  const Pipeline parsed = Pipeline::parse(JV(stages).as_array());
  const Pipeline copy = parsed;  // copies share the parsed stages
  const std::vector<std::vector<Document>> inputs = {
      docs({R"({"_id": 1, "a": 1})", R"({"_id": 2, "a": 3})", R"({"_id": 3, "a": 2})"}),
      docs({R"({"_id": 4, "a": 9})"}),
      docs({R"({"_id": 5, "a": 4})", R"({"_id": 6})", R"({"_id": 7, "a": 2.5})"}),
      {}};
  for (const auto& input : inputs) {
    std::vector<Document> want = run(stages, input);
    for (const Pipeline* p : {&parsed, &copy}) {
      std::vector<Document> got = p->run(input, ctx_at());
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i) EXPECT_TRUE(got[i].identical(want[i]));
    }
  }
  std::vector<Document> out = parsed.run(inputs[0], ctx_at());
  ASSERT_EQ(out.size(), 2u);  // a = 3 then a = 2 (b 13 and 12); a = 1 fails the first $match
  EXPECT_DOC_EQ(out[0], R"({"a": 3, "b": 13})");
  EXPECT_DOC_EQ(out[1], R"({"a": 2, "b": 12})");
}

TEST(Pipeline, ParseRefusesBadStagesAndAnEmptyPipelinePassesDocumentsThrough) {
  auto parse_code = [](std::string_view stages) {
    return error_code_of([&] { (void)Pipeline::parse(JV(stages).as_array()); });
  };
  EXPECT_EQ(parse_code(R"([{"$match": {"a": {"$bad": 1}}}])"), 2);
  EXPECT_EQ(parse_code(R"([{"$match": 5}])"), 15959);
  EXPECT_EQ(parse_code(R"([{"$sort": {}}])"), 15976);
  EXPECT_EQ(parse_code(R"([{"$set": {"a": 1}}, {"$nope": 1}])"), 40324);
  EXPECT_EQ(parse_code(R"([{"$limit": -1}])"), 15958);
  auto input = docs({R"({"_id": 1})", R"({"_id": 2})"});
  for (const Pipeline& p : {Pipeline{}, Pipeline::parse(bson::Array{})}) {
    std::vector<Document> out = p.run(input, ctx_at());
    ASSERT_EQ(out.size(), 2u);
    EXPECT_TRUE(out[1].identical(input[1]));
  }
}

}  // namespace
}  // namespace mongosim::query
