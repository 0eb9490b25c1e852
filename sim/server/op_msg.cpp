#include "server/op_msg.h"

#include <set>
#include <string_view>
#include <vector>

#include "base/crc32c.h"
#include "base/error_codes.h"
#include "bson/codec.h"
#include "server/wire.h"

namespace mongosim::server {

namespace {

constexpr size_t kFlagBytes = 4;
constexpr size_t kChecksumBytes = 4;
constexpr uint8_t kKindBody = 0;
constexpr uint8_t kKindSequence = 1;

// mongod's assertion codes for OP_MSG structure errors (docs/mongodb-behaviour.md: OP_MSG; Error
// codes).
constexpr int32_t kMultipleBodies = 40430;
constexpr int32_t kDuplicateSequence = 40431;
constexpr int32_t kUnknownSectionKind = 40432;
constexpr int32_t kSequenceAlsoInBody = 40433;
constexpr int32_t kMissingBody = 40587;
constexpr int32_t kMissingDb = 40571;

OpMsgParse refuse(uint32_t flags, bool close, int32_t code, std::string message) {
  OpMsgParse out;
  out.flags = flags;
  out.refusal = OpMsgRefusal{close, code, std::move(message)};
  return out;
}

OpMsgParse malformed(uint32_t flags, std::string message) {
  return refuse(flags, true, code::kFailedToParse, std::move(message));
}

struct Sections {
  std::optional<bson::Document> body;
  std::vector<DocumentSequence> sequences;
};

// Reads one document occupying [pos, pos + its length) within [pos, end). Returns the error text
// on failure.
std::optional<std::string> read_document(const uint8_t* base, size_t pos, size_t end,
                                         bson::Document& out) {
  int32_t length = bson::peek_document_length(base + pos, end - pos);
  if (length < 5 || static_cast<size_t>(length) > end - pos) {
    return "document at offset " + std::to_string(pos) + " declares length " +
           std::to_string(length) + " but " + std::to_string(end - pos) + " bytes remain";
  }
  bson::DecodeResult decoded = bson::decode_document(base + pos, static_cast<size_t>(length));
  if (!decoded.doc) return "document at offset " + std::to_string(pos) + ": " + decoded.error;
  out = std::move(*decoded.doc);
  return std::nullopt;
}

// A kind-1 payload starting at pos (after the kind byte). Advances pos past it.
std::optional<std::string> read_sequence(const uint8_t* base, size_t& pos, size_t end,
                                         DocumentSequence& out) {
  if (end - pos < 4) return "document sequence at offset " + std::to_string(pos) + " is truncated";
  int32_t size = read_i32_le(base + pos);
  if (size < 5 || static_cast<size_t>(size) > end - pos) {
    return "document sequence at offset " + std::to_string(pos) + " declares size " +
           std::to_string(size) + " but " + std::to_string(end - pos) + " bytes remain";
  }
  size_t seq_end = pos + static_cast<size_t>(size);
  size_t cursor = pos + 4;
  size_t nul = cursor;
  while (nul < seq_end && base[nul] != 0) ++nul;
  if (nul == seq_end)
    return "document sequence identifier at offset " + std::to_string(cursor) +
           " is not terminated";
  out.identifier.assign(reinterpret_cast<const char*>(base + cursor), nul - cursor);
  cursor = nul + 1;
  while (cursor < seq_end) {
    bson::Document doc;
    if (auto err = read_document(base, cursor, seq_end, doc)) return err;
    cursor += static_cast<size_t>(read_i32_le(base + cursor));
    out.documents.push_back(bson::Value::document(std::move(doc)));
  }
  pos = seq_end;
  return std::nullopt;
}

// Checks the structure rules that get a reply rather than a close (docs/mongodb-behaviour.md,
// OP_MSG).
std::optional<OpMsgRefusal> check_sections(const Sections& sections) {
  if (!sections.body) return OpMsgRefusal{false, kMissingBody, "OP_MSG messages must have a body"};
  if (static_cast<int>(sections.sequences.size()) > kMaxDocumentSequences) {
    return OpMsgRefusal{false, code::kTooManyDocumentSequences,
                        "Too many document sequences in OP_MSG"};
  }
  std::set<std::string_view> seen;
  for (const auto& seq : sections.sequences) {
    if (!seen.insert(seq.identifier).second) {
      return OpMsgRefusal{false, kDuplicateSequence,
                          "Duplicate document sequence: " + seq.identifier};
    }
    if (sections.body->has(seq.identifier)) {
      return OpMsgRefusal{false, kSequenceAlsoInBody,
                          "Duplicate field between body and document sequence " + seq.identifier};
    }
  }
  const bson::Value* db = sections.body->get("$db");
  if (db == nullptr) {
    return OpMsgRefusal{false, kMissingDb, "OP_MSG requests require a $db argument"};
  }
  if (!db->is_string()) {
    return OpMsgRefusal{false, code::kTypeMismatch,
                        "BSON field '$db' is the wrong type '" +
                            std::string(bson::type_name(db->type())) + "', expected type 'string'"};
  }
  return std::nullopt;
}

}  // namespace

OpMsgParse parse_op_msg(const uint8_t* message, size_t size) {
  if (size < kHeaderBytes + kFlagBytes + 1) {
    return malformed(0, "OP_MSG of " + std::to_string(size) + " bytes has no room for a section");
  }
  uint32_t flags = read_u32_le(message + kHeaderBytes);
  uint32_t unknown_required = flags & op_msg_flag::kRequiredMask & ~op_msg_flag::kKnownRequired;
  if (unknown_required != 0) {
    return refuse(flags, true, code::kIllegalOpMsgFlag,
                  "Message contains illegal flags value: Flag " + std::to_string(unknown_required));
  }
  size_t end = size;
  if (flags & op_msg_flag::kChecksumPresent) {
    if (size < kHeaderBytes + kFlagBytes + kChecksumBytes + 1) {
      return malformed(flags, "OP_MSG with checksumPresent has no room for the checksum");
    }
    end = size - kChecksumBytes;
    if (crc32c(message, end) != read_u32_le(message + end)) {
      return refuse(flags, true, code::kChecksumMismatch,
                    "OP_MSG checksum does not match contents");
    }
  }
  Sections sections;
  size_t pos = kHeaderBytes + kFlagBytes;
  while (pos < end) {
    uint8_t kind = message[pos++];
    if (kind == kKindBody) {
      if (sections.body) {
        return refuse(flags, false, kMultipleBodies, "Multiple body sections in message");
      }
      bson::Document body;
      if (auto err = read_document(message, pos, end, body)) return malformed(flags, *err);
      pos += static_cast<size_t>(read_i32_le(message + pos));
      sections.body = std::move(body);
    } else if (kind == kKindSequence) {
      DocumentSequence seq;
      if (auto err = read_sequence(message, pos, end, seq)) return malformed(flags, *err);
      sections.sequences.push_back(std::move(seq));
    } else {
      return refuse(
          flags, true, kUnknownSectionKind,
          "Unknown section kind " + std::to_string(kind) + " at offset " + std::to_string(pos - 1));
    }
  }
  if (auto refusal = check_sections(sections)) {
    OpMsgParse out;
    out.flags = flags;
    out.refusal = std::move(refusal);
    return out;
  }
  OpMsgParse out;
  out.flags = flags;
  out.request = OpMsgRequest{flags, std::move(*sections.body)};
  for (auto& seq : sections.sequences) {
    out.request->body.append(seq.identifier, bson::Value::array(std::move(seq.documents)));
  }
  return out;
}

std::string encode_op_msg(int32_t request_id, int32_t response_to, const bson::Document& body) {
  std::string payload;
  payload.reserve(4 + 1 + bson::encoded_size(body));  // flags, kind, body: no regrowth
  append_u32_le(payload, 0);
  payload.push_back(static_cast<char>(kKindBody));
  bson::encode_document(body, payload);
  return frame_message(request_id, response_to, opcode::kMsg, payload);
}

std::string encode_op_msg_request(int32_t request_id, uint32_t flags, const bson::Document& body,
                                  const std::vector<DocumentSequence>& sequences,
                                  bool with_checksum) {
  if (with_checksum) flags |= op_msg_flag::kChecksumPresent;
  std::string payload;
  append_u32_le(payload, flags);
  payload.push_back(static_cast<char>(kKindBody));
  bson::encode_document(body, payload);
  for (const auto& seq : sequences) {
    std::string docs;
    for (const auto& d : seq.documents) bson::encode_document(d.as_document(), docs);
    payload.push_back(static_cast<char>(kKindSequence));
    append_i32_le(payload, static_cast<int32_t>(4 + seq.identifier.size() + 1 + docs.size()));
    payload += seq.identifier;
    payload.push_back('\0');
    payload += docs;
  }
  std::string message =
      frame_message(request_id, 0, opcode::kMsg, payload + (with_checksum ? "0000" : ""));
  if (with_checksum) {
    size_t body_end = message.size() - kChecksumBytes;
    uint32_t crc = crc32c(reinterpret_cast<const uint8_t*>(message.data()), body_end);
    std::string tail;
    append_u32_le(tail, crc);
    message.replace(body_end, kChecksumBytes, tail);
  }
  return message;
}

}  // namespace mongosim::server
