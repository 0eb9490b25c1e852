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

// mongod's nesting limits (the top document is level 0): BSON it reads may nest 200 levels; a
// document it stores, 180. The difference is room for what wraps a stored document: an oplog
// entry, a journal record (2 levels), a reply's batch (4). The manual promises 100.
inline constexpr int kMaxNestingDepth = 200;
inline constexpr int kMaxStoredNestingDepth = 180;

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
// Whether a document or array inside `doc` sits deeper than `limit` levels (doc itself is level
// 0, as the decoder counts: what it refuses past kMaxNestingDepth). Visits at most the first
// limit + 1 levels, so it is safe on a tree too deep for the recursive encoders.
bool deeper_than(const Document& doc, int limit);
bool deeper_than(const Value& value, int limit);
size_t encoded_size(const Value& value);
// encoded_size(doc) when it is at most `limit` bytes, else nullopt. It stops as soon as the
// count passes the limit, so it visits at most about limit / 3 values: values share parts (an
// expression can build a document whose encoding is exponential in the memory it holds, such as
// a $reduce that nests its accumulator twice per step), and encoded_size() walks every use.
std::optional<size_t> encoded_size_within(const Document& doc, size_t limit);
// The length of an array element's field name (its index in decimal), without the NUL.
size_t index_name_bytes(size_t index);

// Canonical extended JSON is not needed; relaxed extended JSON reads best in logs.
std::string to_json(const Document& doc);
std::string to_json(const Value& value);  // wraps in {"v": ...} and strips the wrapper

// Parses MongoDB extended JSON (relaxed or canonical) through libbson. Throws
// std::invalid_argument naming the problem on bad input. Mainly for tests and fixtures.
Document from_json(std::string_view json);

}  // namespace mongosim::bson
