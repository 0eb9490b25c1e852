// A BSON value tree: the one in-memory representation of documents inside mongosim.
//
// Why not libbson's bson_t: the query and update engines rewrite documents field by field
// ($set on dotted paths, $push, pipeline stages). A mutable tree with copy-on-write children
// makes those rewrites simple and cheap; libbson is still used at the edges (JSON helpers).
//
// Invariants:
// - A Document keeps field order (BSON is ordered) and may hold duplicate keys only if it was
//   decoded that way; set() replaces the first field with that key.
// - Sub-documents and arrays are shared between copies until one copy mutates them
//   (mutable_document()/mutable_array() clone when shared), so copying a Value is O(1).
// - Values are immutable from the point of view of other threads: share a Document across
//   threads only through const references or copies.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mongosim::bson {

enum class Type : uint8_t {
  kDouble = 0x01,
  kString = 0x02,
  kDocument = 0x03,
  kArray = 0x04,
  kBinary = 0x05,
  kUndefined = 0x06,
  kObjectId = 0x07,
  kBool = 0x08,
  kDateTime = 0x09,
  kNull = 0x0A,
  kRegex = 0x0B,
  kDbPointer = 0x0C,
  kJavaScript = 0x0D,
  kSymbol = 0x0E,
  kJavaScriptWithScope = 0x0F,
  kInt32 = 0x10,
  kTimestamp = 0x11,
  kInt64 = 0x12,
  kDecimal128 = 0x13,
  kMinKey = 0xFF,
  kMaxKey = 0x7F,
};

// The name MongoDB's $type operator and error messages use ("double", "string", "object", ...).
std::string_view type_name(Type type);

class Value;
class Document;
using Array = std::vector<Value>;

struct ObjectId {
  uint8_t bytes[12] = {};
  static ObjectId generate();  // 4-byte seconds, 5-byte process random, 3-byte counter
  std::string hex() const;
  bool operator==(const ObjectId& other) const;
};

struct Timestamp {
  uint32_t seconds = 0;
  uint32_t increment = 0;
  bool operator==(const Timestamp& other) const = default;
  auto operator<=>(const Timestamp& other) const = default;
};

class Value {
 public:
  Value();  // null
  static Value null();
  static Value undefined();
  static Value min_key();
  static Value max_key();
  static Value boolean(bool b);
  static Value int32(int32_t v);
  static Value int64(int64_t v);
  static Value dbl(double v);
  static Value string(std::string s);
  static Value date(int64_t ms_since_epoch);
  static Value object_id(const ObjectId& oid);
  static Value timestamp(Timestamp ts);
  static Value binary(uint8_t subtype, std::string bytes);
  static Value regex(std::string pattern, std::string options);
  static Value decimal128(const uint8_t raw[16]);
  static Value javascript(std::string code);
  static Value symbol(std::string s);
  static Value document(Document doc);
  static Value array(Array arr);

  Type type() const { return type_; }
  bool is_null() const { return type_ == Type::kNull; }
  bool is_number() const;  // int32, int64, double, decimal128
  bool is_document() const { return type_ == Type::kDocument; }
  bool is_array() const { return type_ == Type::kArray; }
  bool is_string() const { return type_ == Type::kString; }

  // Accessors assert the type (a wrong-type access is a programming error, never input).
  bool as_bool() const;
  int32_t as_int32() const;
  int64_t as_int64() const;
  double as_double() const;
  const std::string& as_string() const;  // string, symbol, javascript code
  int64_t as_date_ms() const;
  const ObjectId& as_object_id() const;
  Timestamp as_timestamp() const;
  uint8_t binary_subtype() const;
  const std::string& binary_bytes() const;
  const std::string& regex_pattern() const;
  const std::string& regex_options() const;
  const std::string& decimal128_bytes() const;  // 16 raw bytes, little-endian IEEE 754-2008
  const Document& as_document() const;
  const Array& as_array() const;
  Document& mutable_document();  // clones the shared child first if needed
  Array& mutable_array();

  // Numeric conversions for int32/int64/double (decimal128 converts approximately).
  double number_as_double() const;
  // Exact int64 if the number is integral and fits; nullopt otherwise.
  std::optional<int64_t> number_as_exact_int64() const;
  // The number truncated toward zero, if that fits in an int64 (NaN, infinities and values
  // beyond the range: nullopt); nullopt for a non-number. A cast of such a double is undefined.
  std::optional<int64_t> number_as_truncated_int64() const;
  // Exact int32 if the number is integral and fits in 32 bits (an error code, an index).
  std::optional<int32_t> number_as_exact_int32() const;
  // BSON truthiness as $cond/$and use it: false, null, undefined and numeric zero are false.
  bool truthy() const;

  // Structural, type-exact equality (int32(1) != int64(1)); for MongoDB's semantic
  // comparison use query::compare_values.
  bool identical(const Value& other) const;
  // Whether both hold the very same document, array or other shared payload (copies of one value
  // do): then they are identical without looking inside.
  bool shares_payload_with(const Value& other) const {
    return shared_ != nullptr && shared_ == other.shared_ && type_ == other.type_;
  }

 private:
  // Compact (64 bytes): every field of a document is one, and copies, moves and destructions of
  // values are much of what the query engine does.
  Type type_ = Type::kNull;
  uint8_t subtype_ = 0;  // binary subtype
  int64_t i64_ = 0;  // int32, int64, bool, date, timestamp (seconds<<32|increment), double bits
  std::string str_;  // string, symbol, js code, regex pattern, binary bytes, oid, decimal128
  // The shared child: a Document, an Array, or a regex's options (a std::string).
  std::shared_ptr<void> shared_;
};

class Document {
 public:
  using Field = std::pair<std::string, Value>;
  Document() = default;
  Document(std::initializer_list<Field> fields);

  size_t size() const { return fields_.size(); }
  bool empty() const { return fields_.empty(); }
  const Field& at(size_t i) const { return fields_[i]; }
  Field& at(size_t i) { return fields_[i]; }
  auto begin() const { return fields_.begin(); }
  auto end() const { return fields_.end(); }
  auto begin() { return fields_.begin(); }
  auto end() { return fields_.end(); }

  bool has(std::string_view key) const { return get(key) != nullptr; }
  const Value* get(std::string_view key) const;  // first field with that key, or null
  Value* get_mutable(std::string_view key);
  // Replaces the first field named key in place, or appends it.
  void set(std::string_view key, Value value);
  void append(std::string key, Value value);  // always appends (keeps order as given)
  void reserve(size_t fields) { fields_.reserve(fields); }
  void prepend(std::string key, Value value);
  bool erase(std::string_view key);  // removes the first field named key
  const std::string& first_key() const;  // asserts non-empty

  bool identical(const Document& other) const;

 private:
  std::vector<Field> fields_;
};

// Convenience builders used all over the server and tests.
inline Value V(int32_t v) { return Value::int32(v); }
inline Value V(int64_t v) { return Value::int64(v); }
inline Value V(double v) { return Value::dbl(v); }
inline Value V(bool v) { return Value::boolean(v); }
inline Value V(const char* s) { return Value::string(s); }
inline Value V(std::string s) { return Value::string(std::move(s)); }
inline Value V(Document d) { return Value::document(std::move(d)); }
inline Value V(Array a) { return Value::array(std::move(a)); }

}  // namespace mongosim::bson
