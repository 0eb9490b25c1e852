#include "query/tests/query_test_util.h"

namespace mongosim::query {
namespace {

using testing::ctx_at;
using testing::error_code_of;
using testing::J;
using testing::JV;
using testing::Op;

bool MD(const Document& filter, std::string_view doc) {
  return Matcher::parse(filter).matches(J(doc), ctx_at());
}

bool M(std::string_view filter, std::string_view doc) {
  return Matcher::parse(J(filter)).matches(J(doc), ctx_at());
}

int32_t parse_error(std::string_view filter, std::string* msg = nullptr) {
  return error_code_of([&] { (void)Matcher::parse(J(filter)); }, msg);
}

TEST(Matcher, EqualityOnTopLevelAndDottedPaths) {
  EXPECT_TRUE(M(R"({"a": 1})", R"({"a": 1})"));
  EXPECT_TRUE(M(R"({"a": 1})", R"({"a": 1.0})"));
  EXPECT_TRUE(M(R"({"a": {"$numberLong": "1"}})", R"({"a": 1})"));
  EXPECT_FALSE(M(R"({"a": 1})", R"({"a": "1"})"));
  EXPECT_TRUE(M(R"({"a.b": 2})", R"({"a": {"b": 2}})"));
  EXPECT_FALSE(M(R"({"a.b": 2})", R"({"a": {"b": 3}})"));
  EXPECT_TRUE(M(R"({"a": {"b": 2}})", R"({"a": {"b": 2}})"));
  EXPECT_FALSE(M(R"({"a": {"b": 2}})", R"({"a": {"b": 2, "c": 1}})"));
  EXPECT_TRUE(M(R"({})", R"({"x": 1})"));
}

TEST(Matcher, ArraysMatchWholeOrAnyElement) {
  EXPECT_TRUE(M(R"({"a": 2})", R"({"a": [1, 2, 3]})"));
  EXPECT_TRUE(M(R"({"a": [1, 2]})", R"({"a": [1, 2]})"));
  EXPECT_TRUE(M(R"({"a": [1, 2]})", R"({"a": [[1, 2], 3]})"));
  EXPECT_FALSE(M(R"({"a": [2, 1]})", R"({"a": [1, 2]})"));
  EXPECT_TRUE(M(R"({"a.owner": "x"})", R"({"a": [{"owner": "y"}, {"owner": "x"}]})"));
  EXPECT_TRUE(M(R"({"a.1": 5})", R"({"a": [4, 5]})"));
  EXPECT_FALSE(M(R"({"a.0": 5})", R"({"a": [4, 5]})"));
  EXPECT_TRUE(M(R"({"a.0.b": 1})", R"({"a": [{"b": 1}]})"));
  EXPECT_TRUE(M(R"({"a": {"$gt": 2}})", R"({"a": [1, 3]})"));
  EXPECT_FALSE(M(R"({"a": {"$gt": 5}})", R"({"a": [1, 3]})"));
}

TEST(Matcher, NullMatchesMissingAndNull) {
  EXPECT_TRUE(M(R"({"a": null})", R"({"b": 1})"));
  EXPECT_TRUE(M(R"({"a": null})", R"({"a": null})"));
  EXPECT_FALSE(M(R"({"a": null})", R"({"a": 0})"));
  EXPECT_TRUE(M(R"({"a.b": null})", R"({"a": [{"b": 1}, {"c": 1}]})"));
  EXPECT_TRUE(M(R"({"a": {"$in": [null, 5]}})", R"({})"));
  EXPECT_TRUE(M(R"({"a": {"$exists": true}})", R"({"a": null})"));
  EXPECT_FALSE(M(R"({"a": {"$exists": true}})", R"({})"));
  EXPECT_TRUE(M(R"({"a": {"$exists": false}})", R"({})"));
  EXPECT_TRUE(M(R"({"a.b": {"$exists": true}})", R"({"a": [{"c": 1}, {"b": 1}]})"));
}

TEST(Matcher, ComparisonsUseTypeBracketing) {
  EXPECT_TRUE(M(R"({"a": {"$gt": 5}})", R"({"a": 6})"));
  EXPECT_TRUE(M(R"({"a": {"$gt": 5}})", R"({"a": 5.5})"));
  EXPECT_FALSE(M(R"({"a": {"$gt": 5}})", R"({"a": "z"})"));
  EXPECT_FALSE(M(R"({"a": {"$lt": 5}})", R"({"a": null})"));
  EXPECT_FALSE(M(R"({"a": {"$lt": 5}})", R"({})"));
  const char* date = R"({"$date": "2024-01-01T00:00:00Z"})";
  std::string lt_date = std::string(R"({"e": {"$lt": )") + date + "}}";
  EXPECT_TRUE(M(lt_date, R"({"e": {"$date": "2023-01-01T00:00:00Z"}})"));
  EXPECT_FALSE(M(lt_date, R"({"e": 5})"));
  EXPECT_FALSE(M(lt_date, R"({"e": null})"));
  EXPECT_FALSE(M(lt_date, R"({})"));
  EXPECT_TRUE(M(R"({"a": {"$gte": null}})", R"({})"));
  EXPECT_FALSE(M(R"({"a": {"$gt": null}})", R"({"a": null})"));
  EXPECT_TRUE(M(R"({"a": {"$gte": "b", "$lt": "c"}})", R"({"a": "bz"})"));
  EXPECT_TRUE(M(R"({"a": {"$gt": {"$minKey": 1}}})", R"({"a": "x"})"));
}

TEST(Matcher, NeAndNinOnArraysAndMissing) {
  EXPECT_TRUE(M(R"({"a": {"$ne": 1}})", R"({})"));
  EXPECT_FALSE(M(R"({"a": {"$ne": 1}})", R"({"a": [1, 2]})"));
  EXPECT_TRUE(M(R"({"a": {"$ne": 3}})", R"({"a": [1, 2]})"));
  EXPECT_TRUE(M(R"({"a": {"$nin": [1, 2]}})", R"({})"));
  EXPECT_FALSE(M(R"({"a": {"$nin": [1, 2]}})", R"({"a": [2, 9]})"));
  EXPECT_TRUE(M(R"({"a": {"$in": [1, 2]}})", R"({"a": [2, 9]})"));
  EXPECT_FALSE(M(R"({"a": {"$in": []}})", R"({"a": 1})"));
}

TEST(Matcher, LogicalOperators) {
  EXPECT_TRUE(M(R"({"$or": [{"a": 1}, {"b": 2}]})", R"({"b": 2})"));
  EXPECT_FALSE(M(R"({"$and": [{"a": 1}, {"b": 2}]})", R"({"b": 2})"));
  EXPECT_TRUE(M(R"({"$nor": [{"a": 1}, {"b": 2}]})", R"({"b": 3})"));
  EXPECT_FALSE(M(R"({"$nor": [{"a": 1}, {"b": 2}]})", R"({"a": 1})"));
  EXPECT_TRUE(M(R"({"a": {"$not": {"$gt": 5}}})", R"({"a": 3})"));
  EXPECT_TRUE(M(R"({"a": {"$not": {"$gt": 5}}})", R"({})"));
  EXPECT_FALSE(M(R"({"a": {"$not": {"$gt": 5}}})", R"({"a": 7})"));
}

TEST(Matcher, ElemMatchNeedsOneElementSatisfyingAll) {
  const char* doc = R"({"h": [{"owner": "x", "exp": 1}, {"owner": "y", "exp": 9}]})";
  EXPECT_FALSE(M(R"({"h": {"$elemMatch": {"owner": "x", "exp": {"$gt": 5}}}})", doc));
  EXPECT_TRUE(M(R"({"h": {"$elemMatch": {"owner": "y", "exp": {"$gt": 5}}}})", doc));
  // Without $elemMatch the two clauses may be satisfied by different elements.
  EXPECT_TRUE(M(R"({"h.owner": "x", "h.exp": {"$gt": 5}})", doc));
  EXPECT_TRUE(M(R"({"a": {"$elemMatch": {"$gt": 1, "$lt": 5}}})", R"({"a": [0, 3, 9]})"));
  EXPECT_FALSE(M(R"({"a": {"$elemMatch": {"$gt": 1, "$lt": 5}}})", R"({"a": [0, 9]})"));
  EXPECT_FALSE(M(R"({"a": {"$elemMatch": {"$gt": 1}}})", R"({"a": 3})"));
}

TEST(Matcher, TypeSizeAllRegexMod) {
  auto type_is = [](bson::Value t) { return Document{{"a", Op("$type", std::move(t))}}; };
  EXPECT_TRUE(MD(type_is(bson::V("string")), R"({"a": "x"})"));
  EXPECT_TRUE(MD(type_is(bson::V("number")), R"({"a": {"$numberLong": "3"}})"));
  EXPECT_TRUE(MD(type_is(bson::V(int32_t{16})), R"({"a": 3})"));
  EXPECT_FALSE(MD(type_is(bson::V("long")), R"({"a": 3})"));
  EXPECT_TRUE(MD(type_is(bson::V("array")), R"({"a": []})"));
  EXPECT_TRUE(MD(type_is(JV(R"(["string", "int"])")), R"({"a": 1})"));
  EXPECT_EQ(error_code_of([&] { (void)Matcher::parse(type_is(bson::V("nope"))); }), 2);
  EXPECT_TRUE(M(R"({"a": {"$size": 2}})", R"({"a": [1, [2, 3]]})"));
  EXPECT_FALSE(M(R"({"a": {"$size": 1}})", R"({"a": [1, [2, 3]]})"));
  EXPECT_TRUE(M(R"({"a": {"$all": [1, 3]}})", R"({"a": [3, 2, 1]})"));
  EXPECT_FALSE(M(R"({"a": {"$all": [1, 4]}})", R"({"a": [3, 2, 1]})"));
  EXPECT_FALSE(M(R"({"a": {"$all": []}})", R"({"a": [1]})"));
  Document regex_i{
      {"a", bson::V(Document{{"$regex", bson::V("^ab")}, {"$options", bson::V("i")}})}};
  EXPECT_TRUE(MD(regex_i, R"({"a": "ABc"})"));
  EXPECT_TRUE(
      M(R"({"a": {"$regularExpression": {"pattern": "b+", "options": ""}}})", R"({"a": "abbc"})"));
  EXPECT_FALSE(MD(Document{{"a", Op("$regex", bson::V("^b"))}}, R"({"a": "abc"})"));
  EXPECT_TRUE(M(R"({"a": {"$mod": [4, 1]}})", R"({"a": 9})"));
}

// $mod truncates its operands and refuses what does not truncate to a long (a cast of 1e300
// to int64 is undefined: the wire fuzzer's structure-aware edit put one there).
TEST(Matcher, ModTruncatesItsOperandsAndRefusesWhatIsNotALong) {
  EXPECT_TRUE(M(R"({"a": {"$mod": [4.9, 1.9]}})", R"({"a": 9})"));
  EXPECT_FALSE(M(R"({"a": {"$mod": [4, 1]}})", R"({"a": {"$numberDouble": "NaN"}})"));
  EXPECT_FALSE(M(R"({"a": {"$mod": [4, 1]}})", R"({"a": 1e300})"));
  // 2^53 + 1 is not a double: taken through one, it would be 2^53 and leave 0.
  EXPECT_TRUE(M(R"({"a": {"$mod": [2, 1]}})", R"({"a": {"$numberLong": "9007199254740993"}})"));
  std::string msg;
  EXPECT_EQ(parse_error(R"({"a": {"$mod": [1e300, 1]}})", &msg), 2);
  EXPECT_EQ(msg, "malformed mod, divisor value is invalid");
  EXPECT_EQ(parse_error(R"({"a": {"$mod": [4, {"$numberDouble": "NaN"}]}})", &msg), 2);
  EXPECT_EQ(msg, "malformed mod, remainder value is invalid");
  EXPECT_EQ(parse_error(R"({"a": {"$mod": [4, {"$numberDouble": "-Infinity"}]}})"), 2);
  EXPECT_EQ(parse_error(R"({"a": {"$mod": [0.5, 0]}})", &msg), 2);
  EXPECT_EQ(msg, "divisor cannot be 0");
}

Document regex_filter(const std::string& pattern, const std::string& options = "") {
  return Document{
      {"a", bson::V(Document{{"$regex", bson::V(pattern)}, {"$options", bson::V(options)}})}};
}

Document with_a(const std::string& value) {
  return Document{{"a", bson::V(value)}};
}

// PCRE2, as mongod: its options and syntax, and a search that fails is no match. std::regex
// recursed once per character (a 20 KB subject ended the process) and had no step limit.
TEST(Matcher, RegexesArePcreAndAFailedSearchIsNoMatch) {
  auto matches = [](const Document& filter, const Document& doc) {
    return Matcher::parse(filter).matches(doc, ctx_at());
  };
  std::string long_subject;
  for (int i = 0; i < 10'000; ++i) long_subject += "ab";
  EXPECT_TRUE(matches(regex_filter("^(a|b)*$"), with_a(long_subject)));
  EXPECT_TRUE(matches(regex_filter("a.b", "s"), with_a("a\nb")));
  EXPECT_TRUE(matches(regex_filter("a b # spaces and a comment", "x"), with_a("ab")));
  EXPECT_TRUE(matches(regex_filter("(?<=a)b"), with_a("ab")));  // lookbehind: PCRE, not ECMAScript
  // The step limit reached, and a subject that is not UTF-8: no match, not an error.
  EXPECT_FALSE(matches(regex_filter("^(a+)+$"), with_a(std::string(28, 'a') + "!")));
  EXPECT_FALSE(matches(regex_filter("abc"), with_a("abc\xff")));
  EXPECT_EQ(error_code_of([&] { (void)Matcher::parse(regex_filter("(")); }), 51091);
  EXPECT_EQ(error_code_of([&] { (void)Matcher::parse(regex_filter("a", "g")); }), 51108);
  EXPECT_EQ(error_code_of([&] { (void)Matcher::parse(regex_filter(std::string("a\0b", 3))); }),
            code::kBadValue);
}

// A regex inside $in matches as $regex does: strings, symbols and an identical stored regex.
TEST(Matcher, InRegexesMatchSymbolsAndStoredRegexes) {
  const Document in{
      {"a", bson::V(Document{{"$in", bson::V(bson::Array{bson::V(int32_t{7}),
                                                         bson::Value::regex("abc", "")})}})}};
  const Document nin{
      {"a", bson::V(Document{{"$nin", bson::V(bson::Array{bson::Value::regex("abc", "")})}})}};
  for (const Value& v : {bson::V("xabc"), bson::Value::symbol("abc"), bson::Value::regex("abc", ""),
                         bson::V(int32_t{7})}) {
    const Document doc{{"a", v}};
    EXPECT_TRUE(Matcher::parse(in).matches(doc, ctx_at())) << bson::to_json(doc);
  }
  EXPECT_FALSE(Matcher::parse(nin).matches(Document{{"a", bson::Value::symbol("abc")}}, ctx_at()));
  EXPECT_FALSE(
      Matcher::parse(in).matches(Document{{"a", bson::Value::regex("abc", "i")}}, ctx_at()));
}

// $regex and $options are read in document order, as mongod reads them: options given in both
// are refused by the second (51074 for the regex's flags, 51075 for $options); an empty $options
// before a regex with flags is no conflict.
TEST(Matcher, RegexOptionsInBothPlacesAreRefusedByTheSecond) {
  auto filter = [](const char* first, const Value& a, const char* second, const Value& b) {
    return Document{{"a", bson::V(Document{{first, a}, {second, b}})}};
  };
  const Value flagged = bson::Value::regex("^ab", "i");
  EXPECT_EQ(error_code_of(
                [&] { (void)Matcher::parse(filter("$options", bson::V("m"), "$regex", flagged)); }),
            51074);
  EXPECT_EQ(error_code_of(
                [&] { (void)Matcher::parse(filter("$regex", flagged, "$options", bson::V(""))); }),
            51075);
  EXPECT_EQ(error_code_of(
                [&] { (void)Matcher::parse(filter("$regex", flagged, "$options", bson::V("i"))); }),
            51075);
  const Matcher empty_first = Matcher::parse(filter("$options", bson::V(""), "$regex", flagged));
  EXPECT_TRUE(empty_first.matches(with_a("ABc"), ctx_at()));
  const Matcher options_first =
      Matcher::parse(filter("$options", bson::V("i"), "$regex", bson::Value::regex("^ab", "")));
  EXPECT_TRUE(options_first.matches(with_a("ABc"), ctx_at()));
  EXPECT_FALSE(options_first.matches(with_a("xab"), ctx_at()));
}

// A regex operand: $eq compares with a stored regex, $ne is refused (mongod's SERVER-1705), an
// ordering names the field's path ("" inside $elemMatch's value form, as mongod's parseElemMatch
// parses it).
TEST(Matcher, RegexOperandsOfComparisons) {
  const Value regex = bson::Value::regex("abc", "");
  const Matcher eq = Matcher::parse(Document{{"a", bson::V(Document{{"$eq", regex}})}});
  EXPECT_TRUE(eq.matches(Document{{"a", regex}}, ctx_at()));
  EXPECT_FALSE(eq.matches(with_a("abc"), ctx_at()));
  std::string msg;
  EXPECT_EQ(error_code_of(
                [&] {
                  (void)Matcher::parse(Document{{"a", bson::V(Document{{"$ne", regex}})}});
                },
                &msg),
            code::kBadValue);
  EXPECT_EQ(msg, "Can't have regex as arg to $ne.");
  EXPECT_EQ(error_code_of(
                [&] {
                  (void)Matcher::parse(Document{{"a.b", bson::V(Document{{"$gte", regex}})}});
                },
                &msg),
            code::kBadValue);
  EXPECT_EQ(msg, "Can't have RegEx as arg to predicate over field 'a.b'.");
  const Document elem{{"a", bson::V(Document{{"$elemMatch", bson::V(Document{{"$lt", regex}})}})}};
  EXPECT_EQ(error_code_of([&] { (void)Matcher::parse(elem); }, &msg), code::kBadValue);
  EXPECT_EQ(msg, "Can't have RegEx as arg to predicate over field ''.");
}

TEST(Matcher, ExprComparesWithoutTypeBracketing) {
  // A number is always less than a Date in BSON order (docs/mongodb-behaviour.md, Expressions):
  // this "never expires" bug is real.
  EXPECT_FALSE(
      M(R"({"$expr": {"$gt": ["$expiresAt", "$$NOW"]}})", R"({"expiresAt": 99999999999999})"));
  EXPECT_TRUE(M(R"({"$expr": {"$lt": ["$missing", "$$NOW"]}})", R"({})"));
  EXPECT_FALSE(M(R"({"$expr": {"$eq": ["$missing", null]}})", R"({})"));
  EXPECT_TRUE(M(R"({"$expr": {"$eq": ["$a", "$b"]}})", R"({"a": 1, "b": 1.0})"));
}

TEST(Matcher, UsesExprIsFoundThroughNesting) {
  EXPECT_FALSE(Matcher::parse(J(R"({"a": 1})")).uses_expr());
  EXPECT_TRUE(Matcher::parse(J(R"({"$expr": true})")).uses_expr());
  EXPECT_TRUE(Matcher::parse(J(R"({"$and": [{"a": 1}, {"$or": [{"$expr": true}]}]})")).uses_expr());
  EXPECT_TRUE(Matcher::parse(J(R"({"$nor": [{"$expr": {"$eq": ["$a", 1]}}]})")).uses_expr());
}

TEST(Matcher, RejectsBadOperatorsWithMongodCodes) {
  std::string msg;
  EXPECT_EQ(parse_error(R"({"a": {"$foo": 1}})", &msg), 2);
  EXPECT_EQ(msg, "unknown operator: $foo");
  EXPECT_EQ(parse_error(R"({"$foo": 1})", &msg), 2);
  EXPECT_NE(msg.find("unknown top level operator: $foo"), std::string::npos);
  EXPECT_EQ(parse_error(R"({"$or": []})"), 2);
  EXPECT_EQ(parse_error(R"({"$and": {"a": 1}})"), 2);
  EXPECT_EQ(parse_error(R"({"$or": [1]})"), 2);
  EXPECT_EQ(parse_error(R"({"a": {"$in": 1}})", &msg), 2);
  EXPECT_EQ(msg, "$in needs an array");
  EXPECT_EQ(parse_error(R"({"a": {"$not": {}}})"), 2);
  EXPECT_EQ(parse_error(R"({"a": {"$not": 1}})"), 2);
  EXPECT_EQ(parse_error(R"({"a": {"$size": "x"}})"), 2);
  EXPECT_EQ(parse_error(R"({"a": {"$elemMatch": 1}})"), 2);
  EXPECT_EQ(error_code_of([] {
              (void)Matcher::parse(Document{{"a", Op("$options", bson::V("i"))}});
            }),
            2);
  EXPECT_EQ(parse_error(R"({"$expr": {"$nope": 1}})"), 168);
  EXPECT_EQ(parse_error(R"({"a": 1})"), 0);
}

}  // namespace
}  // namespace mongosim::query
