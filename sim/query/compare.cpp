// BSON comparison order (docs/mongodb-behaviour.md, Comparison order), the one ordering every other
// part of the engine uses.
#include <cassert>
#include <cmath>
#include <cstring>
#include <string>

#include "base/command_error.h"
#include "query/query.h"
#include "query/type_order.h"

namespace mongosim::query {

int canonical_type_rank(bson::Type type) {
  using bson::Type;
  switch (type) {
    case Type::kMinKey:
      return -1;
    case Type::kUndefined:
      return 0;
    case Type::kNull:
      return 5;
    case Type::kDouble:
    case Type::kInt32:
    case Type::kInt64:
    case Type::kDecimal128:
      return 10;
    case Type::kString:
    case Type::kSymbol:
      return 15;
    case Type::kDocument:
      return 20;
    case Type::kArray:
      return 25;
    case Type::kBinary:
      return 30;
    case Type::kObjectId:
      return 35;
    case Type::kBool:
      return 40;
    case Type::kDateTime:
      return 45;
    case Type::kTimestamp:
      return 47;
    case Type::kRegex:
      return 50;
    case Type::kDbPointer:
      return 55;
    case Type::kJavaScript:
      return 60;
    case Type::kJavaScriptWithScope:
      return 65;
    case Type::kMaxKey:
      return 127;
  }
  return 0;
}

namespace {

int sign(int64_t x) {
  return x < 0 ? -1 : (x > 0 ? 1 : 0);
}

// Exact comparison of an int64 with a double (no rounding of the integer through double).
int compare_int_double(int64_t i, double d) {
  if (std::isnan(d)) return 1;  // NaN sorts below every other number
  if (d >= 9223372036854775808.0) return -1;
  if (d < -9223372036854775808.0) return 1;
  double t = std::trunc(d);
  auto ti = static_cast<int64_t>(t);
  if (i != ti) return i < ti ? -1 : 1;
  if (d > t) return -1;
  if (d < t) return 1;
  return 0;
}

int compare_doubles(double a, double b) {
  if (std::isnan(a)) return std::isnan(b) ? 0 : -1;
  if (std::isnan(b)) return 1;
  return a < b ? -1 : (a > b ? 1 : 0);
}

bool is_integral(const Value& v) {
  return v.type() == bson::Type::kInt32 || v.type() == bson::Type::kInt64;
}

int64_t int_of(const Value& v) {
  return v.type() == bson::Type::kInt32 ? v.as_int32() : v.as_int64();
}

int compare_numbers(const Value& a, const Value& b) {
  if (is_integral(a) && is_integral(b)) {
    int64_t x = int_of(a), y = int_of(b);
    return x < y ? -1 : (x > y ? 1 : 0);
  }
  if (is_integral(a)) return compare_int_double(int_of(a), b.number_as_double());
  if (is_integral(b)) return -compare_int_double(int_of(b), a.number_as_double());
  return compare_doubles(a.number_as_double(), b.number_as_double());
}

int compare_bytes(const std::string& a, const std::string& b) {
  size_t n = std::min(a.size(), b.size());
  int c = n == 0 ? 0 : std::memcmp(a.data(), b.data(), n);
  if (c != 0) return c < 0 ? -1 : 1;
  if (a.size() == b.size()) return 0;
  return a.size() < b.size() ? -1 : 1;
}

// Objects compare element by element: canonical type, then field name, then value; a prefix
// sorts first.
int compare_counted(const Value& a, const Value& b, size_t& visits);

int compare_documents(const Document& a, const Document& b, size_t& visits) {
  size_t n = std::min(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    const auto& [ka, va] = a.at(i);
    const auto& [kb, vb] = b.at(i);
    int ta = canonical_type_rank(va.type()), tb = canonical_type_rank(vb.type());
    if (ta != tb) return ta < tb ? -1 : 1;
    int c = compare_bytes(ka, kb);
    if (c != 0) return c;
    c = compare_counted(va, vb, visits);
    if (c != 0) return c;
  }
  if (a.size() == b.size()) return 0;
  return a.size() < b.size() ? -1 : 1;
}

int compare_arrays(const Array& a, const Array& b, size_t& visits) {
  size_t n = std::min(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    int ta = canonical_type_rank(a[i].type()), tb = canonical_type_rank(b[i].type());
    if (ta != tb) return ta < tb ? -1 : 1;
    int c = compare_counted(a[i], b[i], visits);
    if (c != 0) return c;
  }
  if (a.size() == b.size()) return 0;
  return a.size() < b.size() ? -1 : 1;
}

int compare_same_rank(const Value& a, const Value& b, size_t& visits) {
  using bson::Type;
  switch (a.type()) {
    case Type::kMinKey:
    case Type::kMaxKey:
    case Type::kNull:
    case Type::kUndefined:
      return 0;
    case Type::kDouble:
    case Type::kInt32:
    case Type::kInt64:
    case Type::kDecimal128:
      return compare_numbers(a, b);
    case Type::kString:
    case Type::kSymbol:
    case Type::kJavaScript:
      return compare_bytes(a.as_string(), b.as_string());
    case Type::kDocument:
      return compare_documents(a.as_document(), b.as_document(), visits);
    case Type::kArray:
      return compare_arrays(a.as_array(), b.as_array(), visits);
    case Type::kBinary: {
      // Length first, then subtype, then bytes (mongod's BinData order).
      size_t la = a.binary_bytes().size(), lb = b.binary_bytes().size();
      if (la != lb) return la < lb ? -1 : 1;
      if (a.binary_subtype() != b.binary_subtype()) {
        return a.binary_subtype() < b.binary_subtype() ? -1 : 1;
      }
      return compare_bytes(a.binary_bytes(), b.binary_bytes());
    }
    case Type::kObjectId:
      return sign(std::memcmp(a.as_object_id().bytes, b.as_object_id().bytes, 12));
    case Type::kBool:
      return static_cast<int>(a.as_bool()) - static_cast<int>(b.as_bool());
    case Type::kDateTime: {
      int64_t x = a.as_date_ms(), y = b.as_date_ms();
      return x < y ? -1 : (x > y ? 1 : 0);
    }
    case Type::kTimestamp: {
      auto x = a.as_timestamp(), y = b.as_timestamp();
      return x < y ? -1 : (x > y ? 1 : 0);
    }
    case Type::kRegex: {
      int c = compare_bytes(a.regex_pattern(), b.regex_pattern());
      return c != 0 ? c : compare_bytes(a.regex_options(), b.regex_options());
    }
    case Type::kDbPointer:
    case Type::kJavaScriptWithScope:
      return a.identical(b) ? 0 : (a.type() < b.type() ? -1 : 1);
  }
  return 0;
}

// More values than any two BSON documents hold (each value takes at least 3 bytes of one):
// reached only by values whose parts are shared many times, which a walk visits path by path.
constexpr size_t kComparedValuesMax = size_t{1} << 24;

int compare_counted(const Value& a, const Value& b, size_t& visits) {
  // One payload compares equal without a walk.
  if (a.shares_payload_with(b)) return 0;
  if (++visits > kComparedValuesMax) {
    throw CommandError(code::kBSONObjectTooLarge,
                       "a comparison visited more than " + std::to_string(kComparedValuesMax) +
                           " values: more than two 16 MiB BSON documents hold");
  }
  int ra = canonical_type_rank(a.type()), rb = canonical_type_rank(b.type());
  if (ra != rb) return ra < rb ? -1 : 1;
  return compare_same_rank(a, b, visits);
}

}  // namespace

int compare_values(const Value& a, const Value& b) {
  size_t visits = 0;
  return compare_counted(a, b, visits);
}

}  // namespace mongosim::query
