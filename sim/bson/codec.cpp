#include "bson/codec.h"

#include <bson/bson.h>

#include <algorithm>
#include <cassert>
#include <charconv>
#include <cstring>
#include <stdexcept>
#include <unordered_map>

namespace mongosim::bson {

namespace {

class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  bool failed() const { return !error_.empty(); }
  const std::string& error() const { return error_; }
  size_t offset() const { return pos_; }

  void fail(const std::string& what) {
    if (error_.empty()) error_ = what + " at byte " + std::to_string(pos_);
  }

  bool need(size_t n) {
    if (failed()) return false;
    if (size_ - pos_ < n) {
      fail("truncated value (need " + std::to_string(n) + " bytes, have " +
           std::to_string(size_ - pos_) + ")");
      return false;
    }
    return true;
  }

  uint8_t u8() {
    if (!need(1)) return 0;
    return data_[pos_++];
  }

  int32_t i32() {
    if (!need(4)) return 0;
    uint32_t v;
    std::memcpy(&v, data_ + pos_, 4);
    pos_ += 4;
    return static_cast<int32_t>(v);
  }

  int64_t i64() {
    if (!need(8)) return 0;
    uint64_t v;
    std::memcpy(&v, data_ + pos_, 8);
    pos_ += 8;
    return static_cast<int64_t>(v);
  }

  double f64() {
    if (!need(8)) return 0;
    double v;
    std::memcpy(&v, data_ + pos_, 8);
    pos_ += 8;
    return v;
  }

  std::string bytes(size_t n) {
    if (!need(n)) return {};
    std::string s(reinterpret_cast<const char*>(data_ + pos_), n);
    pos_ += n;
    return s;
  }

  std::string cstring() {
    if (failed()) return {};
    const void* nul = std::memchr(data_ + pos_, 0, size_ - pos_);
    if (nul == nullptr) {
      fail("unterminated cstring");
      return {};
    }
    size_t len = static_cast<const uint8_t*>(nul) - (data_ + pos_);
    std::string s(reinterpret_cast<const char*>(data_ + pos_), len);
    pos_ += len + 1;
    return s;
  }

  // BSON string: int32 length (including the trailing NUL), bytes, NUL.
  std::string string() {
    int32_t len = i32();
    if (failed()) return {};
    if (len < 1) {
      fail("invalid string length " + std::to_string(len));
      return {};
    }
    std::string s = bytes(static_cast<size_t>(len) - 1);
    if (u8() != 0 && !failed()) fail("string not NUL-terminated");
    return s;
  }

  Document document(int depth);
  Array array(int depth);
  Value value(uint8_t type, int depth);

 private:
  // Fields read so far of the document being read at each depth. A document's fields are
  // collected here and moved into it at once, so its vector is allocated once at its size
  // instead of grown field by field (the growth was most of what decoding a command allocated).
  std::vector<Document::Field>& fields_at(int depth) {
    auto index = static_cast<size_t>(depth);
    if (scratch_.size() <= index) scratch_.resize(index + 1);
    return scratch_[index];
  }

  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
  std::string error_;
  std::vector<std::vector<Document::Field>> scratch_;
};

Document Reader::document(int depth) {
  Document doc;
  if (depth > kMaxNestingDepth) {
    fail("document nested deeper than " + std::to_string(kMaxNestingDepth));
    return doc;
  }
  size_t start = pos_;
  int32_t len = i32();
  if (failed()) return doc;
  if (len < 5 || static_cast<size_t>(len) > size_ - start) {
    fail("invalid document length " + std::to_string(len));
    return doc;
  }
  size_t end = start + static_cast<size_t>(len);
  fields_at(depth).clear();
  while (!failed() && pos_ < end - 1) {
    uint8_t type = u8();
    std::string key = cstring();
    if (failed()) break;
    if (pos_ > end - 1) {
      fail("field name runs past the end of its document");
      break;
    }
    Value v = value(type, depth);  // may resize scratch_: fields_at() again below
    if (failed()) break;
    if (pos_ > end - 1) {
      fail("field '" + key + "' runs past the end of its document");
      break;
    }
    fields_at(depth).emplace_back(std::move(key), std::move(v));
  }
  if (failed()) return doc;
  std::vector<Document::Field>& fields = fields_at(depth);
  doc.reserve(fields.size());
  for (Document::Field& field : fields) doc.append(std::move(field.first), std::move(field.second));
  fields.clear();
  if (pos_ != end - 1 || data_[pos_] != 0) {
    fail("document not terminated by a NUL byte");
    return doc;
  }
  pos_ = end;
  return doc;
}

Array Reader::array(int depth) {
  Document as_doc = document(depth);
  Array arr;
  arr.reserve(as_doc.size());
  for (auto& field : as_doc) arr.push_back(std::move(field.second));
  return arr;
}

Value Reader::value(uint8_t type, int depth) {
  switch (static_cast<Type>(type)) {
    case Type::kDouble: return Value::dbl(f64());
    case Type::kString: return Value::string(string());
    case Type::kSymbol: return Value::symbol(string());
    case Type::kJavaScript: return Value::javascript(string());
    case Type::kDocument: return Value::document(document(depth + 1));
    case Type::kArray: return Value::array(array(depth + 1));
    case Type::kBinary: {
      int32_t len = i32();
      uint8_t subtype = u8();
      if (failed()) return {};
      if (len < 0) {
        fail("negative binary length");
        return {};
      }
      return Value::binary(subtype, bytes(static_cast<size_t>(len)));
    }
    case Type::kUndefined: return Value::undefined();
    case Type::kObjectId: {
      std::string raw = bytes(12);
      if (failed()) return {};
      ObjectId oid;
      std::memcpy(oid.bytes, raw.data(), 12);
      return Value::object_id(oid);
    }
    case Type::kBool: {
      uint8_t b = u8();
      if (b > 1 && !failed()) fail("invalid boolean byte " + std::to_string(b));
      return Value::boolean(b == 1);
    }
    case Type::kDateTime: return Value::date(i64());
    case Type::kNull: return Value::null();
    case Type::kRegex: {
      std::string pattern = cstring();
      std::string options = cstring();
      return Value::regex(std::move(pattern), std::move(options));
    }
    case Type::kInt32: return Value::int32(i32());
    case Type::kTimestamp: {
      auto raw = static_cast<uint64_t>(i64());
      return Value::timestamp(
          Timestamp{static_cast<uint32_t>(raw >> 32), static_cast<uint32_t>(raw)});
    }
    case Type::kInt64: return Value::int64(i64());
    case Type::kDecimal128: {
      std::string raw = bytes(16);
      if (failed()) return {};
      return Value::decimal128(reinterpret_cast<const uint8_t*>(raw.data()));
    }
    case Type::kMinKey: return Value::min_key();
    case Type::kMaxKey: return Value::max_key();
    case Type::kDbPointer:
    case Type::kJavaScriptWithScope:
      fail("deprecated BSON type " + std::to_string(type) + " is not supported");
      return {};
  }
  fail("unknown BSON type byte " + std::to_string(type));
  return {};
}

void put_i32(std::string& out, int32_t v) {
  char b[4];
  std::memcpy(b, &v, 4);
  out.append(b, 4);
}

void put_i64(std::string& out, int64_t v) {
  char b[8];
  std::memcpy(b, &v, 8);
  out.append(b, 8);
}

void put_string(std::string& out, const std::string& s) {
  put_i32(out, static_cast<int32_t>(s.size() + 1));
  out.append(s);
  out.push_back('\0');
}

void encode_value(const Value& v, std::string& out);

void encode_array(const Array& arr, std::string& out) {
  size_t start = out.size();
  put_i32(out, 0);
  for (size_t i = 0; i < arr.size(); ++i) {
    out.push_back(static_cast<char>(arr[i].type()));
    char name[24];
    const auto written = std::to_chars(name, name + sizeof name, i);
    out.append(name, written.ptr);
    out.push_back('\0');
    encode_value(arr[i], out);
  }
  out.push_back('\0');
  int32_t len = static_cast<int32_t>(out.size() - start);
  std::memcpy(&out[start], &len, 4);
}

void encode_value(const Value& v, std::string& out) {
  switch (v.type()) {
    case Type::kDouble: {
      double d = v.as_double();
      char b[8];
      std::memcpy(b, &d, 8);
      out.append(b, 8);
      return;
    }
    case Type::kString:
    case Type::kSymbol:
    case Type::kJavaScript: put_string(out, v.as_string()); return;
    case Type::kDocument: encode_document(v.as_document(), out); return;
    case Type::kArray: encode_array(v.as_array(), out); return;
    case Type::kBinary:
      put_i32(out, static_cast<int32_t>(v.binary_bytes().size()));
      out.push_back(static_cast<char>(v.binary_subtype()));
      out.append(v.binary_bytes());
      return;
    case Type::kObjectId:
      out.append(reinterpret_cast<const char*>(v.as_object_id().bytes), 12);
      return;
    case Type::kBool: out.push_back(v.as_bool() ? 1 : 0); return;
    case Type::kDateTime: put_i64(out, v.as_date_ms()); return;
    case Type::kRegex:
      out.append(v.regex_pattern());
      out.push_back('\0');
      out.append(v.regex_options());
      out.push_back('\0');
      return;
    case Type::kInt32: put_i32(out, v.as_int32()); return;
    case Type::kTimestamp: {
      Timestamp ts = v.as_timestamp();
      put_i64(out, static_cast<int64_t>((uint64_t{ts.seconds} << 32) | ts.increment));
      return;
    }
    case Type::kInt64: put_i64(out, v.as_int64()); return;
    case Type::kDecimal128: out.append(v.decimal128_bytes()); return;
    case Type::kNull:
    case Type::kUndefined:
    case Type::kMinKey:
    case Type::kMaxKey: return;
    case Type::kDbPointer:
    case Type::kJavaScriptWithScope: assert(false && "never decoded, never built"); return;
  }
}

}  // namespace

DecodeResult decode_document(const uint8_t* data, size_t size) {
  DecodeResult result;
  Reader reader(data, size);
  Document doc = reader.document(0);
  if (reader.failed()) {
    result.error = reader.error();
    return result;
  }
  if (reader.offset() != size) {
    result.error = "document length " + std::to_string(reader.offset()) +
                   " does not match its section size " + std::to_string(size);
    return result;
  }
  result.doc = std::move(doc);
  return result;
}

int32_t peek_document_length(const uint8_t* data, size_t size) {
  if (size < 4) return 0;
  int32_t len;
  std::memcpy(&len, data, 4);
  return len;
}

void encode_document(const Document& doc, std::string& out) {
  size_t start = out.size();
  put_i32(out, 0);
  for (const auto& [key, value] : doc) {
    out.push_back(static_cast<char>(value.type()));
    out.append(key);
    out.push_back('\0');
    encode_value(value, out);
  }
  out.push_back('\0');
  int32_t len = static_cast<int32_t>(out.size() - start);
  std::memcpy(&out[start], &len, 4);
}

std::string encode_document(const Document& doc) {
  std::string out;
  out.reserve(encoded_size(doc));
  encode_document(doc, out);
  return out;
}

size_t index_name_bytes(size_t index) {
  size_t digits = 1;
  for (; index >= 10; index /= 10) ++digits;
  return digits;
}

// Mirrors encode_value case by case (a codec test checks the two agree on every type).
size_t encoded_size(const Value& v) {
  constexpr size_t kInt32Bytes = 4;
  constexpr size_t kInt64Bytes = 8;
  switch (v.type()) {
    case Type::kDouble:
    case Type::kDateTime:
    case Type::kTimestamp:
    case Type::kInt64:
      return kInt64Bytes;
    case Type::kString:
    case Type::kSymbol:
    case Type::kJavaScript:
      return kInt32Bytes + v.as_string().size() + 1;
    case Type::kDocument:
      return encoded_size(v.as_document());
    case Type::kArray: {
      size_t total = kInt32Bytes + 1;
      const Array& arr = v.as_array();
      for (size_t i = 0; i < arr.size(); ++i) {
        total += 1 + index_name_bytes(i) + 1 + encoded_size(arr[i]);
      }
      return total;
    }
    case Type::kBinary:
      return kInt32Bytes + 1 + v.binary_bytes().size();
    case Type::kObjectId:
      return sizeof(ObjectId::bytes);
    case Type::kBool:
      return 1;
    case Type::kRegex:
      return v.regex_pattern().size() + 1 + v.regex_options().size() + 1;
    case Type::kInt32:
      return kInt32Bytes;
    case Type::kDecimal128:
      return v.decimal128_bytes().size();
    case Type::kNull:
    case Type::kUndefined:
    case Type::kMinKey:
    case Type::kMaxKey:
      return 0;
    case Type::kDbPointer:
    case Type::kJavaScriptWithScope:
      assert(false && "never decoded, never built");
      return 0;
  }
  return 0;
}

namespace {

// deeper_than's walk. Built values share subtrees (a copy is a reference until written), so a
// plain tree walk of [v, v] nested k times takes 2^k steps: past kPlainVisitsMax visits the walk
// starts again remembering, by address, the smallest limit each container was found to fit
// within (a container fits within every larger limit too, and is walked again only for a
// smaller one: at most limit + 1 times).
class DepthWalk {
 public:
  static constexpr size_t kPlainVisitsMax = 4096;

  explicit DepthWalk(bool remember) : remember_(remember) {}
  bool exhausted() const { return exhausted_; }

  bool deeper(const Value& value, int limit) {
    if (value.is_document()) return deeper(value.as_document(), limit);
    if (!value.is_array()) return false;
    const Array& array = value.as_array();
    return container(&array, limit, [&](int below) {
      for (const Value& element : array) {
        if (deeper(element, below)) return true;
      }
      return false;
    });
  }

  bool deeper(const Document& doc, int limit) {
    return container(&doc, limit, [&](int below) {
      for (const auto& [key, value] : doc) {
        if (deeper(value, below)) return true;
      }
      return false;
    });
  }

 private:
  template <typename Children>
  bool container(const void* address, int limit, Children children) {
    if (limit < 0) return true;
    if (exhausted_) return false;  // the caller walks again, remembering
    if (remember_) {
      auto fits = fits_within_.find(address);
      if (fits != fits_within_.end() && fits->second <= limit) return false;
    } else if (++visits_ > kPlainVisitsMax) {
      exhausted_ = true;
      return false;
    }
    if (children(limit - 1)) return true;
    if (remember_ && !exhausted_) {
      auto [it, inserted] = fits_within_.emplace(address, limit);
      if (!inserted) it->second = std::min(it->second, limit);
    }
    return false;
  }

  bool remember_;
  bool exhausted_ = false;
  size_t visits_ = 0;
  std::unordered_map<const void*, int> fits_within_;
};

template <typename Tree>
bool walk_deeper_than(const Tree& tree, int limit) {
  DepthWalk plain(/*remember=*/false);
  const bool deeper = plain.deeper(tree, limit);
  if (!plain.exhausted()) return deeper;
  DepthWalk remembering(/*remember=*/true);
  return remembering.deeper(tree, limit);
}

}  // namespace

bool deeper_than(const Value& value, int limit) {
  return walk_deeper_than(value, limit);
}

bool deeper_than(const Document& doc, int limit) {
  return walk_deeper_than(doc, limit);
}

size_t encoded_size(const Document& doc) {
  size_t total = 4 + 1;  // the int32 length and the terminating NUL
  for (const auto& [key, value] : doc) total += 1 + key.size() + 1 + encoded_size(value);
  return total;
}

namespace {

bool document_within(const Document& doc, size_t& total, size_t limit);

// Adds v's payload size to total; false once total passes limit.
bool value_within(const Value& v, size_t& total, size_t limit) {
  if (v.is_document()) return document_within(v.as_document(), total, limit);
  if (!v.is_array()) {
    total += encoded_size(v);  // a scalar: constant work
    return total <= limit;
  }
  total += 4 + 1;
  const Array& arr = v.as_array();
  for (size_t i = 0; i < arr.size() && total <= limit; ++i) {
    total += 1 + index_name_bytes(i) + 1;
    if (!value_within(arr[i], total, limit)) return false;
  }
  return total <= limit;
}

bool document_within(const Document& doc, size_t& total, size_t limit) {
  total += 4 + 1;
  for (const auto& [key, value] : doc) {
    total += 1 + key.size() + 1;
    if (total > limit || !value_within(value, total, limit)) return false;
  }
  return total <= limit;
}

}  // namespace

std::optional<size_t> encoded_size_within(const Document& doc, size_t limit) {
  size_t total = 0;
  if (!document_within(doc, total, limit)) return std::nullopt;
  return total;
}

std::string to_json(const Document& doc) {
  std::string raw = encode_document(doc);
  bson_t b;
  if (!bson_init_static(&b, reinterpret_cast<const uint8_t*>(raw.data()), raw.size())) {
    return "<unencodable document>";
  }
  size_t len = 0;
  char* json = bson_as_relaxed_extended_json(&b, &len);
  if (json == nullptr) return "<document with invalid UTF-8>";
  std::string out(json, len);
  bson_free(json);
  return out;
}

std::string to_json(const Value& value) {
  Document wrapper;
  wrapper.append("v", value);
  std::string json = to_json(wrapper);
  // {"v" : X } -> X
  const std::string prefix = "{ \"v\" : ";
  if (json.rfind(prefix, 0) == 0 && json.size() >= prefix.size() + 2) {
    return json.substr(prefix.size(), json.size() - prefix.size() - 2);
  }
  return json;
}

Document from_json(std::string_view json) {
  bson_error_t error;
  bson_t* b = bson_new_from_json(reinterpret_cast<const uint8_t*>(json.data()),
                                 static_cast<ssize_t>(json.size()), &error);
  if (b == nullptr) {
    throw std::invalid_argument(std::string("invalid extended JSON: ") + error.message);
  }
  DecodeResult r = decode_document(bson_get_data(b), b->len);
  bson_destroy(b);
  if (!r.doc) throw std::invalid_argument("libbson produced undecodable BSON: " + r.error);
  return std::move(*r.doc);
}

}  // namespace mongosim::bson
