#include <algorithm>

#include "query/tests/query_test_util.h"

namespace mongosim::query {
namespace {

using testing::ctx_at;
using testing::error_code_of;
using testing::J;

Document P(std::string_view spec, std::string_view doc) {
  return Projection::parse(J(spec)).apply(J(doc), ctx_at());
}

TEST(Projection, InclusionExclusionAndId) {
  const char* doc = R"({"_id": 1, "a": 1, "b": {"c": 2, "d": 3}, "e": 4})";
  EXPECT_DOC_EQ(P(R"({"a": 1})", doc), R"({"_id": 1, "a": 1})");
  EXPECT_DOC_EQ(P(R"({"a": 1, "_id": 0})", doc), R"({"a": 1})");
  EXPECT_DOC_EQ(P(R"({"e": true, "a": 1})", doc), R"({"_id": 1, "a": 1, "e": 4})");
  EXPECT_DOC_EQ(P(R"({"b.c": 1})", doc), R"({"_id": 1, "b": {"c": 2}})");
  EXPECT_DOC_EQ(P(R"({"b": 0, "e": 0})", doc), R"({"_id": 1, "a": 1})");
  EXPECT_DOC_EQ(P(R"({"b.c": 0})", doc), R"({"_id": 1, "a": 1, "b": {"d": 3}, "e": 4})");
  EXPECT_DOC_EQ(P(R"({"_id": 0})", doc), R"({"a": 1, "b": {"c": 2, "d": 3}, "e": 4})");
  EXPECT_DOC_EQ(P(R"({})", doc), doc);
  EXPECT_DOC_EQ(P(R"({"x": 1, "_id": 0})", R"({"_id": 4, "x": 1})"), R"({"x": 1})");
}

TEST(Projection, ArraysOfDocuments) {
  EXPECT_DOC_EQ(P(R"({"a.b": 1, "_id": 0})", R"({"a": [{"b": 1, "c": 2}, 3, {"c": 1}]})"),
                R"({"a": [{"b": 1}, {}]})");
  EXPECT_DOC_EQ(P(R"({"a.b": 0})", R"({"a": [{"b": 1, "c": 2}, 3]})"), R"({"a": [{"c": 2}, 3]})");
}

TEST(Projection, ComputedFields) {
  EXPECT_DOC_EQ(P(R"({"x": "$a", "_id": 0})", R"({"_id": 1, "a": 5})"), R"({"x": 5})");
  EXPECT_DOC_EQ(P(R"({"a": 1, "k": {"$literal": 1}})", R"({"_id": 1, "a": 5})"),
                R"({"_id": 1, "a": 5, "k": 1})");
}

TEST(Projection, MixingIsRejected) {
  std::string msg;
  EXPECT_EQ(error_code_of([] { (void)Projection::parse(J(R"({"a": 1, "b": 0})")); }, &msg), 31254);
  EXPECT_EQ(msg, "Cannot do exclusion on field b in inclusion projection");
  EXPECT_EQ(error_code_of([] { (void)Projection::parse(J(R"({"a": 0, "b": 1})")); }), 31253);
  EXPECT_EQ(error_code_of([] { (void)Projection::parse(J(R"({"a": 1, "a.b": 1})")); }), 31250);
  EXPECT_EQ(error_code_of([] { (void)Projection::parse(J(R"({"a": 0, "_id": 1})")); }), 0);
}

TEST(Sort, OrdersByKeysAndDirections) {
  Sort s = Sort::parse(J(R"({"a": 1, "b": -1})"));
  EXPECT_LT(s.compare(J(R"({"a": 1, "b": 1})"), J(R"({"a": 2, "b": 9})")), 0);
  EXPECT_LT(s.compare(J(R"({"a": 1, "b": 9})"), J(R"({"a": 1, "b": 1})")), 0);
  EXPECT_EQ(s.compare(J(R"({"a": 1, "b": 1})"), J(R"({"a": 1.0, "b": 1})")), 0);
  // Missing sorts with null, before numbers.
  EXPECT_LT(s.compare(J(R"({"b": 1})"), J(R"({"a": 0})")), 0);
  EXPECT_EQ(s.compare(J(R"({"a": null})"), J(R"({})")), 0);
}

TEST(Sort, ArrayFieldsUseMinAscendingAndMaxDescending) {
  Sort asc = Sort::parse(J(R"({"a": 1})"));
  Sort desc = Sort::parse(J(R"({"a": -1})"));
  Document arr = J(R"({"a": [1, 10]})");
  Document five = J(R"({"a": 5})");
  EXPECT_LT(asc.compare(arr, five), 0);   // min 1 < 5
  EXPECT_LT(desc.compare(arr, five), 0);  // max 10 > 5, so first descending
  EXPECT_LT(asc.compare(J(R"({"a": []})"), J(R"({"a": null})")), 0);
}

TEST(Sort, RejectsBadSpecs) {
  EXPECT_EQ(error_code_of([] { (void)Sort::parse(J(R"({"a": 2})")); }), 15975);
  EXPECT_EQ(error_code_of([] { (void)Sort::parse(J(R"({"a": "x"})")); }), 15975);
  EXPECT_TRUE(Sort::parse(J("{}")).empty());
}

TEST(ValuesAtPath, TraversesArrays) {
  auto vals = values_at_path(J(R"({"a": [{"b": 1}, {"b": [2, 3]}, {"c": 1}]})"), "a.b");
  ASSERT_EQ(vals.size(), 3u);
  EXPECT_EQ(vals[0].as_int32(), 1);
  EXPECT_EQ(vals[1].as_int32(), 2);
  EXPECT_EQ(vals[2].as_int32(), 3);
  EXPECT_TRUE(values_at_path(J(R"({"x": 1})"), "a").empty());
  auto empty = values_at_path(J(R"({"a": []})"), "a");
  ASSERT_EQ(empty.size(), 1u);
  EXPECT_TRUE(empty[0].is_array());
  EXPECT_EQ(values_at_path(J(R"({"a": {"b": "x"}})"), "a.b").at(0).as_string(), "x");
}

}  // namespace
}  // namespace mongosim::query
