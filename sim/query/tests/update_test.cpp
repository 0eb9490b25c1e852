#include "query/tests/query_test_util.h"

namespace mongosim::query {
namespace {

using testing::ctx_at;
using testing::error_code_of;
using testing::J;
using testing::JV;

bson::Document U(std::string_view update, std::string_view doc, bool insert = false) {
  return Update::parse(JV(update)).apply(J(doc), insert, ctx_at());
}

int32_t apply_error(std::string_view update, std::string_view doc, std::string* msg = nullptr) {
  return error_code_of([&] { (void)U(update, doc); }, msg);
}

TEST(Update, SetCreatesIntermediateDocumentsInNameOrder) {
  EXPECT_DOC_EQ(U(R"({"$set": {"a.b.c": 1}})", R"({"_id": 1})"),
                R"({"_id": 1, "a": {"b": {"c": 1}}})");
  EXPECT_DOC_EQ(U(R"({"$set": {"b": 1, "a": 2}})", R"({"_id": 1})"),
                R"({"_id": 1, "a": 2, "b": 1})");
  EXPECT_DOC_EQ(U(R"({"$set": {"x": 5}})", R"({"_id": 1, "x": 1, "y": 2})"),
                R"({"_id": 1, "x": 5, "y": 2})");
  EXPECT_DOC_EQ(U(R"({"$set": {}})", R"({"_id": 1, "x": 1})"), R"({"_id": 1, "x": 1})");
}

// A path of more components than any BSON nests is refused up front (15), in an update and in
// a projection, before anything recursive is built from it; 200 components still work.
TEST(Update, APathLongerThanAnyBsonIsRefused) {
  const auto path = [](int components) {
    std::string p = "x";
    for (int i = 1; i < components; ++i) p += ".x";
    return p;
  };
  const std::string set_201 = R"({"$set": {")" + path(201) + R"(": 1}})";
  EXPECT_EQ(error_code_of([&] { (void)U(set_201, "{}"); }), code::kOverflow);
  EXPECT_EQ(error_code_of([&] { (void)Projection::parse(J(R"({")" + path(100001) + R"(": 1})")); }),
            code::kOverflow);
  const std::string set_200 = R"({"$set": {")" + path(200) + R"(": 1}})";
  EXPECT_EQ(error_code_of([&] { (void)U(set_200, "{}"); }), 0);
}

TEST(Update, SetOnArrayIndexesPadsWithNull) {
  EXPECT_DOC_EQ(U(R"({"$set": {"a.1": 9}})", R"({"a": [1, 2]})"), R"({"a": [1, 9]})");
  EXPECT_DOC_EQ(U(R"({"$set": {"a.3": 9}})", R"({"a": [1]})"), R"({"a": [1, null, null, 9]})");
  EXPECT_DOC_EQ(U(R"({"$set": {"a.0.b": 9}})", R"({"a": [{"b": 1}]})"), R"({"a": [{"b": 9}]})");
  std::string msg;
  EXPECT_EQ(apply_error(R"({"$set": {"a.b": 1}})", R"({"a": 5})", &msg), 28);
  EXPECT_EQ(msg, "Cannot create field 'b' in element {a: 5}");
  EXPECT_EQ(apply_error(R"({"$set": {"a.x": 1}})", R"({"a": [1]})"), 28);
}

TEST(Update, UnsetRemovesAndIgnoresMissing) {
  EXPECT_DOC_EQ(U(R"({"$unset": {"a": ""}})", R"({"_id": 1, "a": 1, "b": 2})"),
                R"({"_id": 1, "b": 2})");
  EXPECT_DOC_EQ(U(R"({"$unset": {"z.y": 1}})", R"({"_id": 1})"), R"({"_id": 1})");
  EXPECT_DOC_EQ(U(R"({"$unset": {"a.1": 1}})", R"({"a": [1, 2, 3]})"), R"({"a": [1, null, 3]})");
}

TEST(Update, IncPromotesTypesAndRejectsNonNumbers) {
  EXPECT_DOC_EQ(U(R"({"$inc": {"n": 1}})", R"({"_id": 1})"), R"({"_id": 1, "n": 1})");
  EXPECT_DOC_EQ(U(R"({"$inc": {"n": 2}})", R"({"n": 1})"), R"({"n": 3})");
  EXPECT_DOC_EQ(U(R"({"$inc": {"n": 1}})", R"({"n": 2147483647})"),
                R"({"n": {"$numberLong": "2147483648"}})");
  EXPECT_DOC_EQ(U(R"({"$inc": {"n": 0.5}})", R"({"n": 1})"), R"({"n": 1.5})");
  EXPECT_DOC_EQ(U(R"({"$inc": {"n": {"$numberLong": "1"}}})", R"({"n": 1})"),
                R"({"n": {"$numberLong": "2"}})");
  std::string msg;
  EXPECT_EQ(apply_error(R"({"$inc": {"n": 1}})", R"({"_id": 1, "n": "x"})", &msg), 14);
  EXPECT_EQ(msg,
            "Cannot apply $inc to a value of non-numeric type. {_id: 1} has the field 'n' "
            "of non-numeric type string");
  EXPECT_EQ(error_code_of([] { (void)Update::parse(JV(R"({"$inc": {"n": "x"}})")); }), 14);
  EXPECT_EQ(
      apply_error(R"({"$inc": {"n": 1}})", R"({"n": {"$numberLong": "9223372036854775807"}})"), 2);
  EXPECT_DOC_EQ(U(R"({"$mul": {"n": 3}})", R"({"n": 2})"), R"({"n": 6})");
  EXPECT_DOC_EQ(U(R"({"$mul": {"n": 3}})", R"({})"), R"({"n": 0})");
}

TEST(Update, MinMaxUseBsonOrder) {
  EXPECT_DOC_EQ(U(R"({"$min": {"a": 3}})", R"({"a": 5})"), R"({"a": 3})");
  EXPECT_DOC_EQ(U(R"({"$min": {"a": 7}})", R"({"a": 5})"), R"({"a": 5})");
  EXPECT_DOC_EQ(U(R"({"$max": {"a": "s"}})", R"({"a": 5})"), R"({"a": "s"})");
  EXPECT_DOC_EQ(U(R"({"$max": {"a": 1}})", R"({})"), R"({"a": 1})");
}

TEST(Update, CurrentDateUsesTheContextClock) {
  EXPECT_DOC_EQ(U(R"({"$currentDate": {"d": true}})", R"({})"),
                R"({"d": {"$date": {"$numberLong": "1700000000000"}}})");
  bson::Document d = U(R"({"$currentDate": {"t": {"$type": "timestamp"}}})", R"({})");
  EXPECT_EQ(d.get("t")->type(), bson::Type::kTimestamp);
  EXPECT_EQ(error_code_of([] { (void)Update::parse(JV(R"({"$currentDate": {"d": 1}})")); }), 2);
  EXPECT_EQ(
      error_code_of([] { (void)Update::parse(JV(R"({"$currentDate": {"d": {"$type": "x"}}})")); }),
      2);
}

TEST(Update, PushWithModifiers) {
  EXPECT_DOC_EQ(U(R"({"$push": {"a": 3}})", R"({"a": [1]})"), R"({"a": [1, 3]})");
  EXPECT_DOC_EQ(U(R"({"$push": {"a": 3}})", R"({})"), R"({"a": [3]})");
  EXPECT_DOC_EQ(
      U(R"({"$push": {"a": {"$each": [5, 1, 4], "$sort": 1, "$slice": 2}}})", R"({"a": [3]})"),
      R"({"a": [1, 3]})");
  EXPECT_DOC_EQ(U(R"({"$push": {"a": {"$each": [9], "$position": 0}}})", R"({"a": [1, 2]})"),
                R"({"a": [9, 1, 2]})");
  EXPECT_DOC_EQ(U(R"({"$push": {"a": {"$each": [1, 2, 3], "$slice": -2}}})", R"({"a": []})"),
                R"({"a": [2, 3]})");
  // The most negative long keeps everything (its negation overflows; it is not a huge positive).
  EXPECT_DOC_EQ(
      U(R"({"$push": {"a": {"$each": [], "$slice": {"$numberLong": "-9223372036854775808"}}}})",
        R"({"a": [1, 2, 3]})"),
      R"({"a": [1, 2, 3]})");
  EXPECT_DOC_EQ(U(R"({"$push": {"a": {"$each": [{"x": 2}], "$sort": {"x": -1}}}})",
                  R"({"a": [{"x": 1}, {"x": 3}]})"),
                R"({"a": [{"x": 3}, {"x": 2}, {"x": 1}]})");
  // $sort's directions as mongod's $push checks them: a number other than 1 or -1 (the smallest
  // long too, which was std::abs'd: undefined, caught by UBSan builds only, as its result was
  // refused anyway), or one in a pattern, has mongod's "element value" message; a value neither
  // number nor document the "invalid" one; an empty pattern or an empty field part theirs.
  const std::pair<const char*, const char*> refused[] = {
      {R"({"$numberLong": "-9223372036854775808"})",
       "The $sort element value must be either 1 or -1"},
      {"2", "The $sort element value must be either 1 or -1"},
      {R"({"x": {"$numberLong": "-9223372036854775808"}})",
       "The $sort element value must be either 1 or -1"},
      {R"({"x": "1"})", "The $sort element value must be either 1 or -1"},
      {R"("x")",
       "The $sort is invalid: use 1/-1 to sort the whole element, or {field:1/-1} to sort "
       "embedded fields"},
      {"{}", "The $sort pattern is empty when it should be a set of fields."},
      {R"({"a..b": 1})", "The $sort field is a dotted field but has an empty part: a..b"},
  };
  for (const auto& [sort, message] : refused) {
    std::string got;
    const std::string update =
        std::string(R"({"$push": {"a": {"$each": [1], "$sort": )") + sort + "}}}";
    EXPECT_EQ(error_code_of([&] { (void)Update::parse(JV(update)); }, &got), 2) << sort;
    EXPECT_EQ(got, message) << sort;
  }
  EXPECT_DOC_EQ(U(R"({"$push": {"a": {"$each": [1], "$sort": 1.0}}})", R"({"a": [2, 0]})"),
                R"({"a": [0, 1, 2]})");
  EXPECT_DOC_EQ(
      U(R"({"$push": {"a": {"$each": [1], "$sort": {"$numberLong": "-1"}}}})", R"({"a": [0, 2]})"),
      R"({"a": [2, 1, 0]})");
  std::string msg;
  EXPECT_EQ(apply_error(R"({"$push": {"a": 1}})", R"({"_id": 1, "a": 1})", &msg), 2);
  EXPECT_EQ(msg, "The field 'a' must be an array but is of type int in document {_id: 1}");
}

TEST(Update, AddToSetPullPullAllPop) {
  EXPECT_DOC_EQ(U(R"({"$addToSet": {"a": 2}})", R"({"a": [1, 2]})"), R"({"a": [1, 2]})");
  EXPECT_DOC_EQ(U(R"({"$addToSet": {"a": {"$each": [2, 3, 3]}}})", R"({"a": [1, 2]})"),
                R"({"a": [1, 2, 3]})");
  // Field order matters for document equality.
  EXPECT_DOC_EQ(U(R"({"$addToSet": {"a": {"y": 1, "x": 1}}})", R"({"a": [{"x": 1, "y": 1}]})"),
                R"({"a": [{"x": 1, "y": 1}, {"y": 1, "x": 1}]})");
  EXPECT_DOC_EQ(U(R"({"$pull": {"a": 2}})", R"({"a": [1, 2, 2, 3]})"), R"({"a": [1, 3]})");
  EXPECT_DOC_EQ(U(R"({"$pull": {"a": {"$gte": 2}}})", R"({"a": [1, 2, 3]})"), R"({"a": [1]})");
  // A condition on elements is parsed as mongod wraps it, under the path "" (its messages say so).
  std::string pull_message;
  EXPECT_EQ(error_code_of(
                [&] {
                  (void)Update::parse(
                      JV(R"({"$pull": {"a": {"$gt": {"$regex": "x", "$options": ""}}}})"));
                },
                &pull_message),
            2);
  EXPECT_EQ(pull_message, "Can't have RegEx as arg to predicate over field ''.");
  EXPECT_DOC_EQ(U(R"({"$pull": {"h": {"owner": "me"}}})",
                  R"({"h": [{"owner": "me", "t": 1}, {"owner": "you"}]})"),
                R"({"h": [{"owner": "you"}]})");
  EXPECT_DOC_EQ(U(R"({"$pull": {"h": {"exp": {"$lt": 5}}}})", R"({"h": [{"exp": 1}, {"exp": 9}]})"),
                R"({"h": [{"exp": 9}]})");
  EXPECT_DOC_EQ(U(R"({"$pullAll": {"a": [1, 3]}})", R"({"a": [1, 2, 3]})"), R"({"a": [2]})");
  EXPECT_DOC_EQ(U(R"({"$pop": {"a": 1}})", R"({"a": [1, 2, 3]})"), R"({"a": [1, 2]})");
  EXPECT_DOC_EQ(U(R"({"$pop": {"a": -1}})", R"({"a": [1, 2, 3]})"), R"({"a": [2, 3]})");
  EXPECT_EQ(apply_error(R"({"$addToSet": {"a": 1}})", R"({"a": 1})"), 2);
}

TEST(Update, Rename) {
  EXPECT_DOC_EQ(U(R"({"$rename": {"a": "b"}})", R"({"_id": 1, "a": 1})"), R"({"_id": 1, "b": 1})");
  EXPECT_DOC_EQ(U(R"({"$rename": {"a": "c.d"}})", R"({"a": 1})"), R"({"c": {"d": 1}})");
  EXPECT_DOC_EQ(U(R"({"$rename": {"x": "y"}})", R"({"a": 1})"), R"({"a": 1})");
  EXPECT_EQ(error_code_of([] { (void)Update::parse(JV(R"({"$rename": {"a": "a"}})")); }), 2);
}

TEST(Update, SetOnInsertOnlyOnUpsertInsert) {
  const char* u = R"({"$set": {"a": 1}, "$setOnInsert": {"b": 2}})";
  EXPECT_DOC_EQ(U(u, R"({"_id": 1})", false), R"({"_id": 1, "a": 1})");
  EXPECT_DOC_EQ(U(u, R"({"_id": 1})", true), R"({"_id": 1, "a": 1, "b": 2})");
}

TEST(Update, ParseErrorsUseMongodCodes) {
  auto parse_code = [](std::string_view u, std::string* msg = nullptr) {
    return error_code_of([&] { (void)Update::parse(JV(u)); }, msg);
  };
  std::string msg;
  EXPECT_EQ(parse_code(R"({"$set": {"a": 1}, "$inc": {"a": 1}})", &msg), 40);
  EXPECT_EQ(msg, "Updating the path 'a' would create a conflict at 'a'");
  EXPECT_EQ(parse_code(R"({"$set": {"a": 1, "a.b": 1}})", &msg), 40);
  EXPECT_EQ(msg, "Updating the path 'a.b' would create a conflict at 'a'");
  EXPECT_EQ(parse_code(R"({"$set": {"a": 1}, "b": 1})", &msg), 9);
  EXPECT_EQ(msg,
            "Unknown modifier: b. Expected a valid update modifier or pipeline-style update "
            "specified as an array");
  EXPECT_EQ(parse_code(R"({"$foo": {"a": 1}})"), 9);
  EXPECT_EQ(parse_code(R"({"$set": 1})"), 9);
  EXPECT_EQ(parse_code(R"({"a": 1, "$set": {"b": 1}})"), 52);
  EXPECT_EQ(parse_code(R"({"$set": {"a..b": 1}})"), 56);
  EXPECT_EQ(parse_code(R"({"$set": {"": 1}})"), 56);
  EXPECT_EQ(parse_code(R"(5)"), 9);
  EXPECT_EQ(parse_code(R"([{"$group": {"_id": 1}}])"), 72);
  EXPECT_EQ(parse_code(R"({"$set": {"a": 1}})"), 0);
}

TEST(Update, IdIsImmutable) {
  std::string msg;
  EXPECT_EQ(apply_error(R"({"$set": {"_id": 2}})", R"({"_id": 1})", &msg), 66);
  EXPECT_EQ(msg, "Performing an update on the path '_id' would modify the immutable field '_id'");
  EXPECT_EQ(apply_error(R"({"$unset": {"_id": 1}})", R"({"_id": 1})"), 66);
  EXPECT_EQ(apply_error(R"({"_id": 2, "a": 1})", R"({"_id": 1})"), 66);
  EXPECT_EQ(apply_error(R"([{"$set": {"_id": 2}}])", R"({"_id": 1})"), 66);
  EXPECT_EQ(apply_error(R"({"$set": {"_id": 1}})", R"({"_id": 1})"), 0);
  EXPECT_DOC_EQ(U(R"({"$set": {"_id": 7}})", R"({})", true), R"({"_id": 7})");
}

TEST(Update, ReplacementKeepsId) {
  EXPECT_DOC_EQ(U(R"({"x": 1})", R"({"_id": 5, "a": 1})"), R"({"_id": 5, "x": 1})");
  EXPECT_DOC_EQ(U(R"({})", R"({"_id": 5, "a": 1})"), R"({"_id": 5})");
  EXPECT_DOC_EQ(U(R"({"x": 1, "_id": 5})", R"({"_id": 5})"), R"({"_id": 5, "x": 1})");
  EXPECT_EQ(Update::parse(JV(R"({"x": 1})")).kind(), Update::Kind::kReplacement);
}

TEST(Update, ArrayFilters) {
  auto with_filters = [](std::string_view u, std::string_view filters, std::string_view doc) {
    return Update::parse(JV(u), JV(filters).as_array()).apply(J(doc), false, ctx_at());
  };
  EXPECT_DOC_EQ(with_filters(R"({"$set": {"y.$[i].b": 2}})", R"([{"i.b": 3}])",
                             R"({"_id": 1, "y": [{"b": 3}, {"b": 1}]})"),
                R"({"_id": 1, "y": [{"b": 2}, {"b": 1}]})");
  EXPECT_DOC_EQ(
      with_filters(R"({"$set": {"a.$[x]": 0}})", R"([{"x": {"$gt": 1}}])", R"({"a": [1, 2, 3]})"),
      R"({"a": [1, 0, 0]})");
  EXPECT_DOC_EQ(U(R"({"$inc": {"a.$[]": 1}})", R"({"a": [1, 2]})"), R"({"a": [2, 3]})");
  EXPECT_DOC_EQ(
      with_filters(R"({"$set": {"y.$[i].c.$[j]": 0}})", R"([{"i.b": 1}, {"j": {"$lt": 5}}])",
                   R"({"y": [{"b": 1, "c": [1, 9]}, {"b": 2, "c": [1]}]})"),
      R"({"y": [{"b": 1, "c": [0, 9]}, {"b": 2, "c": [1]}]})");
  EXPECT_EQ(error_code_of([&] {
              (void)with_filters(R"({"$set": {"a.$[x]": 0}})", R"([{"y": 1}])", R"({})");
            }),
            2);
  EXPECT_EQ(
      error_code_of([&] { (void)with_filters(R"({"$set": {"a": 0}})", R"([{"y": 1}])", R"({})"); }),
      9);
  EXPECT_EQ(apply_error(R"({"$set": {"a.$[]": 1}})", R"({})"), 2);
}

TEST(Update, PipelineStages) {
  auto ctx = ctx_at(1000);
  auto P = [&](std::string_view u, std::string_view doc) {
    return Update::parse(JV(u)).apply(J(doc), false, ctx);
  };
  EXPECT_DOC_EQ(P(R"([{"$set": {"b": {"$add": ["$a", 1]}}}])", R"({"_id": 1, "a": 1})"),
                R"({"_id": 1, "a": 1, "b": 2})");
  EXPECT_DOC_EQ(P(R"([{"$set": {"t": "$$NOW"}}])", R"({"_id": 1})"),
                R"({"_id": 1, "t": {"$date": {"$numberLong": "1000"}}})");
  EXPECT_DOC_EQ(P(R"([{"$unset": ["a"]}])", R"({"_id": 1, "a": 1, "b": 1})"),
                R"({"_id": 1, "b": 1})");
  EXPECT_DOC_EQ(P(R"([{"$set": {"a": "$$REMOVE"}}])", R"({"_id": 1, "a": 1})"), R"({"_id": 1})");
  EXPECT_DOC_EQ(P(R"([{"$replaceRoot": {"newRoot": "$t"}}, {"$addFields": {"foo": 1}}])",
                  R"({"_id": 1, "t": {"u": {"v": 1}}})"),
                R"({"_id": 1, "u": {"v": 1}, "foo": 1})");
  EXPECT_DOC_EQ(P(R"([{"$project": {"a": 1}}])", R"({"_id": 1, "a": 1, "b": 2})"),
                R"({"_id": 1, "a": 1})");
  EXPECT_DOC_EQ(P(R"([{"$replaceWith": {"x": 1}}])", R"({"_id": 3})"), R"({"_id": 3, "x": 1})");
  EXPECT_DOC_EQ(P(R"([{"$set": {"a": {"c": 1}}}])", R"({"a": {"b": 1}})"),
                R"({"a": {"b": 1, "c": 1}})");
}

// Every expression of one $set reads the stage's input, never a field the same stage set: on the
// path that sets top-level fields in place (values first, then the sets) and on the one that
// copies (a dotted or nested field in the stage). The next stage sees them all.
TEST(Update, ASetStageReadsItsInputNotItsOwnFields) {
  auto P = [&](std::string_view u, std::string_view doc) {
    return Update::parse(JV(u)).apply(J(doc), false, ctx_at(1000));
  };
  EXPECT_DOC_EQ(P(R"([{"$set": {"a": 2, "b": "$a", "c": {"$add": ["$a", "$b"]}}}])",
                  R"({"_id": 1, "a": 1, "b": 10})"),
                R"({"_id": 1, "a": 2, "b": 1, "c": 11})");
  EXPECT_DOC_EQ(P(R"([{"$set": {"a": 2, "d.e": "$a", "b": "$a"}}])", R"({"_id": 1, "a": 1})"),
                R"({"_id": 1, "a": 2, "d": {"e": 1}, "b": 1})");
  EXPECT_DOC_EQ(P(R"([{"$set": {"a": "$$REMOVE", "b": "$a"}}, {"$set": {"c": "$b"}}])",
                  R"({"_id": 1, "a": 1})"),
                R"({"_id": 1, "b": 1, "c": 1})");
  EXPECT_DOC_EQ(P(R"([{"$set": {"a": 5}}, {"$set": {"b": "$a"}}])", R"({"_id": 1, "a": 1})"),
                R"({"_id": 1, "a": 5, "b": 5})");
}

}  // namespace
}  // namespace mongosim::query
