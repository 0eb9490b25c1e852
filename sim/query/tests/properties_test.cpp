// Property tests: the orders the engine depends on are total and consistent, numeric
// comparison agrees with arithmetic, and $set followed by a read returns what was set.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>

#include "query/path.h"
#include "query/tests/query_test_util.h"

namespace mongosim::query {
namespace {

using bson::Value;

rc::Gen<Value> scalar_gen() {
  return rc::gen::oneOf(
      rc::gen::map(rc::gen::arbitrary<int32_t>(), [](int32_t v) { return Value::int32(v); }),
      rc::gen::map(rc::gen::inRange<int64_t>(-5, 5), [](int64_t v) { return Value::int64(v); }),
      rc::gen::map(rc::gen::arbitrary<int64_t>(), [](int64_t v) { return Value::int64(v); }),
      rc::gen::map(rc::gen::arbitrary<double>(), [](double v) { return Value::dbl(v); }),
      rc::gen::map(rc::gen::inRange(-5, 5), [](int v) { return Value::dbl(v + 0.5); }),
      rc::gen::map(rc::gen::container<std::string>(rc::gen::inRange('a', 'e')),
                   [](std::string s) { return Value::string(std::move(s)); }),
      rc::gen::map(rc::gen::arbitrary<bool>(), [](bool b) { return Value::boolean(b); }),
      rc::gen::map(rc::gen::inRange<int64_t>(-3, 3), [](int64_t v) { return Value::date(v); }),
      rc::gen::just(Value::null()), rc::gen::just(Value::min_key()),
      rc::gen::just(Value::max_key()), rc::gen::just(Value::undefined()));
}

// Containers of 0..3 elements: enough to exercise element-wise comparison, cheap to shrink.
template <typename Container, typename Gen>
rc::Gen<Container> sized(Gen element) {
  return rc::gen::mapcat(rc::gen::inRange<size_t>(0, 4),
                         [element](size_t n) { return rc::gen::container<Container>(n, element); });
}

rc::Gen<Value> value_gen() {
  return rc::gen::oneOf(
      scalar_gen(), scalar_gen(),
      rc::gen::map(sized<bson::Array>(scalar_gen()),
                   [](bson::Array a) { return Value::array(std::move(a)); }),
      rc::gen::map(sized<std::vector<std::pair<std::string, Value>>>(
                       rc::gen::pair(rc::gen::element<std::string>("a", "b", "c"), scalar_gen())),
                   [](std::vector<std::pair<std::string, Value>> fields) {
                     bson::Document d;
                     for (auto& [k, v] : fields) d.append(k, v);
                     return Value::document(std::move(d));
                   }));
}

int sgn(int c) {
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

RC_GTEST_PROP(CompareValues, IsAntisymmetricAndReflexive, ()) {
  Value a = *value_gen();
  Value b = *value_gen();
  RC_ASSERT(compare_values(a, a) == 0);
  RC_ASSERT(sgn(compare_values(a, b)) == -sgn(compare_values(b, a)));
}

RC_GTEST_PROP(CompareValues, IsTransitive, ()) {
  Value a = *value_gen();
  Value b = *value_gen();
  Value c = *value_gen();
  if (compare_values(a, b) <= 0 && compare_values(b, c) <= 0) {
    RC_ASSERT(compare_values(a, c) <= 0);
  }
  if (compare_values(a, b) == 0 && compare_values(b, c) == 0) {
    RC_ASSERT(compare_values(a, c) == 0);
  }
}

// Small integers are exact in every numeric type, so the order must agree with the integers'.
RC_GTEST_PROP(CompareValues, NumericTypesCompareByValue, (int32_t x, int32_t y)) {
  std::vector<Value> xs{Value::int32(x), Value::int64(x), Value::dbl(x)};
  std::vector<Value> ys{Value::int32(y), Value::int64(y), Value::dbl(y)};
  int expected = x < y ? -1 : (x > y ? 1 : 0);
  for (const Value& a : xs) {
    for (const Value& b : ys) RC_ASSERT(sgn(compare_values(a, b)) == expected);
  }
}

// Large int64s near double precision limits: compared exactly, not through double rounding.
RC_GTEST_PROP(CompareValues, Int64AgainstDoubleIsExact, (int64_t x)) {
  double d = static_cast<double>(x);
  int expected;
  if (d >= 9223372036854775808.0) {
    expected = -1;
  } else {
    auto back = static_cast<int64_t>(d);
    expected = x < back ? -1 : (x > back ? 1 : 0);
  }
  RC_ASSERT(sgn(compare_values(Value::int64(x), Value::dbl(d))) == expected);
}

RC_GTEST_PROP(UpdateSet, ThenReadingThePathReturnsTheValue, ()) {
  auto count = *rc::gen::inRange<size_t>(1, 4);
  auto parts = *rc::gen::container<std::vector<std::string>>(
      count, rc::gen::element<std::string>("a", "b", "c"));
  Value v = *value_gen();
  std::string dotted;
  for (const auto& p : parts) dotted += (dotted.empty() ? "" : ".") + p;
  bson::Document set_doc;
  set_doc.append(dotted, v);
  Update u = Update::parse(Value::document(bson::Document{{"$set", Value::document(set_doc)}}));
  bson::Document out = u.apply(bson::Document{{"_id", Value::int32(1)}, {"z", Value::int32(2)}},
                               false, EvalContext{});
  const Value* read = lookup_exact(out, split_path(dotted));
  RC_ASSERT(read != nullptr);
  RC_ASSERT(read->identical(v));
  RC_ASSERT(out.get("z")->identical(Value::int32(2)));
}

RC_GTEST_PROP(SortCompare, IsAStrictWeakOrdering, ()) {
  auto doc_gen = rc::gen::map(value_gen(), [](Value v) {
    return bson::Document{{"k", std::move(v)}};
  });
  bson::Document a = *doc_gen, b = *doc_gen, c = *doc_gen;
  int direction = *rc::gen::element(1, -1);
  Sort s = Sort::parse(bson::Document{{"k", Value::int32(direction)}});
  auto less = [&](const bson::Document& x, const bson::Document& y) { return s.compare(x, y) < 0; };
  RC_ASSERT(!less(a, a));
  if (less(a, b)) RC_ASSERT(!less(b, a));
  if (less(a, b) && less(b, c)) RC_ASSERT(less(a, c));
  bool a_eq_b = !less(a, b) && !less(b, a);
  bool b_eq_c = !less(b, c) && !less(c, b);
  if (a_eq_b && b_eq_c) {
    const bool equivalent = !less(a, c) && !less(c, a);
    RC_ASSERT(equivalent);
  }
}

}  // namespace
}  // namespace mongosim::query
