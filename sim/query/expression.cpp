#include "query/expression.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <sstream>
#include <utility>

#include "base/command_error.h"
#include "bson/codec.h"
#include "query/civil_time.h"
#include "query/numeric.h"
#include "query/path.h"
#include "query/supported.h"
#include "query/type_order.h"

namespace mongosim::query {

namespace {

// Guards the recursive evaluator against pathological nesting.
constexpr int kExpressionDepthMax = 150;

[[noreturn]] void fail(int32_t code, const std::string& message) {
  throw CommandError(code, message);
}

bool is_nullish(const Value* v) {
  return v == nullptr || v->is_null() || v->type() == bson::Type::kUndefined;
}

bool is_nullish(const Maybe& v) {
  return is_nullish(v ? &*v : nullptr);
}

std::string type_of(const Value* v) {
  return v != nullptr ? std::string(bson::type_name(v->type())) : "missing";
}

std::string type_of(const Maybe& v) {
  return type_of(v ? &*v : nullptr);
}

// An operator's operands: its array's elements, or the one argument that is not an array. A
// view over args (which outlives it), read as pointers; no allocation, as it is built for every
// operator evaluated.
class Operands {
 public:
  explicit Operands(const Value& args)
      : first_(args.is_array() ? args.as_array().data() : &args),
        size_(args.is_array() ? args.as_array().size() : 1) {}
  size_t size() const { return size_; }
  const Value* operator[](size_t i) const {
    assert(i < size_);
    return first_ + i;
  }
  const Value* back() const { return (*this)[size_ - 1]; }
  struct Iterator {
    const Value* at;
    const Value* operator*() const { return at; }
    Iterator& operator++() {
      ++at;
      return *this;
    }
    bool operator!=(const Iterator& other) const { return at != other.at; }
  };
  Iterator begin() const { return {first_}; }
  Iterator end() const { return {first_ + size_}; }

 private:
  const Value* first_;
  size_t size_;
};

Operands operand_list(const Value& args) {
  return Operands(args);
}

Maybe eval(const Value& e, const Variables& vars, int depth);

// ---- field paths and variables ----

// The first component of a dotted path and what follows its dot ("" at the last component).
// Read in place: a field path is evaluated for every element a $filter or $map visits, and a
// vector of components per read was most of what a read cost.
std::pair<std::string_view, std::string_view> first_component(std::string_view path) {
  size_t dot = path.find('.');
  if (dot == std::string_view::npos) return {path, std::string_view()};
  return {path.substr(0, dot), path.substr(dot + 1)};
}

// Walks `rest` (dotted, possibly empty) from base. `done` says rest is used up (an empty rest
// is also the empty last component of "a." and must still be looked up).
Maybe walk_field_path(const Value& base, std::string_view rest, bool done) {
  if (done) return base;
  if (base.is_document()) {
    auto [name, after] = first_component(rest);
    const Value* child = base.as_document().get(name);
    if (child == nullptr) return std::nullopt;
    return walk_field_path(*child, after, after.data() == nullptr);
  }
  if (base.is_array()) {
    // "$a.b" over an array maps over its elements (docs/mongodb-behaviour.md, Expressions); scalars
    // contribute nothing.
    Array out;
    for (const Value& element : base.as_array()) {
      if (!element.is_document() && !element.is_array()) continue;
      Maybe r = walk_field_path(element, rest, false);
      if (r) out.push_back(std::move(*r));
    }
    return Value::array(std::move(out));
  }
  return std::nullopt;
}

Maybe variable_value(std::string_view name, const Variables& vars) {
  for (auto it = vars.user.rbegin(); it != vars.user.rend(); ++it) {
    if (it->first == name) return it->second;
  }
  if (name == "NOW") return Value::date(vars.ctx->now_ms);
  if (name == "CLUSTER_TIME") return Value::timestamp(vars.ctx->cluster_time);
  if (name == "ROOT" || name == "CURRENT") return Value::document(*vars.root);
  if (name == "REMOVE") return std::nullopt;
  fail(17276, "Use of undefined variable: " + std::string(name));
}

Maybe eval_path_string(const std::string& s, const Variables& vars) {
  assert(!s.empty() && s[0] == '$');
  if (s.size() >= 2 && s[1] == '$') {
    auto [name, after] = first_component(std::string_view(s).substr(2));
    Maybe base = variable_value(name, vars);
    if (after.data() == nullptr || !base) return base;
    return walk_field_path(*base, after, false);
  }
  // Walk the root directly: wrapping it in a Value would copy it for every field read.
  auto [name, after] = first_component(std::string_view(s).substr(1));
  const Value* first = vars.root->get(name);
  if (first == nullptr) return std::nullopt;
  return walk_field_path(*first, after, after.data() == nullptr);
}

// Walks `rest` from base in place; only an array met before the end (which "$a.b" maps over)
// builds a value, kept in `held`. nullptr: missing.
const Value* walk_ref(const Value* base, std::string_view rest, bool done, Maybe& held) {
  while (!done) {
    if (base->is_array()) {
      held = walk_field_path(*base, rest, false);
      return held ? &*held : nullptr;
    }
    if (!base->is_document()) return nullptr;
    auto [name, after] = first_component(rest);
    base = base->as_document().get(name);
    if (base == nullptr) return nullptr;
    rest = after;
    done = after.data() == nullptr;
  }
  return base;
}

// An operand read in place where it can be: a literal scalar, a field of the root, or a user
// variable's (sub)value, without copying it. Operators that only look at an operand (compare,
// test, index) use this: a copied string longer than the small-string buffer is an allocation,
// and a $filter's condition reads its operands once per element. Anything else is evaluated
// into `held`. The result points into e, the root, vars or held and lives as long as they do;
// nullptr: missing.
const Value* eval_ref(const Value& e, const Variables& vars, int depth, Maybe& held) {
  if (depth > kExpressionDepthMax) fail(code::kBadValue, "expression nested too deeply");
  if (e.is_string() && !e.as_string().empty() && e.as_string()[0] == '$') {
    std::string_view s = e.as_string();
    if (s.size() >= 2 && s[1] == '$') {
      auto [name, after] = first_component(s.substr(2));
      for (auto it = vars.user.rbegin(); it != vars.user.rend(); ++it) {
        if (it->first != name) continue;
        if (!it->second) return nullptr;  // bound to a missing value
        return walk_ref(&*it->second, after, after.data() == nullptr, held);
      }
      // A system variable ($$NOW, $$ROOT, ...) is built: evaluated below.
    } else {
      auto [name, after] = first_component(s.substr(1));
      const Value* first = vars.root->get(name);
      if (first == nullptr) return nullptr;
      return walk_ref(first, after, after.data() == nullptr, held);
    }
  } else if (!e.is_document() && !e.is_array()) {
    return &e;  // a literal scalar is its own value
  }
  held = eval(e, vars, depth);
  return held ? &*held : nullptr;
}

bool truthy_at(const Value& e, const Variables& vars, int depth) {
  Maybe held;
  const Value* v = eval_ref(e, vars, depth, held);
  return v != nullptr && v->truthy();
}

// MongoDB's comparison order with missing ranking as undefined (as compare_maybe).
int compare_refs(const Value* a, const Value* b) {
  static const Value kMissing = Value::undefined();
  return compare_values(a != nullptr ? *a : kMissing, b != nullptr ? *b : kMissing);
}

// ---- operator helpers ----

std::vector<Maybe> eval_operands(const Value& args, const Variables& vars, int depth) {
  const Operands operands(args);
  std::vector<Maybe> out;
  out.reserve(operands.size());
  for (const Value* v : operands) out.push_back(eval(*v, vars, depth));
  return out;
}

Maybe from_bool(bool b) {
  return Value::boolean(b);
}

Maybe op_compare(std::string_view name, const Value& args, const Variables& vars, int depth) {
  const Operands ops(args);
  Maybe held_a;
  Maybe held_b;
  int c =
      compare_refs(eval_ref(*ops[0], vars, depth, held_a), eval_ref(*ops[1], vars, depth, held_b));
  if (name == "$eq") return from_bool(c == 0);
  if (name == "$ne") return from_bool(c != 0);
  if (name == "$lt") return from_bool(c < 0);
  if (name == "$lte") return from_bool(c <= 0);
  if (name == "$gt") return from_bool(c > 0);
  if (name == "$gte") return from_bool(c >= 0);
  return Value::int32(c < 0 ? -1 : (c > 0 ? 1 : 0));  // $cmp
}

// mongod keeps an integer sum or product in a long and picks its type from the widest operand:
// of int32 operands only, a long result that fits an int32 is an int32 ({$add: [2147483647, 1,
// -1]} is 2147483647), where stepwise promotion would leave a long.
Value narrowed(Value result, bool all_int32) {
  if (!all_int32 || result.type() != bson::Type::kInt64) return result;
  const int64_t n = *result.number_as_exact_int64();
  if (n < std::numeric_limits<int32_t>::min() || n > std::numeric_limits<int32_t>::max()) {
    return result;
  }
  return Value::int32(static_cast<int32_t>(n));
}

// $add and $multiply, like $concat, go left to right as mongod does: the first nullish operand
// makes the result null and the first of a wrong type fails (TypeMismatch), and nothing after it
// is evaluated.
// A date's milliseconds join the sum as a long, as in mongod's AddState; a sum that became a
// double is rounded once at the end (half away from zero; a decimal one half to even, as
// Decimal128::toLong), and one outside the long range is Overflow (mongod does not check a
// decimal one: mongosim computes decimals as doubles and does).
Maybe op_add(const Value& args, const Variables& vars, int depth) {
  Value total = Value::int32(0);
  bool has_date = false;
  bool has_decimal = false;
  bool all_int32 = true;
  for (const Value* operand : Operands(args)) {
    Maybe v = eval(*operand, vars, depth);
    if (is_nullish(v)) return Value::null();
    if (v->type() == bson::Type::kDateTime) {
      if (has_date) fail(code::kLocation16612, "only one date allowed in an $add expression");
      has_date = true;
      total = add_numbers(total, Value::int64(v->as_date_ms())).value;
    } else if (v->is_number()) {
      has_decimal = has_decimal || v->type() == bson::Type::kDecimal128;
      all_int32 = all_int32 && v->type() == bson::Type::kInt32;
      total = add_numbers(total, *v).value;
    } else {
      fail(code::kTypeMismatch, "$add only supports numeric or date types, not " + type_of(v));
    }
  }
  if (!has_date) return narrowed(std::move(total), all_int32);
  if (total.type() == bson::Type::kInt32 || total.type() == bson::Type::kInt64) {
    return Value::date(*total.number_as_exact_int64());
  }
  // The upper bound is exclusive: 2^63 - 1 rounds up to 2^63 as a double. NaN fails both.
  const double sum = total.number_as_double();
  constexpr double kLongMin = static_cast<double>(std::numeric_limits<int64_t>::min());
  constexpr double kLongMax = static_cast<double>(std::numeric_limits<int64_t>::max());
  if (!(sum >= kLongMin && sum < kLongMax)) fail(code::kOverflow, "date overflow in $add");
  return Value::date(has_decimal ? static_cast<int64_t>(std::nearbyint(sum)) : std::llround(sum));
}

std::string streamed_number(const Value& v);

// mongod's Value::coerceToLong: an int as it is; a double truncated toward zero, refused outside
// the long range (NaN included) with 31109; a decimal rounded half to even, and one outside the
// range (NaN, infinity) converted to -2^63 without an error (mongod's range check never sees a
// decimal's value; Decimal128::toLong gives -2^63 for what it cannot convert).
int64_t coerced_long(const Value& number) {
  if (number.type() == bson::Type::kInt32 || number.type() == bson::Type::kInt64) {
    return *number.number_as_exact_int64();
  }
  const double d = number.number_as_double();
  constexpr double kLongMin = static_cast<double>(std::numeric_limits<int64_t>::min());
  constexpr double kLongMax = static_cast<double>(std::numeric_limits<int64_t>::max());
  const bool in_range = d >= kLongMin && d < kLongMax;
  if (number.type() == bson::Type::kDecimal128) {
    // Doubles this close to the bounds are whole numbers: rounding cannot pass them.
    return in_range ? static_cast<int64_t>(std::nearbyint(d)) : std::numeric_limits<int64_t>::min();
  }
  if (!in_range) {
    fail(31109, "Can't coerce out of range value " + streamed_number(number) + " to long");
  }
  return static_cast<int64_t>(d);
}

// A date minus a number of milliseconds, with mongod's Duration checks (DurationOverflow, 159).
int64_t date_minus_ms(int64_t date_ms, int64_t ms) {
  if (ms == std::numeric_limits<int64_t>::min()) {
    fail(code::kDurationOverflow, "Cannot negate the minimum duration");
  }
  int64_t out = 0;
  if (__builtin_add_overflow(date_ms, -ms, &out)) {
    fail(code::kDurationOverflow, "Overflow while adding " + std::to_string(-ms) + "ms to " +
                                      std::to_string(date_ms) + "ms");
  }
  return out;
}

// mongod 7.0's ExpressionSubtract::apply: numbers first, then a nullish side, then dates.
Maybe op_subtract(const Value& args, const Variables& vars, int depth) {
  auto ops = eval_operands(args, vars, depth);
  const Maybe& a = ops[0];
  const Maybe& b = ops[1];
  if (!is_nullish(a) && !is_nullish(b) && a->is_number() && b->is_number()) {
    return subtract_numbers(*a, *b).value;
  }
  if (is_nullish(a) || is_nullish(b)) return Value::null();
  if (a->type() == bson::Type::kDateTime) {
    if (b->type() == bson::Type::kDateTime) {
      // Wraps past the long range, as mongod's plain subtraction does in practice (no UB here).
      return Value::int64(static_cast<int64_t>(static_cast<uint64_t>(a->as_date_ms()) -
                                               static_cast<uint64_t>(b->as_date_ms())));
    }
    if (b->is_number()) return Value::date(date_minus_ms(a->as_date_ms(), coerced_long(*b)));
    fail(code::kTypeMismatch, "can't $subtract " + type_of(b) + " from Date");
  }
  fail(code::kTypeMismatch, "can't $subtract " + type_of(b) + " from " + type_of(a));
}

Maybe op_multiply(const Value& args, const Variables& vars, int depth) {
  Value product = Value::int32(1);
  bool all_int32 = true;
  for (const Value* operand : Operands(args)) {
    Maybe v = eval(*operand, vars, depth);
    if (is_nullish(v)) return Value::null();
    if (!v->is_number()) {
      fail(code::kTypeMismatch, "$multiply only supports numeric types, not " + type_of(v));
    }
    all_int32 = all_int32 && v->type() == bson::Type::kInt32;
    product = multiply_numbers(product, *v).value;
  }
  return narrowed(std::move(product), all_int32);
}

// Both operands are evaluated, then: numbers divide (as doubles: mongosim does no decimal
// arithmetic), a nullish side gives null, anything else is TypeMismatch.
Maybe op_divide(const Value& args, const Variables& vars, int depth) {
  auto ops = eval_operands(args, vars, depth);
  const bool numbers =
      !is_nullish(ops[0]) && !is_nullish(ops[1]) && ops[0]->is_number() && ops[1]->is_number();
  if (!numbers) {
    if (is_nullish(ops[0]) || is_nullish(ops[1])) return Value::null();
    fail(code::kTypeMismatch,
         "$divide only supports numeric types, not " + type_of(ops[0]) + " and " + type_of(ops[1]));
  }
  double d = ops[1]->number_as_double();
  if (d == 0) fail(code::kBadValue, "can't $divide by zero");
  return Value::dbl(ops[0]->number_as_double() / d);
}

Maybe op_extreme(bool want_max, const Value& args, const Variables& vars, int depth) {
  std::vector<Maybe> values;
  auto ops = operand_list(args);
  if (ops.size() == 1) {
    // A single operand that is an array means "the extreme of its elements".
    Maybe only = eval(*ops[0], vars, depth);
    if (only && only->is_array()) {
      for (const Value& v : only->as_array()) values.emplace_back(v);
    } else {
      values.push_back(std::move(only));
    }
  } else {
    values = eval_operands(args, vars, depth);
  }
  Maybe best;
  for (Maybe& v : values) {
    if (is_nullish(v)) continue;
    if (!best || (want_max ? compare_values(*v, *best) > 0 : compare_values(*v, *best) < 0)) {
      best = std::move(v);
    }
  }
  return best ? best : Maybe(Value::null());
}

Maybe op_sum(const Value& args, const Variables& vars, int depth) {
  Value total = Value::int32(0);
  auto add = [&](const Value& v) {
    if (v.is_number()) total = add_numbers(total, v).value;
  };
  auto ops = operand_list(args);
  if (ops.size() == 1) {
    Maybe only = eval(*ops[0], vars, depth);
    if (only && only->is_array()) {
      for (const Value& v : only->as_array()) add(v);
    } else if (only) {
      add(*only);
    }
    return total;
  }
  for (Maybe& v : eval_operands(args, vars, depth)) {
    if (v) add(*v);
  }
  return total;
}

[[noreturn]] void conversion_failure(const Maybe& v, std::string_view target) {
  fail(code::kConversionFailure, "Unsupported conversion from " + type_of(v) + " to " +
                                     std::string(target) + " in $convert with no onError value");
}

int64_t object_id_seconds(const Value& v) {
  const uint8_t* b = v.as_object_id().bytes;
  return (int64_t{b[0]} << 24) | (int64_t{b[1]} << 16) | (int64_t{b[2]} << 8) | b[3];
}

// $toDate (docs/mongodb-behaviour.md, Expressions): int32 is deliberately refused, as mongod does.
Maybe to_date(const Maybe& v) {
  if (is_nullish(v)) return Value::null();
  switch (v->type()) {
    case bson::Type::kDateTime:
      return v;
    case bson::Type::kInt64:
      return Value::date(v->as_int64());
    case bson::Type::kDouble:
    case bson::Type::kDecimal128: {
      double d = v->number_as_double();
      if (!std::isfinite(d) || std::fabs(d) >= 9.2e18) {
        fail(code::kConversionFailure,
             "Conversion would overflow target type in $convert with no onError value: " +
                 render(*v));
      }
      return Value::date(static_cast<int64_t>(std::trunc(d)));
    }
    case bson::Type::kString: {
      auto ms = parse_iso_date_ms(v->as_string());
      if (!ms) {
        fail(code::kConversionFailure, "Error parsing date string '" + v->as_string() +
                                           "'; in $convert with no onError value");
      }
      return Value::date(*ms);
    }
    case bson::Type::kObjectId:
      return Value::date(object_id_seconds(*v) * 1000);
    case bson::Type::kTimestamp:
      return Value::date(int64_t{v->as_timestamp().seconds} * 1000);
    default:
      conversion_failure(v, "date");
  }
}

Maybe to_long(const Maybe& v) {
  if (is_nullish(v)) return Value::null();
  switch (v->type()) {
    case bson::Type::kInt32:
      return Value::int64(v->as_int32());
    case bson::Type::kInt64:
      return v;
    case bson::Type::kBool:
      return Value::int64(v->as_bool() ? 1 : 0);
    case bson::Type::kDateTime:
      return Value::int64(v->as_date_ms());
    case bson::Type::kDouble:
    case bson::Type::kDecimal128: {
      double d = v->number_as_double();
      if (!std::isfinite(d) || d >= 9223372036854775808.0 || d < -9223372036854775808.0) {
        fail(code::kConversionFailure,
             "Conversion would overflow target type in $convert with no onError value: " +
                 render(*v));
      }
      return Value::int64(static_cast<int64_t>(std::trunc(d)));
    }
    case bson::Type::kString: {
      const std::string& s = v->as_string();
      size_t i = (!s.empty() && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
      bool ok = i < s.size() && s.size() <= 20;
      for (size_t j = i; ok && j < s.size(); ++j) ok = s[j] >= '0' && s[j] <= '9';
      if (!ok) {
        fail(code::kConversionFailure, "Failed to parse number '" + s +
                                           "' in $convert with no onError value: Did not consume "
                                           "whole string.");
      }
      try {
        return Value::int64(std::stoll(s));
      } catch (const std::out_of_range&) {
        fail(code::kConversionFailure,
             "Failed to parse number '" + s + "' in $convert with no onError value: Overflow");
      }
    }
    default:
      conversion_failure(v, "long");
  }
}

Maybe to_int(const Maybe& v) {
  Maybe l = to_long(v);
  if (is_nullish(l)) return l;
  int64_t x = l->as_int64();
  if (x < INT32_MIN || x > INT32_MAX) {
    fail(code::kConversionFailure,
         "Conversion would overflow target type in $convert with no onError value: " + render(*v));
  }
  return Value::int32(static_cast<int32_t>(x));
}

Maybe to_double(const Maybe& v) {
  if (is_nullish(v)) return Value::null();
  if (v->is_number()) return Value::dbl(v->number_as_double());
  if (v->type() == bson::Type::kBool) return Value::dbl(v->as_bool() ? 1 : 0);
  if (v->type() == bson::Type::kDateTime) return Value::dbl(static_cast<double>(v->as_date_ms()));
  conversion_failure(v, "double");
}

Maybe op_cond(const Value& args, const Variables& vars, int depth) {
  const Value *if_e = nullptr, *then_e = nullptr, *else_e = nullptr;
  if (args.is_document()) {
    const Document& d = args.as_document();
    if_e = d.get("if");
    then_e = d.get("then");
    else_e = d.get("else");
  } else {
    const Array& a = args.as_array();
    if_e = &a[0];
    then_e = &a[1];
    else_e = &a[2];
  }
  return eval(truthy_at(*if_e, vars, depth) ? *then_e : *else_e, vars, depth);
}

Maybe op_if_null(const Value& args, const Variables& vars, int depth) {
  auto ops = operand_list(args);
  for (size_t i = 0; i + 1 < ops.size(); ++i) {
    Maybe held;
    const Value* v = eval_ref(*ops[i], vars, depth, held);
    if (!is_nullish(v)) return *v;
  }
  return eval(*ops.back(), vars, depth);
}

Maybe op_logic(std::string_view name, const Value& args, const Variables& vars, int depth) {
  auto ops = operand_list(args);
  if (name == "$not") return from_bool(!truthy_at(*ops[0], vars, depth));
  bool is_and = name == "$and";
  for (const Value* op : ops) {
    bool t = truthy_at(*op, vars, depth);
    if (is_and && !t) return from_bool(false);
    if (!is_and && t) return from_bool(true);
  }
  return from_bool(is_and);
}

// An expression can double a value per step (a $reduce concatenating its accumulator to itself).
// A string of 16 MiB or more is refused as mongod refuses one (16493); an array has no limit in
// mongod, and mongosim refuses one past kArrayElementsMax (146) before building it, so that
// doubling stops at about 270 MB instead of exhausting memory.
constexpr size_t kStringBytesMax = 16 * 1024 * 1024;  // exclusive
constexpr size_t kArrayElementsMax = size_t{1} << 22;

void refuse_string_of(size_t bytes) {
  if (bytes < kStringBytesMax) return;
  fail(16493, "Tried to create string longer than 16MB");
}

void refuse_array_of(size_t elements) {
  if (elements <= kArrayElementsMax) return;
  fail(code::kExceededMemoryLimit, "$concatArrays would build " + std::to_string(elements) +
                                       " elements; mongosim builds arrays of at most " +
                                       std::to_string(kArrayElementsMax));
}

// Operands are evaluated in order, as mongod does: the first nullish one makes the result null
// and the first non-string one fails (16702), so neither error nor evaluation reaches the
// operands after it. The parts are kept (shared, not copied) until the length is known.
Maybe op_concat(const Value& args, const Variables& vars, int depth) {
  const Operands operands(args);
  std::vector<Maybe> parts;
  parts.reserve(operands.size());
  size_t bytes = 0;
  for (const Value* operand : operands) {
    Maybe v = eval(*operand, vars, depth);
    if (is_nullish(v)) return Value::null();
    if (v->type() != bson::Type::kString) {
      fail(16702, "$concat only supports strings, not " + type_of(v));
    }
    bytes += v->as_string().size();
    parts.push_back(std::move(v));
  }
  refuse_string_of(bytes);
  std::string out;
  out.reserve(bytes);
  for (const Maybe& v : parts) out += v->as_string();
  return Value::string(std::move(out));
}

Maybe op_size(const Value& args, const Variables& vars, int depth) {
  Maybe held;
  const Value* v = eval_ref(*operand_list(args)[0], vars, depth, held);
  if (v == nullptr || !v->is_array()) {
    fail(17124, "The argument to $size must be an array, but was of type: " + type_of(v));
  }
  return Value::int32(static_cast<int32_t>(v->as_array().size()));
}

Maybe op_in(const Value& args, const Variables& vars, int depth) {
  const Operands ops(args);
  Maybe held_needle;
  Maybe held_array;
  const Value* needle = eval_ref(*ops[0], vars, depth, held_needle);
  const Value* array = eval_ref(*ops[1], vars, depth, held_array);
  if (array == nullptr || !array->is_array()) {
    fail(40081, "$in requires an array as a second argument, found: " + type_of(array));
  }
  for (const Value& v : array->as_array()) {
    if (compare_refs(needle, &v) == 0) return from_bool(true);
  }
  return from_bool(false);
}

std::optional<int32_t> integral_32(const Value* v);

Maybe op_array_elem_at(const Value& args, const Variables& vars, int depth) {
  const Operands operands(args);
  Maybe held_array;
  Maybe held_index;
  const Value* array = eval_ref(*operands[0], vars, depth, held_array);
  const Value* at = eval_ref(*operands[1], vars, depth, held_index);
  if (is_nullish(array) || is_nullish(at)) return Value::null();
  if (!array->is_array()) {
    fail(28689, "$arrayElemAt's first argument must be an array, but is " + type_of(array));
  }
  if (!at->is_number()) {
    fail(28690, "$arrayElemAt's second argument must be a numeric value, but is " + type_of(at));
  }
  const std::optional<int32_t> index = integral_32(at);
  if (!index) {
    fail(28691, "$arrayElemAt's second argument must be representable as a 32-bit integer: " +
                    streamed_number(Value::dbl(at->number_as_double())));
  }
  const Array& arr = array->as_array();
  int64_t i = *index < 0 ? static_cast<int64_t>(arr.size()) + *index : *index;
  if (i < 0 || i >= static_cast<int64_t>(arr.size())) return std::nullopt;
  return arr[static_cast<size_t>(i)];
}

void merge_into(Document& out, const Value* v) {
  if (is_nullish(v)) return;
  if (!v->is_document()) {
    fail(40400, "$mergeObjects requires object inputs, but input " + render(*v) + " is of type " +
                    type_of(v));
  }
  for (const auto& [k, x] : v->as_document()) out.set(k, x);
}

// In order: a bad input ends it. One operand that is an array merges its elements (mongod's
// expression form of an accumulator).
Maybe op_merge_objects(const Value& args, const Variables& vars, int depth) {
  Document out;
  const Operands operands(args);
  for (const Value* operand : operands) {
    Maybe v = eval(*operand, vars, depth);
    if (operands.size() == 1 && v && v->is_array()) {
      for (const Value& element : v->as_array()) merge_into(out, &element);
    } else {
      merge_into(out, v ? &*v : nullptr);
    }
  }
  return Value::document(std::move(out));
}

Maybe op_let(const Value& args, const Variables& vars, int depth) {
  const Document& d = args.as_document();
  Variables inner = vars;
  for (const auto& [name, e] : d.get("vars")->as_document()) {
    Maybe v = eval(e, vars, depth);
    inner.user.emplace_back(name, std::move(v));
  }
  return eval(*d.get("in"), inner, depth);
}

// The element variable of $filter/$map ("as", default "this"), read as $$<name>.
std::string element_variable(const Document& d) {
  const Value* as = d.get("as");
  return as != nullptr && as->is_string() ? as->as_string() : "this";
}

// Evaluates body once per element of an array "input", with the element bound to $$<as>.
// Returns nullopt for a nullish input (the operator's result is then null).
template <typename PerElement>
std::optional<Array> for_each_element(std::string_view op, int32_t not_array_code,
                                      const Document& d, const Variables& vars, int depth,
                                      PerElement per_element) {
  Maybe input = eval(*d.get("input"), vars, depth);
  if (is_nullish(input)) return std::nullopt;
  if (!input->is_array()) {
    fail(not_array_code,
         "input to " + std::string(op) + " must be an array not " + type_of(input));
  }
  Variables inner = vars;
  inner.user.emplace_back(element_variable(d), Value::null());
  Array out;
  out.reserve(input->as_array().size());  // $map's size, $filter's bound
  for (const Value& element : input->as_array()) {
    inner.user.back().second = element;
    per_element(element, inner, out);
  }
  return out;
}

Maybe op_filter(const Value& args, const Variables& vars, int depth) {
  const Document& d = args.as_document();
  const Value& cond = *d.get("cond");
  auto out = for_each_element("$filter", 28651, d, vars, depth,
                              [&](const Value& element, const Variables& inner, Array& acc) {
                                if (truthy_at(cond, inner, depth)) acc.push_back(element);
                              });
  if (!out) return Value::null();
  return Value::array(std::move(*out));
}

Maybe op_map(const Value& args, const Variables& vars, int depth) {
  const Document& d = args.as_document();
  const Value& in = *d.get("in");
  auto out = for_each_element("$map", 16883, d, vars, depth,
                              [&](const Value&, const Variables& inner, Array& acc) {
                                Maybe v = eval(in, inner, depth);
                                acc.push_back(v ? std::move(*v) : Value::null());
                              });
  if (!out) return Value::null();
  return Value::array(std::move(*out));
}

// In order, as $concat: the first nullish or non-array operand ends the evaluation.
Maybe op_concat_arrays(const Value& args, const Variables& vars, int depth) {
  const Operands operands(args);
  std::vector<Maybe> parts;
  parts.reserve(operands.size());
  size_t elements = 0;
  for (const Value* operand : operands) {
    Maybe v = eval(*operand, vars, depth);
    if (is_nullish(v)) return Value::null();
    if (!v->is_array()) {
      fail(28664, "$concatArrays only supports arrays, not " + type_of(v));
    }
    elements += v->as_array().size();
    parts.push_back(std::move(v));
  }
  refuse_array_of(elements);
  Array out;
  out.reserve(elements);
  for (const Maybe& v : parts) out.insert(out.end(), v->as_array().begin(), v->as_array().end());
  return Value::array(std::move(out));
}

// ---- more array operators, $switch and $reduce (docs/mongodb-behaviour.md, Expressions) ----

// mongod's Value::integral(): a whole number that fits an int32 (int, long, double or decimal).
std::optional<int32_t> integral_32(const Value* v) {
  if (v == nullptr || !v->is_number()) return std::nullopt;
  std::optional<int64_t> n = v->number_as_exact_int64();
  if (!n || *n < std::numeric_limits<int32_t>::min() || *n > std::numeric_limits<int32_t>::max()) {
    return std::nullopt;
  }
  return static_cast<int32_t>(*n);
}

std::string rendered(const Value* v) {
  return v != nullptr ? render(*v) : "missing";
}

// A number as mongod streams one into a message: a double with 6 significant digits.
std::string streamed_number(const Value& v) {
  if (v.type() != bson::Type::kDouble) return render(v);
  std::ostringstream out;
  out << v.as_double();
  return out.str();
}

// The element range [start, end) of $slice's three-argument form ([array, position, n]).
std::pair<int64_t, int64_t> slice_from(int64_t size, int32_t position, const Value* count) {
  if (!count->is_number()) {
    fail(28727, "Third argument to $slice must be numeric, but is of type: " + type_of(count));
  }
  std::optional<int32_t> n = integral_32(count);
  if (!n) {
    fail(28728, "Third argument to $slice can't be represented as a 32-bit integer: " +
                    streamed_number(*count));
  }
  if (*n <= 0) fail(28729, "Third argument to $slice must be positive: " + std::to_string(*n));
  const int64_t start =
      position < 0 ? std::max<int64_t>(0, size + position) : std::min<int64_t>(size, position);
  return {start, std::min<int64_t>(start + *n, size)};
}

// [array, n]: the first n (n >= 0) or the last -n elements; [array, position, n]: n elements
// from position (negative: from the end). Null when the array or the second argument is nullish.
Maybe op_slice(const Value& args, const Variables& vars, int depth) {
  const Operands ops(args);
  Maybe held_array;
  Maybe held_second;
  const Value* array = eval_ref(*ops[0], vars, depth, held_array);
  const Value* second = eval_ref(*ops[1], vars, depth, held_second);
  if (is_nullish(array) || is_nullish(second)) return Value::null();
  if (!array->is_array()) {
    fail(28724, "First argument to $slice must be an array, but is of type: " + type_of(array));
  }
  if (!second->is_number()) {
    fail(28725,
         "Second argument to $slice must be a numeric value, but is of type: " + type_of(second));
  }
  std::optional<int32_t> first = integral_32(second);
  if (!first) {
    fail(28726, "Second argument to $slice can't be represented as a 32-bit integer: " +
                    streamed_number(*second));
  }
  const Array& arr = array->as_array();
  const auto size = static_cast<int64_t>(arr.size());
  std::pair<int64_t, int64_t> range{0, std::min<int64_t>(*first, size)};
  if (ops.size() == 3) {
    Maybe held_count;
    const Value* count = eval_ref(*ops[2], vars, depth, held_count);
    if (is_nullish(count)) return Value::null();
    range = slice_from(size, *first, count);
  } else if (*first < 0) {
    range = {std::max<int64_t>(0, size + *first), size};
  }
  return Value::array(Array(arr.begin() + range.first, arr.begin() + range.second));
}

// $first / $last of an array: null for a nullish operand, missing for an empty array.
Maybe op_first_last(std::string_view name, const Value& args, const Variables& vars, int depth) {
  Maybe held;
  const Value* array = eval_ref(*Operands(args)[0], vars, depth, held);
  if (is_nullish(array)) return Value::null();
  if (!array->is_array()) {
    fail(28689, std::string(name) + "'s argument must be an array, but is " + type_of(array));
  }
  const Array& arr = array->as_array();
  if (arr.empty()) return std::nullopt;
  return name == "$first" ? arr.front() : arr.back();
}

Maybe op_reverse_array(const Value& args, const Variables& vars, int depth) {
  Maybe held;
  const Value* array = eval_ref(*Operands(args)[0], vars, depth, held);
  if (is_nullish(array)) return Value::null();
  if (!array->is_array()) {
    fail(34435,
         "The argument to $reverseArray must be an array, but was of type: " + type_of(array));
  }
  const Array& arr = array->as_array();
  return Value::array(Array(arr.rbegin(), arr.rend()));
}

// [array, value, start?, end?]: the int32 index of the first element equal to value in
// [start, end), else -1; null for a nullish array (nothing else is evaluated then).
Maybe op_index_of_array(const Value& args, const Variables& vars, int depth) {
  const Operands ops(args);
  Maybe held_array;
  const Value* array = eval_ref(*ops[0], vars, depth, held_array);
  if (is_nullish(array)) return Value::null();
  if (!array->is_array()) {
    fail(40090, "$indexOfArray requires an array as a first argument, found: " + type_of(array));
  }
  const Array& arr = array->as_array();
  const auto bound = [&](size_t i, const std::string& which) -> int64_t {
    Maybe held;
    const Value* v = eval_ref(*ops[i], vars, depth, held);
    std::optional<int32_t> n = integral_32(v);
    if (!n) {
      // mongod's text runs "$indexOfArray" and "requires" together.
      fail(40096, "$indexOfArrayrequires an integral " + which + " index, found a value of type: " +
                      type_of(v) + ", with value: " + rendered(v));
    }
    if (*n < 0) {
      fail(40097, "$indexOfArray requires a nonnegative " + which +
                      " index, found: " + std::to_string(*n));
    }
    return *n;
  };
  const auto size = static_cast<int64_t>(arr.size());
  const int64_t start = ops.size() > 2 ? bound(2, "starting") : 0;
  const int64_t end = ops.size() > 3 ? std::min(bound(3, "ending"), size) : size;
  Maybe held_needle;
  const Value* needle = eval_ref(*ops[1], vars, depth, held_needle);
  for (int64_t i = start; i < end; ++i) {
    if (compare_refs(needle, &arr[static_cast<size_t>(i)]) == 0) {
      return Value::int32(static_cast<int32_t>(i));
    }
  }
  return Value::int32(-1);
}

// $anyElementTrue / $allElementsTrue of one array; a nullish operand is an error too.
Maybe op_any_all(std::string_view name, const Value& args, const Variables& vars, int depth) {
  Maybe held;
  const Value* array = eval_ref(*Operands(args)[0], vars, depth, held);
  const bool any = name == "$anyElementTrue";
  if (array == nullptr || !array->is_array()) {
    fail(any ? 17041 : 17040,
         std::string(name) + "'s argument must be an array, but is " + type_of(array));
  }
  for (const Value& v : array->as_array()) {
    if (v.truthy() == any) return from_bool(any);
  }
  return from_bool(!any);
}

// The first branch whose case is true gives its then; else default (40066 without one).
Maybe op_switch(const Value& args, const Variables& vars, int depth) {
  const Document& d = args.as_document();
  for (const Value& branch : d.get("branches")->as_array()) {
    const Document& b = branch.as_document();
    if (truthy_at(*b.get("case"), vars, depth)) return eval(*b.get("then"), vars, depth);
  }
  const Value* otherwise = d.get("default");
  if (otherwise == nullptr) {
    fail(40066,
         "$switch could not find a matching branch for an input, and no default was specified.");
  }
  return eval(*otherwise, vars, depth);
}

// in, once per element of input, with $$value (the result so far, from initialValue) and $$this;
// null for a nullish input (initialValue is then not evaluated).
Maybe op_reduce(const Value& args, const Variables& vars, int depth) {
  const Document& d = args.as_document();
  Maybe input = eval(*d.get("input"), vars, depth);
  if (is_nullish(input)) return Value::null();
  if (!input->is_array()) {
    fail(40080, "$reduce requires that 'input' be an array, found: " + render(*input));
  }
  Maybe value = eval(*d.get("initialValue"), vars, depth);
  const Value& in = *d.get("in");
  Variables inner = vars;
  inner.user.emplace_back("value", std::nullopt);
  inner.user.emplace_back("this", std::nullopt);
  for (const Value& element : input->as_array()) {
    inner.user[inner.user.size() - 2].second = std::move(value);
    inner.user.back().second = element;
    value = eval(in, inner, depth);
    // Each step may wrap the last one ({a: "$$value"}): a value deeper than any BSON would
    // overflow the stack of every recursive reader after it.
    if (value && bson::deeper_than(*value, bson::kMaxNestingDepth)) {
      fail(code::kOverflow, "$reduce accumulated value exceeded max allowable BSON depth");
    }
  }
  return value;
}

int64_t unit_ms(std::string_view unit) {
  if (unit == "millisecond") return 1;
  if (unit == "second") return 1000;
  if (unit == "minute") return 60000;
  if (unit == "hour") return 3600000;
  if (unit == "day") return 86400000;
  if (unit == "week") return 7 * int64_t{86400000};
  return 0;  // calendar units
}

int64_t months_in(std::string_view unit) {
  if (unit == "month") return 1;
  if (unit == "quarter") return 3;
  if (unit == "year") return 12;
  return 0;
}

Maybe op_date_add(std::string_view name, const Value& args, const Variables& vars, int depth) {
  const Document& d = args.as_document();
  Maybe start = eval(*d.get("startDate"), vars, depth);
  Maybe unit = eval(*d.get("unit"), vars, depth);
  Maybe amount = eval(*d.get("amount"), vars, depth);
  if (is_nullish(start) || is_nullish(unit) || is_nullish(amount)) return Value::null();
  std::string op(name);
  if (start->type() != bson::Type::kDateTime) {
    fail(5166403, op + " requires startDate to be convertible to a date");
  }
  if (unit->type() != bson::Type::kString ||
      (unit_ms(unit->as_string()) == 0 && months_in(unit->as_string()) == 0)) {
    fail(code::kFailedToParse,
         op + " parameter 'unit' value parsing failed :: caused by :: " +
             "unknown time unit value: " + (unit->is_string() ? unit->as_string() : render(*unit)));
  }
  auto n = amount->is_number() ? amount->number_as_exact_int64() : std::nullopt;
  if (!n) fail(5166405, op + " expects integer amount of time units");
  // Amounts beyond ±1e12 units overflow every date mongod can represent.
  constexpr int64_t kAmountMax = 1000000000000;
  if (*n > kAmountMax || *n < -kAmountMax) fail(5166406, op + " overflowed");
  int64_t count = name == "$dateSubtract" ? -*n : *n;
  if (int64_t per = unit_ms(unit->as_string())) {
    int64_t delta = 0, result = 0;
    if (__builtin_mul_overflow(count, per, &delta) ||
        __builtin_add_overflow(start->as_date_ms(), delta, &result)) {
      fail(5166406, op + " overflowed");
    }
    return Value::date(result);
  }
  CivilTime t = civil_from_ms(start->as_date_ms());
  int64_t month_index = t.year * 12 + (t.month - 1) + count * months_in(unit->as_string());
  t.year = month_index >= 0 ? month_index / 12 : (month_index - 11) / 12;
  t.month = static_cast<int>(month_index - t.year * 12) + 1;
  // Beyond about ±290 million years the date's milliseconds leave 64 bits (a date holds ±292
  // million): an overflow, never a wrapped date.
  constexpr int64_t kYearsMax = 290'000'000;
  if (t.year > kYearsMax || t.year < -kYearsMax) fail(5166406, op + " overflowed");
  return Value::date(ms_from_civil(t));
}

Maybe op_type(const Value& args, const Variables& vars, int depth) {
  Maybe v = eval(*operand_list(args)[0], vars, depth);
  return Value::string(type_of(v));
}

Maybe op_unary(std::string_view name, const Value& args, const Variables& vars, int depth) {
  Maybe v = eval(*operand_list(args)[0], vars, depth);
  if (name == "$toDate") return to_date(v);
  if (name == "$toLong") return to_long(v);
  if (name == "$toInt") return to_int(v);
  if (name == "$toDouble") return to_double(v);
  if (name == "$toBool") return is_nullish(v) ? Value::null() : Value::boolean(v->truthy());
  if (name == "$isArray") return from_bool(v && v->is_array());
  assert(name == "$abs");
  if (is_nullish(v)) return Value::null();
  if (!v->is_number()) fail(28765, "$abs only supports numeric types, not " + type_of(v));
  if (v->type() == bson::Type::kInt64 && v->as_int64() == INT64_MIN)
    fail(28680, "can't take $abs of long long min");
  if (v->number_as_double() >= 0) return v;
  return subtract_numbers(Value::int32(0), *v).value;
}

// ---- the operator table ----

using OpFn = Maybe (*)(std::string_view, const Value&, const Variables&, int);

struct OpSpec {
  std::string_view name;
  int args_min;  // for array-style operands; -1: the operand has its own shape
  int args_max;  // -1: unbounded
  OpFn fn;
};

template <Maybe (*F)(const Value&, const Variables&, int)>
Maybe plain(std::string_view, const Value& a, const Variables& v, int d) {
  return F(a, v, d);
}

const OpSpec kOps[] = {
    {"$eq", 2, 2, op_compare},
    {"$ne", 2, 2, op_compare},
    {"$lt", 2, 2, op_compare},
    {"$lte", 2, 2, op_compare},
    {"$gt", 2, 2, op_compare},
    {"$gte", 2, 2, op_compare},
    {"$cmp", 2, 2, op_compare},
    {"$and", 0, -1, op_logic},
    {"$or", 0, -1, op_logic},
    {"$not", 1, 1, op_logic},
    {"$add", 0, -1, plain<op_add>},
    {"$subtract", 2, 2, plain<op_subtract>},
    {"$multiply", 0, -1, plain<op_multiply>},
    {"$divide", 2, 2, plain<op_divide>},
    {"$max", 1, -1,
     [](std::string_view, const Value& a, const Variables& v, int d) {
       return op_extreme(true, a, v, d);
     }},
    {"$min", 1, -1,
     [](std::string_view, const Value& a, const Variables& v, int d) {
       return op_extreme(false, a, v, d);
     }},
    {"$sum", 1, -1, plain<op_sum>},
    {"$cond", -1, -1, plain<op_cond>},
    {"$ifNull", -1, -1, plain<op_if_null>},
    {"$literal", -1, -1,
     [](std::string_view, const Value& a, const Variables&, int) { return Maybe(a); }},
    {"$toDate", 1, 1, op_unary},
    {"$toLong", 1, 1, op_unary},
    {"$toInt", 1, 1, op_unary},
    {"$toDouble", 1, 1, op_unary},
    {"$toBool", 1, 1, op_unary},
    {"$isArray", 1, 1, op_unary},
    {"$abs", 1, 1, op_unary},
    {"$dateAdd", -1, -1, op_date_add},
    {"$dateSubtract", -1, -1, op_date_add},
    {"$type", 1, 1, plain<op_type>},
    {"$concat", 0, -1, plain<op_concat>},
    {"$size", 1, 1, plain<op_size>},
    {"$in", 2, 2, plain<op_in>},
    {"$arrayElemAt", 2, 2, plain<op_array_elem_at>},
    {"$mergeObjects", 0, -1, plain<op_merge_objects>},
    {"$let", -1, -1, plain<op_let>},
    {"$filter", -1, -1, plain<op_filter>},
    {"$map", -1, -1, plain<op_map>},
    {"$concatArrays", 0, -1, plain<op_concat_arrays>},
    {"$slice", 2, 3, plain<op_slice>},
    {"$first", 1, 1, op_first_last},
    {"$last", 1, 1, op_first_last},
    {"$reverseArray", 1, 1, plain<op_reverse_array>},
    {"$indexOfArray", 2, 4, plain<op_index_of_array>},
    {"$anyElementTrue", 1, 1, op_any_all},
    {"$allElementsTrue", 1, 1, op_any_all},
    {"$switch", -1, -1, plain<op_switch>},
    {"$reduce", -1, -1, plain<op_reduce>},
};

const OpSpec* find_op(std::string_view name) {
  for (const OpSpec& op : kOps) {
    if (op.name == name) return &op;
  }
  return nullptr;
}

bool is_operator_object(const Document& d) {
  return !d.empty() && d.first_key()[0] == '$';
}

Maybe eval_object(const Document& d, const Variables& vars, int depth) {
  Document out;
  out.reserve(d.size());
  for (const auto& [key, e] : d) {
    Maybe v = eval(e, vars, depth);
    if (v) out.append(key, std::move(*v));
  }
  return Value::document(std::move(out));
}

// The command's maxTimeMS, checked every kDeadlineCheckSteps evaluations (a steady-clock read
// per operator would cost more than most operators).
void check_deadline(const EvalContext& ctx) {
  if (!ctx.deadline || ++ctx.steps % kDeadlineCheckSteps != 0) return;
  if (std::chrono::steady_clock::now() >= *ctx.deadline) {
    fail(code::kMaxTimeMSExpired, "operation exceeded time limit");
  }
}

Maybe eval(const Value& e, const Variables& vars, int depth) {
  if (depth > kExpressionDepthMax) fail(code::kBadValue, "expression nested too deeply");
  check_deadline(*vars.ctx);
  if (e.is_string() && !e.as_string().empty() && e.as_string()[0] == '$') {
    return eval_path_string(e.as_string(), vars);
  }
  if (e.is_array()) {
    Array out;
    out.reserve(e.as_array().size());
    for (const Value& element : e.as_array()) {
      Maybe v = eval(element, vars, depth + 1);
      out.push_back(v ? std::move(*v) : Value::null());
    }
    return Value::array(std::move(out));
  }
  if (!e.is_document()) return e;
  const Document& d = e.as_document();
  if (!is_operator_object(d)) return eval_object(d, vars, depth + 1);
  const auto& [name, args] = d.at(0);
  const OpSpec* op = find_op(name);
  assert(op != nullptr && "validate_expression() must run first");
  return op->fn(name, args, vars, depth + 1);
}

// ---- parse-time validation ----

void validate_at(const Value& e, int depth);

void validate_arity(const OpSpec& op, const Value& args) {
  if (op.args_min < 0) return;
  auto n = static_cast<int>(operand_list(args).size());
  if (n >= op.args_min && (op.args_max < 0 || n <= op.args_max)) return;
  std::string name(op.name);
  if (op.args_min == op.args_max) {
    fail(16020, "Expression " + name + " takes exactly " + std::to_string(op.args_min) +
                    " arguments. " + std::to_string(n) + " were passed in.");
  }
  if (op.args_max < 0) {
    fail(16021, "Expression " + name + " takes at least " + std::to_string(op.args_min) +
                    " arguments. " + std::to_string(n) + " were passed in.");
  }
  fail(28667, "Expression " + name + " takes at least " + std::to_string(op.args_min) +
                  " arguments, and at most " + std::to_string(op.args_max) + ", but " +
                  std::to_string(n) + " were passed in.");
}

void require_fields(const Document& d, std::string_view op, std::initializer_list<const char*> req,
                    std::initializer_list<const char*> optional, int32_t missing_code,
                    int32_t unknown_code) {
  for (const auto& [key, v] : d) {
    bool known = false;
    for (const char* r : req) known = known || key == r;
    for (const char* o : optional) known = known || key == o;
    if (!known) {
      fail(unknown_code, "Unrecognized parameter to " + std::string(op) + ": " + key);
    }
  }
  for (const char* r : req) {
    if (!d.has(r))
      fail(missing_code, "Missing '" + std::string(r) + "' parameter to " + std::string(op));
  }
}

void validate_switch(const Value& args, int depth) {
  if (!args.is_document()) {
    fail(40060, "$switch requires an object as an argument, found: " + type_of(&args));
  }
  bool has_branch = false;
  for (const auto& [key, v] : args.as_document()) {
    if (key == "default") {
      validate_at(v, depth + 1);
      continue;
    }
    if (key != "branches") fail(40067, "$switch found an unknown argument: " + key);
    if (!v.is_array()) {
      fail(40061, "$switch expected an array for 'branches', found: " + type_of(&v));
    }
    for (const Value& branch : v.as_array()) {
      if (!branch.is_document()) {
        fail(40062, "$switch expected each branch to be an object, found: " + type_of(&branch));
      }
      for (const auto& [part, e] : branch.as_document()) {
        if (part != "case" && part != "then") {
          fail(40063, "$switch found an unknown argument to a branch: " + part);
        }
        validate_at(e, depth + 1);
      }
      if (!branch.as_document().has("case")) {
        fail(40064, "$switch requires each branch have a 'case' expression");
      }
      if (!branch.as_document().has("then")) {
        fail(40065, "$switch requires each branch have a 'then' expression.");
      }
    }
    has_branch = !v.as_array().empty();
  }
  if (!has_branch) fail(40068, "$switch requires at least one branch.");
}

void validate_reduce(const Value& args, int depth) {
  if (!args.is_document()) {
    fail(40075, "$reduce requires an object as an argument, found: " + type_of(&args));
  }
  const Document& d = args.as_document();
  for (const auto& [key, e] : d) {
    if (key != "input" && key != "initialValue" && key != "in") {
      fail(40076, "$reduce found an unknown argument: " + key);
    }
    validate_at(e, depth + 1);
  }
  const std::pair<const char*, int32_t> required[] = {
      {"input", 40077}, {"initialValue", 40078}, {"in", 40079}};
  for (const auto& [name, code] : required) {
    if (!d.has(name)) fail(code, "$reduce requires '" + std::string(name) + "' to be specified");
  }
}

void validate_special(const OpSpec& op, const Value& args, int depth) {
  if (op.name == "$literal") return;
  if (op.name == "$switch") return validate_switch(args, depth);
  if (op.name == "$reduce") return validate_reduce(args, depth);
  if (op.name == "$cond") {
    if (args.is_document()) {
      require_fields(args.as_document(), "$cond", {"if", "then", "else"}, {}, 17080, 17083);
    } else if (!args.is_array() || args.as_array().size() != 3) {
      fail(16020, "Expression $cond takes exactly 3 arguments. " +
                      std::to_string(operand_list(args).size()) + " were passed in.");
    }
  } else if (op.name == "$ifNull") {
    size_t n = operand_list(args).size();
    if (n < 2) {
      fail(1257300, "$ifNull needs at least two arguments, had: " + std::to_string(n));
    }
  } else if (op.name == "$dateAdd" || op.name == "$dateSubtract") {
    if (!args.is_document()) {
      fail(5166400, std::string(op.name) + " expects an object as its argument");
    }
    const Document& d = args.as_document();
    for (const auto& [key, v] : d) {
      if (key != "startDate" && key != "unit" && key != "amount" && key != "timezone") {
        fail(5166401, "Unrecognized argument to " + std::string(op.name) + ": " + key +
                          ". Expected arguments are startDate, unit, amount, and optionally "
                          "timezone.");
      }
    }
    if (!d.has("startDate") || !d.has("unit") || !d.has("amount")) {
      fail(5166402, std::string(op.name) + " requires startDate, unit, and amount to be present");
    }
  } else if (op.name == "$filter" || op.name == "$map") {
    bool is_filter = op.name == "$filter";
    std::string name(op.name);
    if (!args.is_document()) {
      fail(is_filter ? 28646 : 16878, name + " only supports an object as its argument");
    }
    const char* body = is_filter ? "cond" : "in";
    require_fields(args.as_document(), name, {"input", body}, {"as"},
                   is_filter ? 28648 : 16880, is_filter ? 28647 : 16879);
    const Value* as = args.as_document().get("as");
    if (as != nullptr && (!as->is_string() || as->as_string().empty())) {
      fail(code::kFailedToParse, name + ": 'as' must be a non-empty variable name");
    }
    validate_at(*args.as_document().get("input"), depth + 1);
    validate_at(*args.as_document().get(body), depth + 1);
    return;
  } else if (op.name == "$let") {
    if (!args.is_document()) fail(16874, "$let only supports an object as its argument");
    const Document& d = args.as_document();
    const Value* v = d.get("vars");
    if (v == nullptr) fail(16876, "Missing 'vars' parameter to $let");
    if (!d.has("in")) fail(16877, "Missing 'in' parameter to $let");
    if (!v->is_document()) fail(10065, "invalid parameter: expected an object (vars)");
    for (const auto& [name, e] : v->as_document()) validate_at(e, depth + 1);
    validate_at(*d.get("in"), depth + 1);
    return;
  }
  if (args.is_document() && !is_operator_object(args.as_document())) {
    for (const auto& [k, e] : args.as_document()) validate_at(e, depth + 1);
    return;
  }
  for (const Value* v : operand_list(args)) validate_at(*v, depth + 1);
}

void validate_at(const Value& e, int depth) {
  if (depth > kExpressionDepthMax) fail(code::kBadValue, "expression nested too deeply");
  if (e.is_string() && e.as_string().size() >= 1 && e.as_string()[0] == '$') {
    const std::string& s = e.as_string();
    if (s == "$" || s == "$$") fail(16872, "'" + s + "' by itself is not a valid FieldPath");
    return;
  }
  if (e.is_array()) {
    for (const Value& element : e.as_array()) validate_at(element, depth + 1);
    return;
  }
  if (!e.is_document()) return;
  const Document& d = e.as_document();
  if (!is_operator_object(d)) {
    for (const auto& [key, v] : d) {
      if (!key.empty() && key[0] == '$') {
        fail(16410,
             "FieldPath field names may not start with '$'. Consider using $getField or "
             "$setField.");
      }
      validate_at(v, depth + 1);
    }
    return;
  }
  if (d.size() != 1) {
    fail(15983,
         "an expression specification must contain exactly one field, the name of the "
         "expression. Found " +
             std::to_string(d.size()) + " fields in " + render(d) + ", while parsing object " +
             render(d));
  }
  const auto& [name, args] = d.at(0);
  const OpSpec* op = find_op(name);
  if (op == nullptr) fail(code::kInvalidPipelineOperator, "Unrecognized expression '" + name + "'");
  validate_arity(*op, args);
  validate_special(*op, args, depth);
}

}  // namespace

void validate_expression(const Value& expression) {
  validate_at(expression, 0);
}

Maybe eval_expression(const Value& expression, const Variables& vars) {
  assert(vars.root != nullptr && vars.ctx != nullptr);
  return eval(expression, vars, 0);
}

int compare_maybe(const Maybe& a, const Maybe& b) {
  // Missing ranks with undefined, just below null (canonical rank 0 < 5).
  static const Value kMissing = Value::undefined();
  return compare_values(a ? *a : kMissing, b ? *b : kMissing);
}

bool is_expression_name(std::string_view name) {
  return find_op(name) != nullptr;
}

std::vector<std::string_view> expression_operator_names() {
  std::vector<std::string_view> names;
  for (const OpSpec& op : kOps) names.push_back(op.name);
  std::sort(names.begin(), names.end());
  return names;
}

Value evaluate(const Value& expression, const Document& root, const EvalContext& ctx) {
  validate_expression(expression);
  Variables vars{&root, &ctx, {}};
  Maybe v = eval_expression(expression, vars);
  return v ? *v : Value::null();
}

}  // namespace mongosim::query
