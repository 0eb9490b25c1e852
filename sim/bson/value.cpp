#include "bson/value.h"

#include <atomic>
#include <bit>
#include <cassert>
#include <chrono>
#include <cmath>
#include <cstring>
#include <random>

namespace mongosim::bson {

std::string_view type_name(Type type) {
  switch (type) {
    case Type::kDouble: return "double";
    case Type::kString: return "string";
    case Type::kDocument: return "object";
    case Type::kArray: return "array";
    case Type::kBinary: return "binData";
    case Type::kUndefined: return "undefined";
    case Type::kObjectId: return "objectId";
    case Type::kBool: return "bool";
    case Type::kDateTime: return "date";
    case Type::kNull: return "null";
    case Type::kRegex: return "regex";
    case Type::kDbPointer: return "dbPointer";
    case Type::kJavaScript: return "javascript";
    case Type::kSymbol: return "symbol";
    case Type::kJavaScriptWithScope: return "javascriptWithScope";
    case Type::kInt32: return "int";
    case Type::kTimestamp: return "timestamp";
    case Type::kInt64: return "long";
    case Type::kDecimal128: return "decimal";
    case Type::kMinKey: return "minKey";
    case Type::kMaxKey: return "maxKey";
  }
  return "unknown";
}

ObjectId ObjectId::generate() {
  // Process-unique 5 bytes chosen once; a counter seeded randomly, as the ObjectId spec says.
  static const uint64_t process_unique = std::random_device{}() ^
                                         (uint64_t{std::random_device{}()} << 32);
  static std::atomic<uint32_t> counter{std::random_device{}()};
  ObjectId oid;
  auto secs = static_cast<uint32_t>(
      std::chrono::duration_cast<std::chrono::seconds>(
          std::chrono::system_clock::now().time_since_epoch())
          .count());
  oid.bytes[0] = static_cast<uint8_t>(secs >> 24);
  oid.bytes[1] = static_cast<uint8_t>(secs >> 16);
  oid.bytes[2] = static_cast<uint8_t>(secs >> 8);
  oid.bytes[3] = static_cast<uint8_t>(secs);
  for (int i = 0; i < 5; ++i) oid.bytes[4 + i] = static_cast<uint8_t>(process_unique >> (8 * i));
  uint32_t c = counter.fetch_add(1);
  oid.bytes[9] = static_cast<uint8_t>(c >> 16);
  oid.bytes[10] = static_cast<uint8_t>(c >> 8);
  oid.bytes[11] = static_cast<uint8_t>(c);
  return oid;
}

std::string ObjectId::hex() const {
  static const char* digits = "0123456789abcdef";
  std::string out;
  out.reserve(24);
  for (uint8_t b : bytes) {
    out.push_back(digits[b >> 4]);
    out.push_back(digits[b & 15]);
  }
  return out;
}

bool ObjectId::operator==(const ObjectId& other) const {
  return std::memcmp(bytes, other.bytes, sizeof bytes) == 0;
}

// The layout's point (value.h): a field of a document is a name and one of these.
static_assert(sizeof(Value) <= 64, "a Value is kept to 64 bytes");

Value::Value() = default;

Value Value::null() { return Value(); }

Value Value::undefined() {
  Value v;
  v.type_ = Type::kUndefined;
  return v;
}

Value Value::min_key() {
  Value v;
  v.type_ = Type::kMinKey;
  return v;
}

Value Value::max_key() {
  Value v;
  v.type_ = Type::kMaxKey;
  return v;
}

Value Value::boolean(bool b) {
  Value v;
  v.type_ = Type::kBool;
  v.i64_ = b ? 1 : 0;
  return v;
}

Value Value::int32(int32_t x) {
  Value v;
  v.type_ = Type::kInt32;
  v.i64_ = x;
  return v;
}

Value Value::int64(int64_t x) {
  Value v;
  v.type_ = Type::kInt64;
  v.i64_ = x;
  return v;
}

Value Value::dbl(double x) {
  Value v;
  v.type_ = Type::kDouble;
  v.i64_ = std::bit_cast<int64_t>(x);
  return v;
}

Value Value::string(std::string s) {
  Value v;
  v.type_ = Type::kString;
  v.str_ = std::move(s);
  return v;
}

Value Value::date(int64_t ms_since_epoch) {
  Value v;
  v.type_ = Type::kDateTime;
  v.i64_ = ms_since_epoch;
  return v;
}

Value Value::object_id(const ObjectId& oid) {
  Value v;
  v.type_ = Type::kObjectId;
  v.str_.assign(reinterpret_cast<const char*>(oid.bytes), sizeof oid.bytes);
  return v;
}

Value Value::timestamp(Timestamp ts) {
  Value v;
  v.type_ = Type::kTimestamp;
  v.i64_ = static_cast<int64_t>((uint64_t{ts.seconds} << 32) | ts.increment);
  return v;
}

Value Value::binary(uint8_t subtype, std::string bytes) {
  Value v;
  v.type_ = Type::kBinary;
  v.subtype_ = subtype;
  v.str_ = std::move(bytes);
  return v;
}

Value Value::regex(std::string pattern, std::string options) {
  Value v;
  v.type_ = Type::kRegex;
  v.str_ = std::move(pattern);
  v.shared_ = std::make_shared<std::string>(std::move(options));
  return v;
}

Value Value::decimal128(const uint8_t raw[16]) {
  Value v;
  v.type_ = Type::kDecimal128;
  v.str_.assign(reinterpret_cast<const char*>(raw), 16);
  return v;
}

Value Value::javascript(std::string code) {
  Value v;
  v.type_ = Type::kJavaScript;
  v.str_ = std::move(code);
  return v;
}

Value Value::symbol(std::string s) {
  Value v;
  v.type_ = Type::kSymbol;
  v.str_ = std::move(s);
  return v;
}

Value Value::document(Document doc) {
  Value v;
  v.type_ = Type::kDocument;
  v.shared_ = std::make_shared<Document>(std::move(doc));
  return v;
}

Value Value::array(Array arr) {
  Value v;
  v.type_ = Type::kArray;
  v.shared_ = std::make_shared<Array>(std::move(arr));
  return v;
}

bool Value::is_number() const {
  return type_ == Type::kInt32 || type_ == Type::kInt64 || type_ == Type::kDouble ||
         type_ == Type::kDecimal128;
}

bool Value::as_bool() const {
  assert(type_ == Type::kBool);
  return i64_ != 0;
}

int32_t Value::as_int32() const {
  assert(type_ == Type::kInt32);
  return static_cast<int32_t>(i64_);
}

int64_t Value::as_int64() const {
  assert(type_ == Type::kInt64);
  return i64_;
}

double Value::as_double() const {
  assert(type_ == Type::kDouble);
  return std::bit_cast<double>(i64_);
}

const std::string& Value::as_string() const {
  assert(type_ == Type::kString || type_ == Type::kSymbol || type_ == Type::kJavaScript);
  return str_;
}

int64_t Value::as_date_ms() const {
  assert(type_ == Type::kDateTime);
  return i64_;
}

const ObjectId& Value::as_object_id() const {
  assert(type_ == Type::kObjectId && str_.size() == 12);
  static_assert(sizeof(ObjectId) == 12);
  return *reinterpret_cast<const ObjectId*>(str_.data());
}

Timestamp Value::as_timestamp() const {
  assert(type_ == Type::kTimestamp);
  auto u = static_cast<uint64_t>(i64_);
  return Timestamp{static_cast<uint32_t>(u >> 32), static_cast<uint32_t>(u)};
}

uint8_t Value::binary_subtype() const {
  assert(type_ == Type::kBinary);
  return subtype_;
}

const std::string& Value::binary_bytes() const {
  assert(type_ == Type::kBinary);
  return str_;
}

const std::string& Value::regex_pattern() const {
  assert(type_ == Type::kRegex);
  return str_;
}

const std::string& Value::regex_options() const {
  assert(type_ == Type::kRegex && shared_);
  return *static_cast<const std::string*>(shared_.get());
}

const std::string& Value::decimal128_bytes() const {
  assert(type_ == Type::kDecimal128);
  return str_;
}

const Document& Value::as_document() const {
  assert(type_ == Type::kDocument && shared_);
  return *static_cast<const Document*>(shared_.get());
}

const Array& Value::as_array() const {
  assert(type_ == Type::kArray && shared_);
  return *static_cast<const Array*>(shared_.get());
}

Document& Value::mutable_document() {
  assert(type_ == Type::kDocument && shared_);
  if (shared_.use_count() > 1) shared_ = std::make_shared<Document>(as_document());
  return *static_cast<Document*>(shared_.get());
}

Array& Value::mutable_array() {
  assert(type_ == Type::kArray && shared_);
  if (shared_.use_count() > 1) shared_ = std::make_shared<Array>(as_array());
  return *static_cast<Array*>(shared_.get());
}

namespace {

// Decodes the IEEE 754-2008 BID decimal128 into a double; exact for the integers and
// short decimals drivers send, approximate otherwise (mongosim does no decimal arithmetic).
double decimal128_to_double(const std::string& raw) {
  uint64_t low = 0, high = 0;
  std::memcpy(&low, raw.data(), 8);
  std::memcpy(&high, raw.data() + 8, 8);
  bool negative = (high >> 63) != 0;
  if (((high >> 58) & 0x1F) == 0x1F) return std::nan("");
  if (((high >> 58) & 0x1F) == 0x1E) return negative ? -INFINITY : INFINITY;
  int exponent;
  uint64_t coeff_high;
  if (((high >> 61) & 3) == 3) {  // non-canonical large coefficient: treated as zero
    exponent = static_cast<int>((high >> 47) & 0x3FFF) - 6176;
    coeff_high = 0;
    low = 0;
  } else {
    exponent = static_cast<int>((high >> 49) & 0x3FFF) - 6176;
    coeff_high = high & ((uint64_t{1} << 49) - 1);
  }
  double coeff = static_cast<double>(coeff_high) * 18446744073709551616.0 + static_cast<double>(low);
  double result = coeff * std::pow(10.0, exponent);
  return negative ? -result : result;
}

// A decimal's value as a long when it is a whole number that fits (1.000...0001 is not, however
// near a double brings it), computed on its coefficient and exponent, never through a double.
std::optional<int64_t> decimal128_exact_int64(const std::string& raw) {
  __extension__ typedef unsigned __int128 Uint128;
  uint64_t low = 0, high = 0;
  std::memcpy(&low, raw.data(), 8);
  std::memcpy(&high, raw.data() + 8, 8);
  const bool negative = (high >> 63) != 0;
  if (((high >> 58) & 0x1F) >= 0x1E) return std::nullopt;  // NaN, infinities
  if (((high >> 61) & 3) == 3) return 0;                   // non-canonical: zero
  int exponent = static_cast<int>((high >> 49) & 0x3FFF) - 6176;
  Uint128 coeff = (Uint128{high & ((uint64_t{1} << 49) - 1)} << 64) | low;
  Uint128 max_coeff = 1;
  for (int i = 0; i < 34; ++i) max_coeff *= 10;
  if (coeff >= max_coeff || coeff == 0) return 0;  // past 10^34 - 1 is non-canonical: zero
  for (; exponent < 0; ++exponent) {               // at most 34 rounds before a digit is left over
    if (coeff % 10 != 0) return std::nullopt;
    coeff /= 10;
  }
  const Uint128 limit = negative ? Uint128{1} << 63 : (Uint128{1} << 63) - 1;
  for (; exponent > 0; --exponent) {  // at most 19 rounds before it passes the limit
    if (coeff > limit / 10) return std::nullopt;
    coeff *= 10;
  }
  if (coeff > limit) return std::nullopt;
  return negative ? static_cast<int64_t>(-static_cast<Uint128>(coeff))
                  : static_cast<int64_t>(coeff);
}

}  // namespace

double Value::number_as_double() const {
  switch (type_) {
    case Type::kInt32:
    case Type::kInt64: return static_cast<double>(i64_);
    case Type::kDouble: return as_double();
    case Type::kDecimal128: return decimal128_to_double(str_);
    default: assert(false && "number_as_double on a non-number"); return 0;
  }
}

std::optional<int64_t> Value::number_as_exact_int64() const {
  switch (type_) {
    case Type::kInt32:
    case Type::kInt64: return i64_;
    case Type::kDecimal128:
      return decimal128_exact_int64(str_);
    case Type::kDouble: {
      double d = number_as_double();
      // 2^63 is exactly representable; anything >= it does not fit.
      if (!std::isfinite(d) || d != std::trunc(d) || d < -9223372036854775808.0 ||
          d >= 9223372036854775808.0) {
        return std::nullopt;
      }
      return static_cast<int64_t>(d);
    }
    default: return std::nullopt;
  }
}

std::optional<int32_t> Value::number_as_exact_int32() const {
  std::optional<int64_t> v = number_as_exact_int64();
  if (!v || *v < INT32_MIN || *v > INT32_MAX) return std::nullopt;
  return static_cast<int32_t>(*v);
}

std::optional<int64_t> Value::number_as_truncated_int64() const {
  if (type_ == Type::kInt32 || type_ == Type::kInt64) return i64_;
  if (type_ != Type::kDouble && type_ != Type::kDecimal128) return std::nullopt;
  const double d = std::trunc(number_as_double());
  if (!std::isfinite(d) || d < -9223372036854775808.0 || d >= 9223372036854775808.0) {
    return std::nullopt;
  }
  return static_cast<int64_t>(d);
}

bool Value::truthy() const {
  switch (type_) {
    case Type::kBool: return i64_ != 0;
    case Type::kNull:
    case Type::kUndefined: return false;
    case Type::kInt32:
    case Type::kInt64: return i64_ != 0;
    case Type::kDouble: return as_double() != 0;
    case Type::kDecimal128: return number_as_double() != 0;
    default: return true;
  }
}

bool Value::identical(const Value& other) const {
  if (type_ != other.type_) return false;
  switch (type_) {
    case Type::kNull:
    case Type::kUndefined:
    case Type::kMinKey:
    case Type::kMaxKey: return true;
    case Type::kDouble: {
      const double a = as_double();
      const double b = other.as_double();
      return a == b || (std::isnan(a) && std::isnan(b));
    }
    case Type::kDocument: return as_document().identical(other.as_document());
    case Type::kArray: {
      const Array& a = as_array();
      const Array& b = other.as_array();
      if (a.size() != b.size()) return false;
      for (size_t i = 0; i < a.size(); ++i) {
        if (!a[i].identical(b[i])) return false;
      }
      return true;
    }
    case Type::kBinary: return subtype_ == other.subtype_ && str_ == other.str_;
    case Type::kRegex: return str_ == other.str_ && regex_options() == other.regex_options();
    case Type::kString:
    case Type::kSymbol:
    case Type::kJavaScript:
    case Type::kObjectId:
    case Type::kDecimal128:
    case Type::kDbPointer:
    case Type::kJavaScriptWithScope: return str_ == other.str_;
    default: return i64_ == other.i64_;
  }
}

Document::Document(std::initializer_list<Field> fields) : fields_(fields) {}

const Value* Document::get(std::string_view key) const {
  for (const auto& f : fields_) {
    if (f.first == key) return &f.second;
  }
  return nullptr;
}

Value* Document::get_mutable(std::string_view key) {
  for (auto& f : fields_) {
    if (f.first == key) return &f.second;
  }
  return nullptr;
}

void Document::set(std::string_view key, Value value) {
  if (Value* existing = get_mutable(key)) {
    *existing = std::move(value);
    return;
  }
  fields_.emplace_back(std::string(key), std::move(value));
}

void Document::append(std::string key, Value value) {
  fields_.emplace_back(std::move(key), std::move(value));
}

void Document::prepend(std::string key, Value value) {
  fields_.insert(fields_.begin(), Field(std::move(key), std::move(value)));
}

bool Document::erase(std::string_view key) {
  for (auto it = fields_.begin(); it != fields_.end(); ++it) {
    if (it->first == key) {
      fields_.erase(it);
      return true;
    }
  }
  return false;
}

const std::string& Document::first_key() const {
  assert(!fields_.empty());
  return fields_.front().first;
}

bool Document::identical(const Document& other) const {
  if (fields_.size() != other.fields_.size()) return false;
  for (size_t i = 0; i < fields_.size(); ++i) {
    if (fields_[i].first != other.fields_[i].first) return false;
    if (!fields_[i].second.identical(other.fields_[i].second)) return false;
  }
  return true;
}

}  // namespace mongosim::bson
