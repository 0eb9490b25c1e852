#include "query/numeric.h"

#include <cassert>

namespace mongosim::query {

namespace {

enum class Width { kInt32, kInt64, kDouble };

Width width_of(const Value& v) {
  switch (v.type()) {
    case bson::Type::kInt32:
      return Width::kInt32;
    case bson::Type::kInt64:
      return Width::kInt64;
    default:
      return Width::kDouble;
  }
}

int64_t int_of(const Value& v) {
  return v.type() == bson::Type::kInt32 ? v.as_int32() : v.as_int64();
}

template <typename IntOp, typename DoubleOp>
NumericResult combine(const Value& a, const Value& b, IntOp int_op, DoubleOp double_op) {
  assert(a.is_number() && b.is_number());
  Width w = std::max(width_of(a), width_of(b));
  if (w == Width::kDouble) {
    return {Value::dbl(double_op(a.number_as_double(), b.number_as_double())), false};
  }
  int64_t result = 0;
  if (int_op(int_of(a), int_of(b), &result)) {
    return {Value::dbl(double_op(a.number_as_double(), b.number_as_double())), true};
  }
  if (w == Width::kInt32 && result >= INT32_MIN && result <= INT32_MAX) {
    return {Value::int32(static_cast<int32_t>(result)), false};
  }
  return {Value::int64(result), false};
}

}  // namespace

NumericResult add_numbers(const Value& a, const Value& b) {
  return combine(
      a, b, [](int64_t x, int64_t y, int64_t* r) { return __builtin_add_overflow(x, y, r); },
      [](double x, double y) { return x + y; });
}

NumericResult subtract_numbers(const Value& a, const Value& b) {
  return combine(
      a, b, [](int64_t x, int64_t y, int64_t* r) { return __builtin_sub_overflow(x, y, r); },
      [](double x, double y) { return x - y; });
}

NumericResult multiply_numbers(const Value& a, const Value& b) {
  return combine(
      a, b, [](int64_t x, int64_t y, int64_t* r) { return __builtin_mul_overflow(x, y, r); },
      [](double x, double y) { return x * y; });
}

Value zero_like(const Value& number) {
  switch (number.type()) {
    case bson::Type::kInt32:
      return Value::int32(0);
    case bson::Type::kInt64:
      return Value::int64(0);
    default:
      return Value::dbl(0);
  }
}

}  // namespace mongosim::query
