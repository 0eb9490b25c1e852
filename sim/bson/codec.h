// BSON bytes <-> Value tree, and extended-JSON helpers for logs and tests.
//
// decode_document() is the trust boundary for everything a client sends: it checks every
// length, terminator and type byte against the buffer and never reads past it, and it limits
// nesting depth, so a malformed message produces an error string instead of a crash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "bson/value.h"

namespace mongosim::bson {

// Real MongoDB's nesting limit for stored documents is 100; commands wrap documents a few
// levels deeper, so accept a little more before refusing.
inline constexpr int kMaxNestingDepth = 180;

struct DecodeResult {
  std::optional<Document> doc;
  std::string error;  // set when doc is empty: what was wrong and at which byte offset
};

// Decodes exactly one document occupying data[0, size). `size` must equal the document's
// own leading length.
DecodeResult decode_document(const uint8_t* data, size_t size);

// Reads the int32 length prefix of a document at data (size bytes available); 0 if too short.
int32_t peek_document_length(const uint8_t* data, size_t size);

// Appends the BSON encoding of doc to out.
void encode_document(const Document& doc, std::string& out);
std::string encode_document(const Document& doc);

// The byte size encode_document(doc) would produce, and a value's payload size (the bytes after
// its type and field name in an element), computed without encoding or allocating.
size_t encoded_size(const Document& doc);
size_t encoded_size(const Value& value);
// The length of an array element's field name (its index in decimal), without the NUL.
size_t index_name_bytes(size_t index);

// Canonical extended JSON is not needed; relaxed extended JSON reads best in logs.
std::string to_json(const Document& doc);
std::string to_json(const Value& value);  // wraps in {"v": ...} and strips the wrapper

// Parses MongoDB extended JSON (relaxed or canonical) through libbson. Throws
// std::invalid_argument naming the problem on bad input. Mainly for tests and fixtures.
Document from_json(std::string_view json);

}  // namespace mongosim::bson
