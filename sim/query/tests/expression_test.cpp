#include "bson/codec.h"
#include "query/tests/query_test_util.h"

namespace mongosim::query {
namespace {

using testing::ctx_at;
using testing::error_code_of;
using testing::J;
using testing::JV;

bson::Value E(std::string_view expr, std::string_view doc = "{}") {
  return evaluate(JV(expr), J(doc), ctx_at(1000));
}

int32_t eval_error(std::string_view expr, std::string_view doc = "{}", std::string* msg = nullptr) {
  return error_code_of([&] { (void)E(expr, doc); }, msg);
}

// A document whose "z" makes {"$divide": [1, "$z"]} fail when it is evaluated: the marker of an
// operand that must not be evaluated. (A constant {"$divide": [1, 0]} would not do: mongod folds
// constant sub-expressions when it parses, and fails there; mongosim does not fold.)
constexpr std::string_view kZero = R"({"z": 0})";

void expect_value(const bson::Value& actual, std::string_view expected_json) {
  bson::Value expected = JV(expected_json);
  EXPECT_TRUE(actual.identical(expected))
      << "actual: " << bson::to_json(actual) << " expected: " << expected_json;
}

TEST(Expression, FieldPathsAndVariables) {
  expect_value(E(R"("$a.b")", R"({"a": {"b": 5}})"), "5");
  expect_value(E(R"("$a.b")", R"({"a": [{"b": 1}, {"c": 2}, {"b": 3}]})"), "[1, 3]");
  expect_value(E(R"("$$NOW")"), R"({"$date": {"$numberLong": "1000"}})");
  expect_value(E(R"("$$ROOT.a")", R"({"a": 2})"), "2");
  expect_value(E(R"("$$CURRENT")", R"({"a": 2})"), R"({"a": 2})");
  expect_value(E(R"({"$literal": "$a"})"), R"("$a")");
  expect_value(E(R"({"x": "$a"})", R"({"a": 1})"), R"({"x": 1})");
  EXPECT_EQ(eval_error(R"("$$nope")"), 17276);
}

TEST(Expression, ComparisonsHaveNoTypeBracketing) {
  expect_value(E(R"({"$gt": ["$n", "$$NOW"]})", R"({"n": 1e15})"), "false");
  expect_value(E(R"({"$lt": [null, "$$NOW"]})"), "true");
  expect_value(E(R"({"$eq": ["$missing", null]})"), "false");
  expect_value(E(R"({"$lt": ["$missing", null]})"), "true");
  expect_value(E(R"({"$eq": [1, 1.0]})"), "true");
  expect_value(E(R"({"$cmp": ["a", 1]})"), "1");
  expect_value(E(R"({"$ne": ["a", "b"]})"), "true");
  std::string msg;
  EXPECT_EQ(eval_error(R"({"$eq": [1]})", "{}", &msg), 16020);
  EXPECT_EQ(msg, "Expression $eq takes exactly 2 arguments. 1 were passed in.");
}

TEST(Expression, CondIfNullAndLogic) {
  expect_value(E(R"({"$cond": [true, 1, 2]})"), "1");
  expect_value(E(R"({"$cond": {"if": "$x", "then": 1, "else": 2}})", R"({"x": 0})"), "2");
  expect_value(E(R"({"$cond": {"if": "$x", "then": 1, "else": 2}})", R"({"x": ""})"), "1");
  expect_value(E(R"({"$ifNull": ["$a", "$b", 3]})", R"({"b": null})"), "3");
  expect_value(E(R"({"$ifNull": ["$a", "d"]})", R"({"a": 0})"), "0");
  expect_value(E(R"({"$and": []})"), "true");
  expect_value(E(R"({"$or": []})"), "false");
  expect_value(E(R"({"$and": [1, "$missing"]})"), "false");
  expect_value(E(R"({"$not": [0]})"), "true");
  EXPECT_EQ(eval_error(R"({"$cond": {"if": true, "then": 1}})"), 17080);
  EXPECT_EQ(eval_error(R"({"$ifNull": [1]})"), 1257300);
}

TEST(Expression, ArithmeticPromotion) {
  expect_value(E(R"({"$add": [1, 2]})"), "3");
  expect_value(E(R"({"$add": [2147483647, 1]})"), R"({"$numberLong": "2147483648"})");
  expect_value(E(R"({"$add": [1, 0.5]})"), "1.5");
  expect_value(E(R"({"$add": [{"$numberLong": "9223372036854775807"}, {"$numberLong": "1"}]})"),
               "9.2233720368547758e18");
  expect_value(E(R"({"$add": [1, null]})"), "null");
  expect_value(E(R"({"$add": [1, "$missing"]})"), "null");
  expect_value(E(R"({"$add": ["$$NOW", 500]})"), R"({"$date": {"$numberLong": "1500"}})");
  expect_value(E(R"({"$subtract": ["$$NOW", 400]})"), R"({"$date": {"$numberLong": "600"}})");
  expect_value(E(R"({"$subtract": ["$$NOW", "$$NOW"]})"), R"({"$numberLong": "0"})");
  expect_value(E(R"({"$subtract": [5, 7]})"), "-2");
  expect_value(E(R"({"$multiply": [3, 4]})"), "12");
  expect_value(E(R"({"$multiply": [65536, 65536]})"), R"({"$numberLong": "4294967296"})");
  // The type comes from the widest operand, not the widest step (mongod's long accumulator).
  expect_value(E(R"({"$add": [2147483647, 1, -1]})"), "2147483647");
  expect_value(E(R"({"$multiply": [65536, 65536, 0]})"), "0");
  expect_value(E(R"({"$add": [{"$numberLong": "1"}, 1]})"), R"({"$numberLong": "2"})");
  std::string msg;
  EXPECT_EQ(eval_error(R"({"$add": ["$$NOW", "$$NOW"]})", "{}", &msg), 16612);
  EXPECT_EQ(msg, "only one date allowed in an $add expression");
  // Type errors are TypeMismatch (14) with mongod 7.0's texts.
  EXPECT_EQ(eval_error(R"({"$subtract": [5, "$$NOW"]})", "{}", &msg), 14);
  EXPECT_EQ(msg, "can't $subtract date from int");
  EXPECT_EQ(eval_error(R"({"$subtract": ["$$NOW", "x"]})", "{}", &msg), 14);
  EXPECT_EQ(msg, "can't $subtract string from Date");
  EXPECT_EQ(eval_error(R"({"$add": [1, "x"]})", "{}", &msg), 14);
  EXPECT_EQ(msg, "$add only supports numeric or date types, not string");
  EXPECT_EQ(eval_error(R"({"$multiply": [1, "x"]})", "{}", &msg), 14);
  EXPECT_EQ(msg, "$multiply only supports numeric types, not string");
  EXPECT_EQ(eval_error(R"({"$divide": [1, "x"]})", "{}", &msg), 14);
  EXPECT_EQ(msg, "$divide only supports numeric types, not int and string");
  EXPECT_EQ(eval_error(R"({"$divide": [1, 0]})", "{}", &msg), 2);  // BadValue
  EXPECT_EQ(msg, "can't $divide by zero");
  EXPECT_EQ(eval_error(R"({"$divide": [1, "$z"]})", kZero), 2);  // the tests' marker fails
  // A date's milliseconds join the sum, rounded once (half away from zero) when it is a double;
  // a date minus a double truncates the double (mongod's coerceToLong).
  expect_value(E(R"({"$add": ["$$NOW", -0.5]})"), R"({"$date": {"$numberLong": "1000"}})");
  expect_value(E(R"({"$add": [0.25, "$$NOW", 0.25]})"), R"({"$date": {"$numberLong": "1001"}})");
  expect_value(E(R"({"$subtract": ["$$NOW", 1.7]})"), R"({"$date": {"$numberLong": "999"}})");
  EXPECT_EQ(eval_error(R"({"$add": ["$$NOW", 1e19]})", "{}", &msg), 15);  // Overflow
  EXPECT_EQ(msg, "date overflow in $add");
  EXPECT_EQ(eval_error(R"({"$add": ["$$NOW", {"$numberDouble": "NaN"}]})"), 15);
  // A decimal sum with a date rounds half to even (Decimal128::toLong).
  expect_value(E(R"({"$add": ["$$NOW", {"$numberDecimal": "0.5"}]})"),
               R"({"$date": {"$numberLong": "1000"}})");
  expect_value(E(R"({"$add": ["$$NOW", {"$numberDecimal": "2.5"}]})"),
               R"({"$date": {"$numberLong": "1002"}})");
  // The number taken from a date is coerced to a long as mongod does (31109 outside the range,
  // NaN included; a decimal rounded half to even), and the date arithmetic is checked
  // (DurationOverflow, 159).
  EXPECT_EQ(eval_error(R"({"$subtract": ["$$NOW", 1e19]})", "{}", &msg), 31109);
  EXPECT_EQ(msg, "Can't coerce out of range value 1e+19 to long");
  EXPECT_EQ(eval_error(R"({"$subtract": ["$$NOW", {"$numberDouble": "NaN"}]})"), 31109);
  expect_value(E(R"({"$subtract": ["$$NOW", {"$numberDecimal": "1.5"}]})"),
               R"({"$date": {"$numberLong": "998"}})");
  EXPECT_EQ(eval_error(R"({"$subtract": ["$$NOW", {"$numberLong": "-9223372036854775808"}]})", "{}",
                       &msg),
            159);
  EXPECT_EQ(msg, "Cannot negate the minimum duration");
  EXPECT_EQ(eval_error(R"({"$subtract": ["$$NOW", {"$numberLong": "-9223372036854775807"}]})"),
            159);
  EXPECT_EQ(eval_error(R"({"$subtract": ["$$NOW", -9223372036854775808.0]})"), 159);   // in range
  EXPECT_EQ(eval_error(R"({"$subtract": ["$$NOW", 9223372036854775808.0]})"), 31109);  // 2^63
  // A decimal mongod cannot convert becomes -2^63 (no 31109), which cannot be negated.
  EXPECT_EQ(eval_error(R"({"$subtract": ["$$NOW", {"$numberDecimal": "NaN"}]})"), 159);
  // Date minus date past the long range wraps, as mongod's plain subtraction does.
  expect_value(E(R"({"$subtract": [{"$date": {"$numberLong": "-9223372036854775808"}}, "$$NOW"]})"),
               R"({"$numberLong": "9223372036854774808"})");
  // Left to right, as mongod: a null before a bad operand wins, a bad one before a null fails,
  // and what follows either is not evaluated (the $divide by "$z" would fail).
  expect_value(E(R"({"$add": [null, "x"]})"), "null");
  expect_value(E(R"({"$add": ["$$NOW", null, "$$NOW"]})"), "null");
  EXPECT_EQ(eval_error(R"({"$add": ["x", null]})"), 14);
  EXPECT_EQ(eval_error(R"({"$add": ["$$NOW", "$$NOW", null]})"), 16612);
  expect_value(E(R"({"$multiply": ["$missing", {"$divide": [1, "$z"]}]})", kZero), "null");
  EXPECT_EQ(eval_error(R"({"$multiply": [[], null]})"), 14);
  EXPECT_EQ(eval_error(R"({"$multiply": [2, "x", {"$divide": [1, "$z"]}]})", kZero), 14);
}

TEST(Expression, MaxMinConcatSizeInType) {
  expect_value(E(R"({"$max": [1, "$$NOW", null]})"), R"({"$date": {"$numberLong": "1000"}})");
  expect_value(E(R"({"$max": [[1, 5, 3]]})"), "5");
  expect_value(E(R"({"$min": [4, 2, null]})"), "2");
  expect_value(E(R"({"$max": [null, "$missing"]})"), "null");
  expect_value(E(R"({"$concat": ["a", "b"]})"), R"("ab")");
  expect_value(E(R"({"$concat": ["a", null]})"), "null");
  EXPECT_EQ(eval_error(R"({"$concat": ["a", 1]})"), 16702);
  // In order, as mongod: the first nullish operand wins over a later non-string, a non-string
  // over a later nullish, and nothing after the first of either is evaluated.
  expect_value(E(R"({"$concat": [null, 1]})"), "null");
  expect_value(E(R"({"$concat": ["$missing", {"$divide": [1, "$z"]}]})", kZero), "null");
  EXPECT_EQ(eval_error(R"({"$concat": [1, null]})"), 16702);
  EXPECT_EQ(eval_error(R"({"$concat": ["a", 1, {"$divide": [1, "$z"]}]})", kZero), 16702);
  expect_value(E(R"({"$size": [[1, 2]]})"), "2");
  EXPECT_EQ(eval_error(R"({"$size": "$missing"})"), 17124);
  expect_value(E(R"({"$in": [2, [1, 2]]})"), "true");
  expect_value(E(R"({"$in": ["$h", "$list"]})", R"({"h": "x", "list": ["y"]})"), "false");
  EXPECT_EQ(eval_error(R"({"$in": [1, "$missing"]})"), 40081);
  auto type_of = [](bson::Value arg) { return evaluate(testing::Op("$type", arg), {}, ctx_at()); };
  expect_value(type_of(bson::V("$missing")), R"("missing")");
  expect_value(type_of(bson::V(int32_t{1})), R"("int")");
  expect_value(type_of(JV("[[1]]")), R"("array")");
}

TEST(Expression, Conversions) {
  expect_value(E(R"({"$toDate": {"$numberLong": "5"}})"), R"({"$date": {"$numberLong": "5"}})");
  expect_value(E(R"({"$toDate": 5.9})"), R"({"$date": {"$numberLong": "5"}})");
  expect_value(E(R"({"$toDate": "2024-01-02T03:04:05.006Z"})"),
               R"({"$date": "2024-01-02T03:04:05.006Z"})");
  expect_value(E(R"({"$toDate": {"$oid": "000000010000000000000000"}})"),
               R"({"$date": {"$numberLong": "1000"}})");
  expect_value(E(R"({"$toDate": null})"), "null");
  std::string msg;
  EXPECT_EQ(eval_error(R"({"$toDate": 5})", "{}", &msg), 241);
  EXPECT_EQ(msg, "Unsupported conversion from int to date in $convert with no onError value");
  EXPECT_EQ(eval_error(R"({"$toDate": "not a date"})"), 241);
  expect_value(E(R"({"$toLong": 5})"), R"({"$numberLong": "5"})");
  expect_value(E(R"({"$toLong": "$$NOW"})"), R"({"$numberLong": "1000"})");
  expect_value(E(R"({"$toLong": "-12"})"), R"({"$numberLong": "-12"})");
  expect_value(E(R"({"$toLong": 2.7})"), R"({"$numberLong": "2"})");
  EXPECT_EQ(eval_error(R"({"$toLong": "x"})"), 241);
}

TEST(Expression, DateAdd) {
  expect_value(E(R"({"$dateAdd": {"startDate": "$$NOW", "unit": "second", "amount": 2}})"),
               R"({"$date": {"$numberLong": "3000"}})");
  expect_value(
      E(R"({"$dateAdd": {"startDate": {"$date": "2024-01-31T00:00:00Z"}, "unit": "month", "amount": 1}})"),
      R"({"$date": "2024-02-29T00:00:00Z"})");
  expect_value(
      E(R"({"$dateAdd": {"startDate": {"$date": "2024-03-01T00:00:00Z"}, "unit": "year", "amount": -1}})"),
      R"({"$date": "2023-03-01T00:00:00Z"})");
  expect_value(E(R"({"$dateAdd": {"startDate": null, "unit": "day", "amount": 1}})"), "null");
  EXPECT_EQ(eval_error(R"({"$dateAdd": {"startDate": 1, "unit": "day", "amount": 1}})"), 5166403);
  EXPECT_EQ(eval_error(R"({"$dateAdd": {"startDate": "$$NOW", "unit": "day"}})"), 5166402);
  EXPECT_EQ(eval_error(R"({"$dateAdd": {"startDate": "$$NOW", "unit": "eon", "amount": 1}})"), 9);
}

TEST(Expression, ParseErrors) {
  std::string msg;
  EXPECT_EQ(eval_error(R"({"$foo": 1})", "{}", &msg), 168);
  EXPECT_EQ(msg, "Unrecognized expression '$foo'");
  EXPECT_EQ(eval_error(R"({"$add": [1], "b": 1})"), 15983);
  EXPECT_EQ(eval_error(R"({"a": {"$bar": 1}})"), 168);
}

// $slice, $first/$last, $reverseArray and $indexOfArray as mongod evaluates them (its
// expression.cpp): null for a nullish array, negative positions from the end, int32 indexes.
// What it omits: mongod folds constant arguments at optimize time and prefixes such errors; here
// every error is raised at evaluation, with the bare message.
TEST(ExpressionArrays, SliceFirstLastReverseAndIndexOf) {
  const char* doc = R"({"a": [1, 2, 3, 4, 5], "e": [], "s": "text", "n": null})";
  expect_value(E(R"({"$slice": ["$a", 2]})", doc), "[1, 2]");
  expect_value(E(R"({"$slice": ["$a", -2]})", doc), "[4, 5]");
  expect_value(E(R"({"$slice": ["$a", 0]})", doc), "[]");
  expect_value(E(R"({"$slice": ["$a", 9]})", doc), "[1, 2, 3, 4, 5]");
  expect_value(E(R"({"$slice": ["$a", 1, 2]})", doc), "[2, 3]");
  expect_value(E(R"({"$slice": ["$a", -2, 9]})", doc), "[4, 5]");
  expect_value(E(R"({"$slice": ["$a", -9, 2]})", doc), "[1, 2]");
  expect_value(E(R"({"$slice": ["$a", 7, 2]})", doc), "[]");
  expect_value(E(R"({"$slice": ["$a", 2.0]})", doc), "[1, 2]");
  expect_value(E(R"({"$slice": ["$missing", 1]})", doc), "null");
  expect_value(E(R"({"$slice": ["$s", "$n"]})", doc), "null");  // null before the type check
  expect_value(E(R"({"$slice": ["$a", 1, "$n"]})", doc), "null");
  expect_value(E(R"({"$first": ["$a"]})", doc), "1");
  expect_value(E(R"({"$last": "$a"})", doc), "5");
  expect_value(E(R"({"$first": "$missing"})", doc), "null");
  expect_value(E(R"({"x": {"$first": "$e"}})", doc), "{}");  // missing: the field is left out
  expect_value(E(R"({"$reverseArray": "$a"})", doc), "[5, 4, 3, 2, 1]");
  expect_value(E(R"({"$reverseArray": "$n"})", doc), "null");
  expect_value(E(R"({"$indexOfArray": ["$a", 3]})", doc), "2");
  expect_value(E(R"({"$indexOfArray": ["$a", 3.0, 1, 3]})", doc), "2");
  expect_value(E(R"({"$indexOfArray": ["$a", 3, 3]})", doc), "-1");
  expect_value(E(R"({"$indexOfArray": ["$a", 1, 0, 99]})", doc), "0");
  expect_value(E(R"({"$indexOfArray": ["$missing", "$s", "bad"]})", doc), "null");
  const bson::Value index = E(R"({"$indexOfArray": ["$a", 5]})", doc);
  EXPECT_EQ(index.type(), bson::Type::kInt32) << bson::to_json(index);
}

TEST(ExpressionArrays, SliceFirstLastReverseAndIndexOfErrors) {
  const char* doc = R"({"a": [1, 2], "s": "text"})";
  std::string msg;
  EXPECT_EQ(eval_error(R"({"$slice": ["$s", 1]})", doc, &msg), 28724);
  EXPECT_EQ(msg, "First argument to $slice must be an array, but is of type: string");
  EXPECT_EQ(eval_error(R"({"$slice": ["$a", "$s"]})", doc, &msg), 28725);
  EXPECT_EQ(msg, "Second argument to $slice must be a numeric value, but is of type: string");
  EXPECT_EQ(eval_error(R"({"$slice": ["$a", 1.5]})", doc), 28726);
  EXPECT_EQ(eval_error(R"({"$slice": ["$a", 0, "$s"]})", doc), 28727);
  EXPECT_EQ(eval_error(R"({"$slice": ["$a", 0, 3000000000]})", doc), 28728);
  EXPECT_EQ(eval_error(R"({"$slice": ["$a", 0, 0]})", doc, &msg), 28729);
  EXPECT_EQ(msg, "Third argument to $slice must be positive: 0");
  EXPECT_EQ(eval_error(R"({"$slice": ["$a", 0, 1, 2]})", doc, &msg), 28667);
  EXPECT_EQ(msg,
            "Expression $slice takes at least 2 arguments, and at most 3, but 4 were passed in.");
  EXPECT_EQ(eval_error(R"({"$first": "$s"})", doc, &msg), 28689);
  EXPECT_EQ(msg, "$first's argument must be an array, but is string");
  EXPECT_EQ(eval_error(R"({"$last": [1, 2]})", doc, &msg), 16020);  // two operands, not an array
  EXPECT_EQ(eval_error(R"({"$reverseArray": "$s"})", doc), 34435);
  EXPECT_EQ(eval_error(R"({"$indexOfArray": ["$s", 1]})", doc), 40090);
  EXPECT_EQ(eval_error(R"({"$indexOfArray": ["$a", 1, null]})", doc, &msg), 40096);
  EXPECT_EQ(msg,
            "$indexOfArrayrequires an integral starting index, found a value of type: null, "
            "with value: null");
  EXPECT_EQ(eval_error(R"({"$indexOfArray": ["$a", 1, 0, -1]})", doc, &msg), 40097);
  EXPECT_EQ(msg, "$indexOfArray requires a nonnegative ending index, found: -1");
}

TEST(Expression, SwitchReduceAndElementTruth) {
  const char* doc = R"({"q": [{"w": "a", "x": 1}, {"w": "b", "x": 0}, {"w": "c", "x": 5}],
      "n": 3})";
  const char* grade = R"({"$switch": {"branches": [
      {"case": {"$lt": ["$n", 2]}, "then": "low"},
      {"case": {"$lt": ["$n", 4]}, "then": "mid"}], "default": "high"}})";
  expect_value(E(grade, doc), R"("mid")");
  expect_value(E(grade, R"({"n": 9})"), R"("high")");
  expect_value(E(R"({"$reduce": {"input": "$q", "initialValue": 0,
                     "in": {"$add": ["$$value", "$$this.x"]}}})",
                 doc),
               "6");
  expect_value(E(R"({"$reduce": {"input": "$q.w", "initialValue": "",
                     "in": {"$concat": ["$$value", "$$this"]}}})",
                 doc),
               R"("abc")");
  expect_value(E(R"({"$reduce": {"input": [], "initialValue": 7, "in": 0}})"), "7");
  expect_value(E(R"({"$reduce": {"input": "$missing", "initialValue": "$$nope", "in": 0}})"),
               "null");  // initialValue not evaluated
  expect_value(E(R"({"$anyElementTrue": ["$q.x"]})", doc), "true");
  expect_value(E(R"({"$allElementsTrue": ["$q.x"]})", doc), "false");
  expect_value(E(R"({"$allElementsTrue": [[]]})"), "true");
  expect_value(E(R"({"$anyElementTrue": [[]]})"), "false");
}

// A variable bound to a missing value reads as missing (mongod's Variables), not as undefined;
// a $reduce that nests its accumulator deeper than any BSON may is refused (15) before a
// recursive reader meets it.
TEST(Expression, MissingVariablesAndReduceDepth) {
  expect_value(E(R"({"t": {"$type": {"$let": {"vars": {"x": "$nope"}, "in": "$$x"}}}})"),
               R"({"t": "missing"})");
  expect_value(E(R"({"r": {"$reduce": {"input": [1], "initialValue": "$nope", "in": "$$value"}}})"),
               "{}");
  expect_value(E(R"({"$reduce": {"input": [1, 2], "initialValue": "$nope",
                     "in": {"$ifNull": ["$$value", "$$this"]}}})"),
               "1");
  std::string wrap_100 = R"({"$reduce": {"input": {"$map": {"input": [)";
  for (int i = 0; i < 100; ++i) wrap_100 += i == 0 ? "1" : ", 1";
  wrap_100 += R"(], "in": 1}}, "initialValue": 0, "in": {"a": "$$value"}}})";
  const bson::Value nested = E(wrap_100);
  EXPECT_FALSE(bson::deeper_than(nested, 100)) << "100 wraps nest 99 levels below the value";
  EXPECT_TRUE(bson::deeper_than(nested, 98));
  // An accumulator holding itself twice per step shares its halves: its depth is checked in
  // steps proportional to its distinct parts, not its 2^64 paths.
  std::string doubling = R"({"$size": {"$reduce": {"input": [)";
  for (int i = 0; i < 64; ++i) doubling += i == 0 ? "0" : ", 0";
  doubling += R"(], "initialValue": 0, "in": ["$$value", "$$value"]}}})";
  expect_value(E(doubling), "2");
  std::string wrap_300 = R"({"$reduce": {"input": [)";
  for (int i = 0; i < 300; ++i) wrap_300 += i == 0 ? "1" : ", 1";
  wrap_300 += R"(], "initialValue": 0, "in": {"a": "$$value"}}})";
  std::string msg;
  EXPECT_EQ(eval_error(wrap_300, "{}", &msg), code::kOverflow);
  EXPECT_EQ(msg, "$reduce accumulated value exceeded max allowable BSON depth");
}

// A $reduce that concatenates its accumulator to itself doubles it each step. A string of 16 MiB
// or more is refused as mongod refuses one (16493); an array of more than 2^22 elements, which
// mongod would build, is refused by mongosim (146) before it is built (such doubling used to grow
// until the process ran out of memory). What the model omits: memory an expression holds in many
// small values (only single values are bounded here).
TEST(Expression, DoublingValuesAreRefusedBeforeTheyAreBuilt) {
  auto doubling = [](int steps, const char* initial) {
    std::string e = R"({"$reduce": {"input": [)";
    for (int i = 0; i < steps; ++i) e += i == 0 ? "0" : ", 0";
    return e + R"(], "initialValue": )" + initial +
           R"(, "in": {"$concat": ["$$value", "$$value"]}}})";
  };
  std::string msg;
  EXPECT_EQ(eval_error(doubling(23, R"("ab")"), "{}", &msg), 16493);  // 2^24 bytes
  EXPECT_EQ(msg, "Tried to create string longer than 16MB");
  EXPECT_EQ(E(doubling(22, R"("ab")")).as_string().size(), size_t{8} << 20);
  // 4100 copies of a 1024-element array: refused from the operands' sizes, nothing built.
  std::string many = R"({"$let": {"vars": {"a": {"$map": {"input": [)";
  for (int i = 0; i < 1024; ++i) many += i == 0 ? "0" : ", 0";
  many += R"(], "in": 1}}}, "in": {"$size": {"$concatArrays": [)";
  for (int i = 0; i < 4100; ++i) many += i == 0 ? R"("$$a")" : R"(, "$$a")";
  many += "]}}}}";
  EXPECT_EQ(eval_error(many, "{}", &msg), code::kExceededMemoryLimit);
  EXPECT_EQ(msg,
            "$concatArrays would build 4198400 elements; mongosim builds arrays of at most "
            "4194304");
}

// Comparing a value whose parts are shared many times with itself does not walk it (2^40 leaves in
// 40 arrays); two such values built apart are compared path by path, up to 2^24 values: past that
// no BSON document could hold them (10334). What the model omits: time, which maxTimeMS bounds.
TEST(Expression, SharedValuesAreComparedWithinABound) {
  auto shared = [](int levels) {
    std::string e = R"({"$reduce": {"input": [)";
    for (int i = 0; i < levels; ++i) e += i == 0 ? "0" : ", 0";
    return e + R"(], "initialValue": 0, "in": ["$$value", "$$value"]}})";
  };
  expect_value(
      E(R"({"$let": {"vars": {"r": )" + shared(40) + R"(}, "in": {"$eq": ["$$r", "$$r"]}}})"),
      "true");
  expect_value(E(R"({"$eq": [)" + shared(12) + ", " + shared(12) + "]}"), "true");
  std::string msg;
  EXPECT_EQ(eval_error(R"({"$eq": [)" + shared(24) + ", " + shared(24) + "]}", "{}", &msg),
            code::kBSONObjectTooLarge);
  EXPECT_EQ(msg,
            "a comparison visited more than 16777216 values: more than two 16 MiB BSON "
            "documents hold");
}

// maxTimeMS: evaluation past the command's deadline fails with 50, checked every
// kDeadlineCheckSteps operators; without a deadline the same work completes. What the model
// omits: time spent outside expressions (a scan with a plain filter is not interrupted).
TEST(Expression, EvaluationPastTheDeadlineFails) {
  std::string slow = R"({"$reduce": {"input": {"$concatArrays": [)";
  std::string hundred = "[";
  for (int i = 0; i < 100; ++i) hundred += i == 0 ? "0" : ", 0";
  hundred += "]";
  for (int i = 0; i < 30; ++i) slow += (i == 0 ? "" : ", ") + hundred;
  slow += R"(]}, "initialValue": 0, "in": {"$add": ["$$value", 1]}}})";
  EvalContext ctx = ctx_at(1000);
  EXPECT_TRUE(evaluate(JV(slow), J("{}"), ctx).identical(bson::V(int32_t{3000})));
  ctx.deadline = std::chrono::steady_clock::now() - std::chrono::milliseconds(1);
  EXPECT_EQ(error_code_of([&] { (void)evaluate(JV(slow), J("{}"), ctx); }),
            code::kMaxTimeMSExpired);
}

TEST(Expression, SwitchReduceAndElementTruthErrors) {
  std::string msg;
  EXPECT_EQ(eval_error(R"({"$switch": {"branches": [{"case": false, "then": 1}]}})", "{}", &msg),
            40066);
  EXPECT_EQ(msg,
            "$switch could not find a matching branch for an input, and no default was "
            "specified.");
  EXPECT_EQ(eval_error(R"({"$switch": [1]})"), 40060);
  EXPECT_EQ(eval_error(R"({"$switch": {"branches": 1}})"), 40061);
  EXPECT_EQ(eval_error(R"({"$switch": {"branches": [1]}})"), 40062);
  EXPECT_EQ(eval_error(R"({"$switch": {"branches": [{"case": 1, "then": 1, "x": 1}]}})"), 40063);
  EXPECT_EQ(eval_error(R"({"$switch": {"branches": [{"then": 1}]}})"), 40064);
  EXPECT_EQ(eval_error(R"({"$switch": {"branches": [{"case": 1}]}})"), 40065);
  EXPECT_EQ(eval_error(R"({"$switch": {"branches": [], "default": 1}})"), 40068);
  EXPECT_EQ(eval_error(R"({"$switch": {"default": 1, "other": 2}})"), 40067);
  EXPECT_EQ(eval_error(R"({"$switch": {"branches": [{"case": {"$bogus": 1}, "then": 1}]}})"),
            code::kInvalidPipelineOperator);  // branches are validated as expressions
  EXPECT_EQ(eval_error(R"({"$reduce": 1})"), 40075);
  EXPECT_EQ(eval_error(R"({"$reduce": {"input": [], "initialValue": 0, "in": 0, "x": 1}})"), 40076);
  EXPECT_EQ(eval_error(R"({"$reduce": {"initialValue": 0, "in": 0}})"), 40077);
  EXPECT_EQ(eval_error(R"({"$reduce": {"input": [], "in": 0}})"), 40078);
  EXPECT_EQ(eval_error(R"({"$reduce": {"input": [], "initialValue": 0}})"), 40079);
  EXPECT_EQ(eval_error(R"({"$reduce": {"input": "s", "initialValue": 0, "in": 0}})", "{}", &msg),
            40080);
  EXPECT_EQ(msg, "$reduce requires that 'input' be an array, found: \"s\"");
  EXPECT_EQ(eval_error(R"({"$reduce": {"input": [1], "initialValue": "$$this", "in": 0}})"),
            17276);  // $$this is bound in 'in' only
  EXPECT_EQ(eval_error(R"({"$anyElementTrue": "$missing"})", "{}", &msg), 17041);
  EXPECT_EQ(msg, "$anyElementTrue's argument must be an array, but is missing");
  EXPECT_EQ(eval_error(R"({"$allElementsTrue": [null]})", "{}", &msg), 17040);
  EXPECT_EQ(msg, "$allElementsTrue's argument must be an array, but is null");
}

}  // namespace
}  // namespace mongosim::query

namespace mongosim::query {
namespace {

// $filter/$map/$concatArrays: what the reader/writer lock's pipelines use to keep live shared
// holds (filter by expiry), extend one holder (map with a condition) and add one (concat).
TEST(ExpressionArrays, FilterMapConcat) {
  const char* doc = R"({"h": [{"id": 1, "exp": 5}, {"id": 2, "exp": 50}], "n": null})";
  expect_value(E(R"({"$filter": {"input": "$h", "cond": {"$gt": ["$$this.exp", 10]}}})", doc),
               R"([{"id": 2, "exp": 50}])");
  expect_value(E(R"({"$filter": {"input": "$h", "as": "x", "cond": {"$eq": ["$$x.id", 1]}}})",
                 doc),
               R"([{"id": 1, "exp": 5}])");
  expect_value(E(R"({"$map": {"input": "$h", "in": "$$this.id"}})", doc), "[1, 2]");
  expect_value(E(R"({"$map": {"input": "$h", "as": "e", "in": {"$cond": [
                     {"$eq": ["$$e.id", 2]}, {"$mergeObjects": ["$$e", {"exp": 99}]}, "$$e"]}}})",
                 doc),
               R"([{"id": 1, "exp": 5}, {"id": 2, "exp": 99}])");
  expect_value(E(R"({"$concatArrays": [[1], "$h.id", []]})", doc), "[1, 1, 2]");
  // Nullish inputs give null; the variable does not leak out of its scope.
  expect_value(E(R"({"$filter": {"input": "$n", "cond": true}})", doc), "null");
  expect_value(E(R"({"$map": {"input": "$missing", "in": 1}})", doc), "null");
  expect_value(E(R"({"$concatArrays": [[1], "$missing"]})", doc), "null");
  EXPECT_EQ(eval_error(R"({"$map": {"input": [1], "in": "$$this"}, "x": 1})"), 15983);
  EXPECT_EQ(eval_error(R"("$$this")"), 17276);
}

// Operators that only look at an operand read it in place (a literal, a field of the root, a
// variable's field): the same answers as evaluating it, through every kind of operand. The
// strings are longer than a small-string buffer; "$h.id" through an array builds its value.
TEST(ExpressionArrays, OperandsReadInPlaceAnswerAsEvaluatedOnes) {
  const char* doc = R"({"w": "0123456789abcdef0123456789abcdef", "flag": true, "off": 0,
      "h": [{"id": "0123456789abcdef0123456789abcdef", "n": 1}, {"id": "other-id-longer-than-15", "n": 2}],
      "i": 1, "m": {"k": null}})";
  expect_value(E(R"({"$filter": {"input": "$h", "cond": {"$eq": ["$$this.id", "$w"]}}})", doc),
               R"([{"id": "0123456789abcdef0123456789abcdef", "n": 1}])");
  expect_value(E(R"({"$filter": {"input": "$h", "as": "x",
                     "cond": {"$ne": ["$$x.id", "0123456789abcdef0123456789abcdef"]}}})",
                 doc),
               R"([{"id": "other-id-longer-than-15", "n": 2}])");
  expect_value(E(R"({"$in": ["$w", "$h.id"]})", doc), "true");
  expect_value(E(R"({"$in": ["$missing", [null]]})", doc), "false");
  expect_value(E(R"({"$in": ["$m.k", [null]]})", doc), "true");
  expect_value(E(R"({"$eq": ["$h.n", [1, 2]]})", doc), "true");
  expect_value(E(R"({"$eq": ["$$ROOT.w", "$w"]})", doc), "true");
  expect_value(E(R"({"$arrayElemAt": ["$h.id", "$i"]})", doc), R"("other-id-longer-than-15")");
  expect_value(E(R"({"$arrayElemAt": ["$missing", 0]})", doc), "null");
  expect_value(E(R"({"$arrayElemAt": ["$h", 5]})", doc), "null");  // missing, shown as null
  expect_value(E(R"({"$ifNull": ["$m.k", "$w"]})", doc), R"("0123456789abcdef0123456789abcdef")");
  expect_value(E(R"({"$size": "$h"})", doc), "2");
  expect_value(E(R"({"$and": ["$flag", {"$not": ["$off"]}, "$w"]})", doc), "true");
  expect_value(E(R"({"$or": ["$off", "$missing", "$m.k"]})", doc), "false");
  expect_value(E(R"({"$cond": ["$w", "$w", 0]})", doc), R"("0123456789abcdef0123456789abcdef")");
  expect_value(E(R"({"$map": {"input": "$h", "in": {"$gt": ["$$this.n", "$i"]}}})", doc),
               "[false, true]");
}

// Variables read in place: the innermost binding of a name wins ($let in $let, $filter in
// $filter, both "this"); a variable's path through nested arrays; $$REMOVE as an operand is
// missing.
TEST(ExpressionArrays, VariablesAndPathEdgesReadInPlace) {
  expect_value(E(R"({"$let": {"vars": {"x": 1}, "in": {"$let": {"vars": {"x": 2},
                     "in": {"$eq": ["$$x", 2]}}}}})"),
               "true");
  expect_value(E(R"({"$let": {"vars": {"x": 1}, "in": {"$and": [{"$eq": ["$$x", 1]},
                     {"$let": {"vars": {"y": 3}, "in": {"$lt": ["$$x", "$$y"]}}}]}}})"),
               "true");
  const char* doc = R"({"outer": [{"inner": [1, 5]}, {"inner": [7]}],
      "v": [[{"x": {"y": 1}}], {"x": [{"y": 2}]}], "a": {"b": 9}})";
  expect_value(E(R"({"$filter": {"input": "$outer", "cond": {"$gt": [{"$size": {"$filter": {
                     "input": "$$this.inner", "cond": {"$gt": ["$$this", 4]}}}}, 0]}}})",
                 doc),
               R"([{"inner": [1, 5]}, {"inner": [7]}])");
  expect_value(E(R"({"$filter": {"input": "$outer", "cond": {"$in": [7, "$$this.inner"]}}})", doc),
               R"([{"inner": [7]}])");
  expect_value(E(R"({"$let": {"vars": {"v": "$v"}, "in": {"$eq": ["$$v.x.y", [[1], [2]]]}}})",
                 doc),
               "true");
  expect_value(E(R"({"$eq": ["$$REMOVE", "$missing"]})", doc), "true");
  expect_value(E(R"({"$in": ["$$REMOVE", [null]]})", doc), "false");
  expect_value(E(R"({"$ifNull": ["$$REMOVE", "$a.b"]})", doc), "9");
}

TEST(ExpressionArrays, OperandsReadInPlaceKeepTheirErrors) {
  std::string message;
  EXPECT_EQ(eval_error(R"({"$in": [1, "$s"]})", R"({"s": "text"})", &message), 40081);
  EXPECT_NE(message.find("found: string"), std::string::npos) << message;
  EXPECT_EQ(eval_error(R"({"$arrayElemAt": ["$s", 0]})", R"({"s": "text"})", &message), 28689);
  EXPECT_NE(message.find("but is string"), std::string::npos) << message;
  EXPECT_EQ(eval_error(R"({"$arrayElemAt": [[1], "$s"]})", R"({"s": "text"})", &message), 28690);
  EXPECT_NE(message.find("but is string"), std::string::npos) << message;
  // A number that is not a whole int32 is 28691, its value streamed as a double (mongod).
  EXPECT_EQ(eval_error(R"({"$arrayElemAt": [[1, 2], 1.5]})", "{}", &message), 28691);
  EXPECT_EQ(message,
            "$arrayElemAt's second argument must be representable as a 32-bit integer: 1.5");
  EXPECT_EQ(
      eval_error(R"({"$arrayElemAt": [[1, 2], {"$numberLong": "3000000000"}]})", "{}", &message),
      28691);
  EXPECT_EQ(message,
            "$arrayElemAt's second argument must be representable as a 32-bit integer: 3e+09");
  expect_value(E(R"({"$arrayElemAt": [[1, 2], 1.0]})"), "2");
  EXPECT_EQ(eval_error(R"({"$size": "$s"})", R"({"s": 1})", &message), 17124);
  EXPECT_NE(message.find("type: int"), std::string::npos) << message;
}

TEST(ExpressionArrays, FilterMapConcatErrors) {
  EXPECT_EQ(eval_error(R"({"$filter": {"input": 5, "cond": true}})"), 28651);
  EXPECT_EQ(eval_error(R"({"$map": {"input": "s", "in": 1}})"), 16883);
  EXPECT_EQ(eval_error(R"({"$concatArrays": [[1], 2]})"), 28664);
  // In order, as mongod: nothing after the first nullish or non-array operand is evaluated.
  expect_value(E(R"({"$concatArrays": [[1], null, {"$divide": [1, "$z"]}]})", kZero), "null");
  EXPECT_EQ(eval_error(R"({"$concatArrays": [2, {"$divide": [1, "$z"]}]})", kZero), 28664);
  EXPECT_EQ(eval_error(R"({"$mergeObjects": [null, 1, {"$divide": [1, "$z"]}]})", kZero), 40400);
  // One operand that is an array merges its elements; among several, an array is a bad input.
  expect_value(E(R"({"$mergeObjects": "$d"})", R"({"d": [{"a": 1}, null, {"b": 2, "a": 3}]})"),
               R"({"a": 3, "b": 2})");
  expect_value(E(R"({"$mergeObjects": [[{"a": 1}]]})"), R"({"a": 1})");
  EXPECT_EQ(eval_error(R"({"$mergeObjects": [[{"a": 1}, 5]]})"), 40400);
  EXPECT_EQ(eval_error(R"({"$mergeObjects": [[{"a": 1}], {"b": 2}]})"), 40400);
  EXPECT_EQ(eval_error(R"({"$filter": {"cond": true}})"), 28648);
  EXPECT_EQ(eval_error(R"({"$filter": {"input": [], "cond": true, "bogus": 1}})"), 28647);
  EXPECT_EQ(eval_error(R"({"$map": {"input": []}})"), 16880);
  EXPECT_EQ(eval_error(R"({"$filter": [1, 2]})"), 28646);
}

}  // namespace
// Numbers at the edge of 64 bits: an overflow is an error, never a wrapped value (a review sent
// these to a server: a year added 300 million times came back as a date in 1685 BCE).
TEST(Expression, SixtyFourBitEdgesAreErrorsNotWrappedValues) {
  std::string msg;
  EXPECT_EQ(eval_error(R"({"$dateAdd": {"startDate": {"$date": "2020-01-01T00:00:00Z"},
                                          "unit": "year", "amount": {"$numberLong": "300000000"}}})",
                       "{}", &msg),
            5166406)
      << msg;
  EXPECT_EQ(
      eval_error(R"({"$dateAdd": {"startDate": {"$date": {"$numberLong": "9223372036854775807"}},
                                          "unit": "month", "amount": 1}})"),
      5166406);
  EXPECT_EQ(eval_error(R"({"$toLong": "9223372036854775808"})", "{}", &msg), 241) << msg;
  EXPECT_EQ(eval_error(R"({"$abs": {"$numberLong": "-9223372036854775808"}})"), 28680);
  expect_value(E(R"({"$toLong": "9223372036854775807"})"),
               R"({"$numberLong": "9223372036854775807"})");
}

}  // namespace mongosim::query
