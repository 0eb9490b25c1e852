// Change stream resume tokens (docs/mongodb-behaviour.md, Change streams): the `_id` of every
// event and the postBatchResumeToken of every batch, {_data: "<hex>"}. Drivers treat them as
// opaque; mongod's are KeyString encodings whose hex sorts by position. mongosim's choice: its
// own encoding of the position, which sorts the same way:
//   "82" <timestamp as 16 hex digits, seconds then increment> "6D" <kind, 2 hex digits>
// (82 is the KeyString type byte of a Timestamp, as in mongod's tokens; 6D marks mongosim's).
// Every token means "the stream has seen everything through this timestamp"; the kind tells an
// event's token from the invalidate that follows a drop and from a batch's high-water mark.
//
// Pure functions; no state.
#pragma once

#include <cstdint>
#include <string>

#include "bson/value.h"

namespace mongosim::data {

struct ResumeToken {
  enum class Kind : uint8_t { kEvent = 1, kInvalidate = 2, kHighWaterMark = 3 };
  bson::Timestamp ts;
  Kind kind = Kind::kHighWaterMark;

  // {_data: "<hex>"}
  bson::Document to_document() const;
  std::string hex() const;
};

// Decodes a resume token document as mongod validates one. Throws CommandError: 40647 when
// `_data` is missing or not a string, 40648 for a `_typeBits` that is not general binary data,
// 9 (FailedToParse) when `_data` is not hex, 40649 when it is empty, and 9 naming the token
// when it is hex but not a token of this server.
ResumeToken parse_resume_token(const bson::Document& token);

}  // namespace mongosim::data
