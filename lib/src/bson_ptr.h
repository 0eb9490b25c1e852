// Small readers for reply documents, and the owner of a bson_t (lib/bson/bson_owner.h).
//
// Readers return std::nullopt when a field is missing or has another type; they never throw.
// Thread rules: a Bson is owned by one thread at a time.
#pragma once

#include <bson/bson.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "bson_owner.h"

namespace mongolock::detail {

// The owner classes are the tree's one pair (lib/bson/bson_owner.h).
using bson::Bson;
using bson::BsonReply;
using bson::make_bson;

// Canonical extended JSON, for error messages and tests.
std::string to_json(const bson_t& doc);

// Looks up a dotted path ("value.holder") in doc.
std::optional<std::string> find_utf8(const bson_t& doc, const char* path);
// int32/int64/double (truncated); nullopt for other types, NaN and doubles outside int64.
std::optional<int64_t> find_int64(const bson_t& doc, const char* path);
// Whether path names any element, whatever its type.
bool has_path(const bson_t& doc, const char* path);
std::optional<int64_t> find_date_ms(const bson_t& doc, const char* path);
bool find_is_null_or_missing(const bson_t& doc, const char* path);
// A copy of the embedded document at path, if it is a document.
std::optional<Bson> find_document(const bson_t& doc, const char* path);

// Calls visit(entry) -> bool for each embedded document of the array at top-level `key` (other
// elements are skipped); stops early when visit returns false. (A template: std::function over
// bson_t trips -Wignored-attributes.)
template <typename Visit>
void for_each_document(const bson_t& doc, const char* key, Visit&& visit) {
  bson_iter_t iter;
  bson_iter_t entries;
  if (!bson_iter_init_find(&iter, &doc, key) || !BSON_ITER_HOLDS_ARRAY(&iter) ||
      !bson_iter_recurse(&iter, &entries)) {
    return;
  }
  while (bson_iter_next(&entries)) {
    if (!BSON_ITER_HOLDS_DOCUMENT(&entries)) continue;
    uint32_t length = 0;
    const uint8_t* data = nullptr;
    bson_iter_document(&entries, &length, &data);
    bson_t entry;
    if (bson_init_static(&entry, data, length) && !visit(static_cast<const bson_t&>(entry))) {
      return;
    }
  }
}

}  // namespace mongolock::detail
