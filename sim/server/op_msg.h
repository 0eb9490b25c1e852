// OP_MSG (opcode 2013) parsing and reply encoding (docs/mongodb-behaviour.md, OP_MSG).
//
// A request is either accepted (body with every kind-1 document sequence merged in as an array
// field), refused with a command error the client still gets a reply for (duplicate body, missing
// $db, ...), or refused by closing the connection (bad checksum, unknown required flag bit,
// unknown section kind, truncated or malformed bytes). The parser never reads outside the
// message it is given.
//
// Pure functions; safe from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bson/value.h"

namespace mongosim::server {

namespace op_msg_flag {
inline constexpr uint32_t kChecksumPresent = 1u << 0;
inline constexpr uint32_t kMoreToCome = 1u << 1;
inline constexpr uint32_t kExhaustAllowed = 1u << 16;
// Bits 0-15 are "required": a receiver that does not know one must refuse the message.
inline constexpr uint32_t kRequiredMask = 0xFFFFu;
inline constexpr uint32_t kKnownRequired = kChecksumPresent | kMoreToCome;
}  // namespace op_msg_flag

// Real mongod accepts at most two kind-1 sections (TooManyDocumentSequences;
// docs/mongodb-behaviour.md, OP_MSG).
inline constexpr int kMaxDocumentSequences = 2;

struct OpMsgRequest {
  uint32_t flags = 0;
  bson::Document body;  // sequences merged in; $db is present and a string
  bool more_to_come() const { return (flags & op_msg_flag::kMoreToCome) != 0; }
};

// Why a message was refused.
struct OpMsgRefusal {
  bool close_connection = false;  // true: drop the connection; false: reply with the error
  int32_t code = 0;
  std::string message;
};

struct OpMsgParse {
  uint32_t flags = 0;  // valid whenever the flag word could be read
  std::optional<OpMsgRequest> request;
  std::optional<OpMsgRefusal> refusal;  // exactly one of request/refusal is set
};

// `message` is the whole message, header included; `size` equals its messageLength.
OpMsgParse parse_op_msg(const uint8_t* message, size_t size);

// A reply: flagBits 0 and one kind-0 section (checksums are never sent; docs/mongodb-behaviour.md,
// OP_MSG).
std::string encode_op_msg(int32_t request_id, int32_t response_to, const bson::Document& body);

// A request with the given sections, for tests and tools: body first, then each sequence.
struct DocumentSequence {
  std::string identifier;
  bson::Array documents;
};
std::string encode_op_msg_request(int32_t request_id, uint32_t flags, const bson::Document& body,
                                  const std::vector<DocumentSequence>& sequences = {},
                                  bool with_checksum = false);

}  // namespace mongosim::server
