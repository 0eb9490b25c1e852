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

// Arrays, nested ones too, are projected element by element in find and pipeline alike: an
// inclusion drops the scalars, a computed field replaces each non-document element by a document
// of the computed fields (the cases of mongod's projection_semantics.js).
TEST(Projection, ArraysNestedInArraysAreProjectedElementByElement) {
  for (auto* project : {&P, &PP}) {
    EXPECT_DOC_EQ(
        project(R"({"a.b": 1, "_id": 0})", R"({"a": [[1, {"b": 1}, {"b": 2, "c": 2}, "s"]]})"),
        R"({"a": [[{"b": 1}, {"b": 2}]]})");
    EXPECT_DOC_EQ(
        project(R"({"a.b.c": 1, "_id": 0})", R"({"a": [[1, 2], [{"b": {"x": 1, "c": "s"}}], 2]})"),
        R"({"a": [[], [{"b": {"c": "s"}}]]})");
    EXPECT_DOC_EQ(project(R"({"a.b": 1})", R"({"a": [[]]})"), R"({"a": [[]]})");
    const char* doc = R"({"a": [[], [{"b": [[1, 2], {"c": 1, "d": 1}]}]]})";
    EXPECT_DOC_EQ(project(R"({"a.b.c": 0})", doc), R"({"a": [[], [{"b": [[1, 2], {"d": 1}]}]]})");
    EXPECT_DOC_EQ(project(R"({"a.b.c": "v", "_id": 0})", doc),
                  R"({"a": [[], [{"b": [[{"c": "v"}, {"c": "v"}], {"c": "v"}]}]]})");
  }
}

// _id is an included field like the others: it keeps its place in the document, and a path
// under it names it (no implicit whole _id).
TEST(Projection, IdKeepsItsPlaceAndAPathUnderItNamesIt) {
  EXPECT_DOC_EQ(P(R"({"a": 1})", R"({"a": 1, "_id": 2, "b": 3})"), R"({"a": 1, "_id": 2})");
  EXPECT_DOC_EQ(P(R"({"_id.x": 1})", R"({"_id": {"x": 1, "y": 2}, "a": 1})"),
                R"({"_id": {"x": 1}})");
  EXPECT_DOC_EQ(P(R"({"_id": {"x": 1}})", R"({"_id": {"x": 1, "y": 2}, "a": 1})"),
                R"({"_id": {"x": 1}})");
  EXPECT_DOC_EQ(P(R"({"_id": 1, "a": 0})", R"({"_id": 1, "a": 1, "b": 2})"),
                R"({"_id": 1, "b": 2})");
  EXPECT_EQ(error_code_of([] { (void)Projection::parse(J(R"({"_id.x": 1, "_id": 0})")); }), 31250);
}

// Positional projection ("a.$"): mongod's error wherever it refuses one, and NotImplemented for
// the one it would apply (mongosim has none).
TEST(Projection, PositionalPathsGetMongodsErrors) {
  const std::pair<const char*, int> find_cases[] = {
      {R"({"a.$": 1})", 238},
      {R"({"a.$": true})", 238},
      {R"({"a.$": 0})", 31395},
      {R"({"a.$": "s"})", 31308},
      {R"({"a.$": {"$slice": 1}})", 31271},
      {R"({"a.$": {}})", 31271},
      {R"({"a.$": {"b": 1}})", 31271},
      {R"({".$": 1})", 5392900},
      {R"({"a.$.b": 1})", 31394},
      {R"({"a.$b": 1})", 16410},
  };
  for (const auto& [spec, code] : find_cases) {
    EXPECT_EQ(error_code_of([&] { (void)Projection::parse(J(spec)); }), code) << spec;
  }
  const std::pair<const char*, int> pipeline_cases[] = {
      {R"({"a.$": 1})", 31324}, {R"({"a.$.b": 0})", 31394}, {R"({"a.$b": 1})", 16410}};
  for (const auto& [spec, code] : pipeline_cases) {
    EXPECT_EQ(error_code_of([&] { (void)Projection::parse(J(spec), Projection::Of::kPipeline); }),
              code)
        << spec;
  }
}

// A sub-projection is its paths: {a: {b: 1}} is {"a.b": 1}, in find and pipeline alike. An
// object is an expression only with one field that starts with '$'; an unknown one is 31325.
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
  EXPECT_EQ(msg, "An empty sub-projection is not a valid value. Found empty object at path");
  EXPECT_EQ(error_code_of([] { (void)Projection::parse(J(R"({"a": {"b": 1}, "a.b": 1})")); }),
            31250);
  const std::pair<const char*, int> cases[] = {
      {R"({"a": {"b": 1, "$c": 1}})", 16410},    {R"({"a": {"$literal": 1, "b": 1}})", 16410},
      {R"({"a": {"$unknownOp": 1}})", 31325},    {R"({"a": {"$": 1}})", 31325},
      {R"({"a": {"$meta": "textScore"}})", 238},
  };
  for (const auto& [spec, code] : cases) {
    EXPECT_EQ(error_code_of([&] { (void)Projection::parse(J(spec)); }), code) << spec;
  }
}

// Field names are field paths (a DBRef's $id/$ref/$db included); paths collide at a leaf (31250)
// or through one (31249), a literal's collision before its mixing with exclusion; computed fields
// do not mix with exclusion (31310 a literal, 31252 an expression object); a positional path is
// checked like the inclusion of its path before mongosim refuses it (238).
TEST(Projection, NamesCollisionsAndComputedFieldsInExclusions) {
  EXPECT_DOC_EQ(P(R"({"a.$id": 1, "_id": 0})", R"({"a": {"$id": 1, "x": 2}})"),
                R"({"a": {"$id": 1}})");
  EXPECT_DOC_EQ(P(R"({"a": {"$ref": 1}, "_id": 0})", R"({"a": {"$ref": "c", "x": 2}})"),
                R"({"a": {"$ref": "c"}})");
  const std::pair<const char*, int> cases[] = {
      {R"({"": 1})", 40352},
      {R"({"a.": 1})", 40353},
      {R"({"a": 0, "a.b": "x"})", 31249},
      {R"({"a.b": 0, "a": "x"})", 31250},
      {R"({"x": 0, "b.$": 1})", 31253},
      {R"({"a.$": 1, "b": 0})", 31254},
      {R"({"a.$": 1, "b.$": 1})", 31276},
      {R"({"a": 1, "a.$": 1})", 31250},
      {R"({"v..d": 1})", 15998},
      {R"({"x": {"$add": [1]}, "x.b": 1})", 31249},
      {R"({"a": 0, "b": "$x"})", 31310},
      {R"({"a": 0, "b": {"$add": [1]}})", 31252},
      {R"({"b": "$x", "a": 0})", 31254},
  };
  for (const auto& [spec, code] : cases) {
    EXPECT_EQ(error_code_of([&] { (void)Projection::parse(J(spec)); }), code) << spec;
  }
}

TEST(Projection, MixingIsRejected) {
  std::string msg;
  EXPECT_EQ(error_code_of([] { (void)Projection::parse(J(R"({"a": 1, "b": 0})")); }, &msg), 31254);
  EXPECT_EQ(msg, "Cannot do exclusion on field b in inclusion projection");
  EXPECT_EQ(error_code_of([] { (void)Projection::parse(J(R"({"a": 0, "b": 1})")); }), 31253);
  EXPECT_EQ(error_code_of([] { (void)Projection::parse(J(R"({"a": 1, "a.b": 1})")); }), 31249);
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
