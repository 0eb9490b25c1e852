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

Document PP(std::string_view spec, std::string_view doc) {
  return Projection::parse(J(spec), Projection::Of::kPipeline).apply(J(doc), ctx_at());
}

// A computed field under a path the document lacks, or holds as a scalar, gets a new document in
// the path's place (mongod's projection executor). What the model omits: $$ROOT-relative
// expressions reading the projected output (they read the input document, as mongod's do).
TEST(Projection, ComputedFieldsUnderAPathBuildTheirDocument) {
  for (auto* project : {&P, &PP}) {
    EXPECT_DOC_EQ(project(R"({"x.s": {"$literal": 5}})", R"({"_id": 1})"),
                  R"({"_id": 1, "x": {"s": 5}})");
    // A scalar is replaced where it stood; the included field after it stays after it.
    EXPECT_DOC_EQ(project(R"({"c": 1, "a.b": {"$literal": 1}})", R"({"_id": 1, "a": 7, "c": 2})"),
                  R"({"_id": 1, "a": {"b": 1}, "c": 2})");
    // Absent: after the included fields.
    EXPECT_DOC_EQ(project(R"({"a.b": {"$literal": 1}, "c": 1})", R"({"_id": 1, "c": 2})"),
                  R"({"_id": 1, "c": 2, "a": {"b": 1}})");
    // Into an existing document, after its included fields; a missing result adds nothing.
    EXPECT_DOC_EQ(project(R"({"a.b": "$k", "a.c": 1, "a.d.e": "$nope", "_id": 0})",
                          R"({"k": 3, "a": {"z": 0, "c": 4}})"),
                  R"({"a": {"c": 4, "b": 3, "d": {}}})");
  }
}

// Arrays: each element that is a document gets the computed fields; one that is not (a scalar,
// and for find an array nested in the array) is replaced by a document of them. Without computed
// fields an inclusion drops such elements, and find's exclusion leaves a nested array whole.
TEST(Projection, ArraysNestedInArraysFollowTheProjectionsKind) {
  const char* doc = R"({"_id": 0, "a": [1, {"c": 2, "x": 0}, [{"c": 3, "x": 0}]]})";
  const char* computed = R"({"a.c": 1, "a.b": {"$literal": 1}, "_id": 0})";
  EXPECT_DOC_EQ(PP(computed, doc), R"({"a": [{"b": 1}, {"c": 2, "b": 1}, [{"c": 3, "b": 1}]]})");
  EXPECT_DOC_EQ(P(computed, doc), R"({"a": [{"b": 1}, {"c": 2, "b": 1}, {"b": 1}]})");
  EXPECT_DOC_EQ(PP(R"({"a.c": 1, "_id": 0})", doc), R"({"a": [{"c": 2}, [{"c": 3}]]})");
  EXPECT_DOC_EQ(P(R"({"a.c": 1, "_id": 0})", doc), R"({"a": [{"c": 2}]})");
  EXPECT_DOC_EQ(PP(R"({"a.x": 0, "_id": 0})", doc), R"({"a": [1, {"c": 2}, [{"c": 3}]]})");
  EXPECT_DOC_EQ(P(R"({"a.x": 0, "_id": 0})", doc), R"({"a": [1, {"c": 2}, [{"c": 3, "x": 0}]]})");
}

// Positional projection ("a.$"): mongosim has none, and says so whatever the value; mongod's own
// errors where it refuses one (a pipeline's; "$" inside a path). "a.$b" is a field name.
TEST(Projection, PositionalPathsAreRefusedByName) {
  for (const char* spec : {R"({"a.$": 1})", R"({"a.$": true})", R"({"a.b.$": {"$slice": 1}})"}) {
    EXPECT_EQ(error_code_of([&] { (void)Projection::parse(J(spec)); }), 238) << spec;
  }
  EXPECT_EQ(error_code_of([] { (void)Projection::parse(J(R"({"a.$.b": 1})")); }), 31394);
  EXPECT_EQ(
      error_code_of([] { (void)Projection::parse(J(R"({"a.$": 1})"), Projection::Of::kPipeline); }),
      31324);
  EXPECT_EQ(error_code_of(
                [] { (void)Projection::parse(J(R"({"a.$.b": 0})"), Projection::Of::kPipeline); }),
            31324);
  EXPECT_EQ(error_code_of([] { (void)Projection::parse(J(R"({"a.$b": 1})")); }), 0);
}

// A sub-projection is its paths: {a: {b: 1}} is {"a.b": 1}, in find and pipeline alike; an
// object whose first field is an operator stays an expression, and an empty one is refused.
TEST(Projection, SubProjectionsAreTheirDottedPaths) {
  const char* doc = R"({"_id": 1, "a": {"b": 7, "c": 2}, "k": 5})";
  for (auto* project : {&P, &PP}) {
    EXPECT_DOC_EQ(project(R"({"a": {"b": 1}})", doc), R"({"_id": 1, "a": {"b": 7}})");
    EXPECT_DOC_EQ(project(R"({"a": {"b": 0}, "k": 0})", doc), R"({"_id": 1, "a": {"c": 2}})");
    EXPECT_DOC_EQ(project(R"({"a": {"b": 1, "d": "$k"}, "_id": 0})", doc),
                  R"({"a": {"b": 7, "d": 5}})");
    EXPECT_DOC_EQ(project(R"({"a": {"$literal": {"b": 1}}, "_id": 0})", doc), R"({"a": {"b": 1}})");
  }
  std::string msg;
  EXPECT_EQ(error_code_of([] { (void)Projection::parse(J(R"({"a": {"b": {}}})")); }, &msg), 51270);
  EXPECT_EQ(msg, "An empty sub-projection is not a valid value. Found empty object at path a.b");
  EXPECT_EQ(error_code_of([] { (void)Projection::parse(J(R"({"a": {"b": 1}, "a.b": 1})")); }),
            31250);
  EXPECT_EQ(error_code_of([] { (void)Projection::parse(J(R"({"a": {"b": 1, "$c": 1}})")); }),
            16410);
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
