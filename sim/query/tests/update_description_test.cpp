// updateDescription from pre- and post-images (query/update_description.h;
// docs/mongodb-behaviour.md, Change streams): the cases the MongoDB manual and mongod's document
// diff document, the pipeline-only size rules (a sub-diff replaced by its value, a whole diff
// turning into a replacement), and a property: applying the description to the pre-image gives the
// post-image.
//
// What the model leaves out: operator updates are only seen through their images (mongod's delta
// for them names the operators' paths; docs/mongodb-behaviour.md lists where they differ), and
// documents with duplicate field names or field names containing dots.
#include "query/update_description.h"

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <string>

#include "query/tests/query_test_util.h"

namespace mongosim::query {
namespace {

using testing::J;

// A long string field keeps pipeline diffs smaller than the document, so they stay deltas.
const std::string kPadding(200, 'p');

Document padded(std::string_view json) {
  Document d = J(json);
  d.append("pad", bson::V(kPadding));
  return d;
}

::testing::AssertionResult Describes(const UpdateDescription& d, std::string_view expected) {
  Document actual = d.to_document();
  if (actual.identical(J(expected))) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "actual   " << bson::to_json(actual) << "\nexpected " << bson::to_json(J(expected));
}

TEST(UpdateDescription, SetAndUnsetOfTopLevelFields) {
  Document pre = J(R"({"_id": 1, "email": "a@x", "phone": "123", "n": 1})");
  Document post = J(R"({"_id": 1, "email": "b@x", "n": 1})");
  EXPECT_TRUE(Describes(describe_operator_update(pre, post),
                        R"({"updatedFields": {"email": "b@x"}, "removedFields": ["phone"],
                            "truncatedArrays": []})"));
}

TEST(UpdateDescription, ShortenedArrayWithAChangedElementIsTruncatedPlusThatElement) {
  // The manual's example for truncatedArrays.
  Document pre = J(R"({"_id": 1, "arrayField": ["foo", {"a": "bar"}, 1, 2, 3]})");
  Document post = J(R"({"_id": 1, "arrayField": ["foo", {"a": "bar", "b": 3}]})");
  EXPECT_TRUE(Describes(describe_operator_update(pre, post),
                        R"({"updatedFields": {"arrayField.1.b": 3}, "removedFields": [],
                            "truncatedArrays": [{"field": "arrayField", "newSize": 2}]})"));
}

TEST(UpdateDescription, AppendedArrayElementsAreNamedByIndex) {
  Document pre = J(R"({"_id": 1, "a": [1, 2, 3]})");
  Document post = J(R"({"_id": 1, "a": [1, 2, 3, 4, 5]})");
  EXPECT_TRUE(Describes(describe_operator_update(pre, post),
                        R"({"updatedFields": {"a.3": 4, "a.4": 5}, "removedFields": [],
                            "truncatedArrays": []})"));
}

TEST(UpdateDescription, NestedChangesUseDottedPathsAfterTheTopLevel) {
  Document pre = J(R"({"_id": 1, "a": {"b": 1, "c": {"d": 1}}, "e": 1, "f": 1})");
  Document post = J(R"({"_id": 1, "a": {"b": 2, "c": {"d": 1, "x": 5}}, "e": 2, "g": 3})");
  // This level's updates and inserts, then its removals, then the nested levels.
  EXPECT_TRUE(Describes(describe_operator_update(pre, post),
                        R"({"updatedFields": {"e": 2, "g": 3, "a.b": 2, "a.c.x": 5},
                            "removedFields": ["f"], "truncatedArrays": []})"));
}

TEST(UpdateDescription, ATypeChangeIsAChangeEvenForEqualNumbers) {
  Document pre = J(R"({"_id": 1, "x": {"$numberInt": "3"}})");
  Document post = J(R"({"_id": 1, "x": {"$numberDouble": "3.0"}})");
  UpdateDescription d = describe_operator_update(pre, post);
  ASSERT_EQ(d.updated_fields.size(), 1u);
  EXPECT_EQ(d.updated_fields.at(0).first, "x");
  EXPECT_EQ(d.updated_fields.at(0).second.type(), bson::Type::kDouble);
}

TEST(UpdateDescription, AMovedFieldIsAddedAgainNotRemoved) {
  Document pre = padded(R"({"_id": 1, "a": 1, "b": 2, "c": 3})");
  Document post = J(R"({"_id": 1, "b": 2, "c": 3})");
  post.append("pad", bson::V(kPadding));
  post.append("a", bson::V(int32_t{1}));
  auto d = describe_pipeline_update(pre, post);
  ASSERT_TRUE(d.has_value());
  EXPECT_TRUE(Describes(*d, R"({"updatedFields": {"a": 1}, "removedFields": [],
                                "truncatedArrays": []})"));
}

TEST(UpdateDescription, IdenticalImagesDescribeNothing) {
  Document doc = J(R"({"_id": 1, "a": [1, {"b": 2}]})");
  EXPECT_TRUE(Describes(describe_operator_update(doc, doc),
                        R"({"updatedFields": {}, "removedFields": [], "truncatedArrays": []})"));
}

TEST(UpdateDescription, PipelineSubDiffBiggerThanTheValueNamesTheWholeValue) {
  Document pre = padded(R"({"_id": 1, "f": {"p": 1, "q": 2, "r": {"a": 1, "b": 2, "c": 3,
                                                                 "d": 4}, "s": 3}})");
  Document post = padded(R"({"_id": 1, "f": {"p": 1, "q": 2, "r": {"p": 1, "q": 2}, "s": 3}})");
  auto pipeline = describe_pipeline_update(pre, post);
  ASSERT_TRUE(pipeline.has_value());
  EXPECT_TRUE(Describes(*pipeline, R"({"updatedFields": {"f.r": {"p": 1, "q": 2}},
                                       "removedFields": [], "truncatedArrays": []})"));
  // An operator update has no such bound: every leaf.
  EXPECT_TRUE(Describes(describe_operator_update(pre, post),
                        R"({"updatedFields": {"f.r.p": 1, "f.r.q": 2},
                            "removedFields": ["f.r.a", "f.r.b", "f.r.c", "f.r.d"],
                            "truncatedArrays": []})"));
}

TEST(UpdateDescription, PipelineArrayElementDiffBiggerThanTheElementNamesTheElement) {
  Document pre = padded(R"({"_id": 1, "a": [1, 2, 3, [[2]]]})");
  Document post = padded(R"({"_id": 1, "a": [1, 2, 3, [[4]]]})");
  auto d = describe_pipeline_update(pre, post);
  ASSERT_TRUE(d.has_value());
  EXPECT_TRUE(Describes(*d, R"({"updatedFields": {"a.3": [[4]]}, "removedFields": [],
                                "truncatedArrays": []})"));
}

TEST(UpdateDescription, PipelineDiffNotSmallerThanTheDocumentIsAReplacement) {
  // A small document: the delta with its entry overhead outweighs it.
  EXPECT_FALSE(describe_pipeline_update(J(R"({"_id": 1, "x": 1})"), J(R"({"_id": 1, "x": 2})")));
  // Every field renamed: nothing in common.
  EXPECT_FALSE(describe_pipeline_update(padded(R"({"_id": 1, "a": 1, "b": 2})"),
                                        J(R"({"_id": 1, "A": 1, "B": 2})")));
  // The same change in a big document stays a delta.
  auto d =
      describe_pipeline_update(padded(R"({"_id": 1, "x": 1})"), padded(R"({"_id": 1, "x": 2})"));
  ASSERT_TRUE(d.has_value());
  EXPECT_TRUE(Describes(*d, R"({"updatedFields": {"x": 2}, "removedFields": [],
                                "truncatedArrays": []})"));
}

// --- the property ---------------------------------------------------------------------------

Value& child_for_write(Value& parent, const std::string& part) {
  if (parent.is_array()) {
    bson::Array& arr = parent.mutable_array();
    size_t i = std::stoul(part);
    if (i == arr.size()) arr.push_back(Value::null());
    return arr.at(i);
  }
  Document& d = parent.mutable_document();
  if (d.get(part) == nullptr) d.append(part, Value::null());
  return *d.get_mutable(part);
}

std::vector<std::string> parts_of(const std::string& path) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t dot = path.find('.'); dot != std::string::npos; dot = path.find('.', start)) {
    parts.push_back(path.substr(start, dot - start));
    start = dot + 1;
  }
  parts.push_back(path.substr(start));
  return parts;
}

Value& at_path(Value& root, const std::string& path) {
  Value* cur = &root;
  for (const auto& part : parts_of(path)) cur = &child_for_write(*cur, part);
  return *cur;
}

// Applies a description the way mongod applies a delta: truncations, then sets, then removals.
Document apply(const Document& pre, const UpdateDescription& d) {
  Value root = bson::V(pre);
  for (const Value& t : d.truncated_arrays) {
    const Document& td = t.as_document();
    at_path(root, td.get("field")->as_string())
        .mutable_array()
        .resize(static_cast<size_t>(td.get("newSize")->as_int32()));
  }
  for (const auto& [path, v] : d.updated_fields) at_path(root, path) = v;
  for (const Value& r : d.removed_fields) {
    std::vector<std::string> parts = parts_of(r.as_string());
    std::string last = parts.back();
    parts.pop_back();
    Value* parent = &root;
    for (const auto& part : parts) parent = &child_for_write(*parent, part);
    parent->mutable_document().erase(last);
  }
  return root.as_document();
}

// Field order does not matter to the property (a moved field is set where it was).
Value canonical(const Value& v) {
  if (v.is_array()) {
    bson::Array out;
    for (const Value& e : v.as_array()) out.push_back(canonical(e));
    return bson::V(std::move(out));
  }
  if (!v.is_document()) return v;
  std::vector<std::pair<std::string, Value>> fields;
  for (const auto& [k, e] : v.as_document()) fields.emplace_back(k, canonical(e));
  std::sort(fields.begin(), fields.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  Document out;
  for (auto& [k, e] : fields) out.append(k, std::move(e));
  return bson::V(std::move(out));
}

rc::Gen<Value> value_gen(int depth) {
  auto scalar =
      rc::gen::oneOf(rc::gen::map(rc::gen::inRange(0, 3), [](int v) { return Value::int32(v); }),
                     rc::gen::map(rc::gen::inRange(0, 3), [](int v) { return Value::dbl(v); }),
                     rc::gen::map(rc::gen::element<std::string>("x", "yy"),
                                  [](std::string s) { return bson::V(s); }),
                     rc::gen::just(Value::null()));
  if (depth == 0) return scalar;
  auto array =
      rc::gen::map(rc::gen::container<std::vector<Value>>(value_gen(depth - 1)),
                   [](std::vector<Value> v) { return bson::V(bson::Array(v.begin(), v.end())); });
  auto doc =
      rc::gen::map(rc::gen::container<std::vector<std::pair<std::string, Value>>>(rc::gen::pair(
                       rc::gen::element<std::string>("a", "b", "c"), value_gen(depth - 1))),
                   [](std::vector<std::pair<std::string, Value>> fields) {
                     Document d;
                     for (auto& [k, v] : fields) d.set(k, std::move(v));  // unique names
                     return bson::V(std::move(d));
                   });
  return rc::gen::oneOf(scalar, scalar, array, doc);
}

rc::Gen<Document> document_gen() {
  return rc::gen::map(value_gen(3), [](Value v) {
    Document d{{"_id", Value::int32(1)}};
    if (v.is_document()) {
      for (const auto& [k, e] : v.as_document()) d.append(k, e);
    }
    return d;
  });
}

RC_GTEST_PROP(UpdateDescriptionProperty, ApplyingTheDescriptionToThePreImageGivesThePostImage, ()) {
  Document pre = *document_gen();
  Document post = *document_gen();
  Document via_operator = apply(pre, describe_operator_update(pre, post));
  RC_ASSERT(canonical(bson::V(via_operator)).identical(canonical(bson::V(post))));
  if (auto d = describe_pipeline_update(pre, post)) {
    RC_ASSERT(canonical(bson::V(apply(pre, *d))).identical(canonical(bson::V(post))));
  }
}

}  // namespace
}  // namespace mongosim::query
