#include "bson_ptr.h"

namespace mongolock::detail {

std::string to_json(const bson_t& doc) {
  size_t length = 0;
  char* json = bson_as_canonical_extended_json(&doc, &length);
  if (json == nullptr) return "<unprintable bson>";
  std::string out(json, length);
  bson_free(json);
  return out;
}

namespace {

bool find(const bson_t& doc, const char* path, bson_iter_t* out) {
  bson_iter_t iter;
  return bson_iter_init(&iter, &doc) && bson_iter_find_descendant(&iter, path, out);
}

}  // namespace

std::optional<std::string> find_utf8(const bson_t& doc, const char* path) {
  bson_iter_t iter;
  if (!find(doc, path, &iter) || !BSON_ITER_HOLDS_UTF8(&iter)) return std::nullopt;
  uint32_t length = 0;
  const char* text = bson_iter_utf8(&iter, &length);
  return std::string(text, length);
}

std::optional<int64_t> find_int64(const bson_t& doc, const char* path) {
  bson_iter_t iter;
  if (!find(doc, path, &iter)) return std::nullopt;
  if (BSON_ITER_HOLDS_INT64(&iter)) return bson_iter_int64(&iter);
  if (BSON_ITER_HOLDS_INT32(&iter)) return bson_iter_int32(&iter);
  if (BSON_ITER_HOLDS_DOUBLE(&iter)) {
    // NaN and values outside int64's range have no integer (the cast would be undefined).
    const double value = bson_iter_double(&iter);
    constexpr double kInt64Bound = 9223372036854775808.0;  // 2^63
    if (!(value >= -kInt64Bound && value < kInt64Bound)) return std::nullopt;
    return static_cast<int64_t>(value);
  }
  return std::nullopt;
}

bool has_path(const bson_t& doc, const char* path) {
  bson_iter_t iter;
  return find(doc, path, &iter);
}

std::optional<int64_t> find_date_ms(const bson_t& doc, const char* path) {
  bson_iter_t iter;
  if (!find(doc, path, &iter) || !BSON_ITER_HOLDS_DATE_TIME(&iter)) return std::nullopt;
  return bson_iter_date_time(&iter);
}

bool find_is_null_or_missing(const bson_t& doc, const char* path) {
  bson_iter_t iter;
  if (!find(doc, path, &iter)) return true;
  return BSON_ITER_HOLDS_NULL(&iter);
}

std::optional<Bson> find_document(const bson_t& doc, const char* path) {
  bson_iter_t iter;
  if (!find(doc, path, &iter)) return std::nullopt;
  if (!BSON_ITER_HOLDS_DOCUMENT(&iter) && !BSON_ITER_HOLDS_ARRAY(&iter)) return std::nullopt;
  uint32_t length = 0;
  const uint8_t* data = nullptr;
  if (BSON_ITER_HOLDS_DOCUMENT(&iter)) {
    bson_iter_document(&iter, &length, &data);
  } else {
    bson_iter_array(&iter, &length, &data);
  }
  bson_t* copy = bson_new_from_data(data, length);
  if (copy == nullptr) return std::nullopt;
  return Bson(copy);
}

}  // namespace mongolock::detail
