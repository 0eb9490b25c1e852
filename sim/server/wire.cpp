#include "server/wire.h"

#include <cassert>

namespace mongosim::server {

uint32_t read_u32_le(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
         (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}

int32_t read_i32_le(const uint8_t* p) {
  return static_cast<int32_t>(read_u32_le(p));
}

void append_u32_le(std::string& out, uint32_t v) {
  for (int shift = 0; shift < 32; shift += 8)
    out.push_back(static_cast<char>((v >> shift) & 0xFFu));
}

void append_i32_le(std::string& out, int32_t v) {
  append_u32_le(out, static_cast<uint32_t>(v));
}

void append_i64_le(std::string& out, int64_t v) {
  auto u = static_cast<uint64_t>(v);
  append_u32_le(out, static_cast<uint32_t>(u & 0xFFFFFFFFu));
  append_u32_le(out, static_cast<uint32_t>(u >> 32));
}

MessageHeader decode_header(const uint8_t* p) {
  return MessageHeader{read_i32_le(p), read_i32_le(p + 4), read_i32_le(p + 8), read_i32_le(p + 12)};
}

std::optional<std::string> check_message_length(int32_t message_length) {
  if (message_length < static_cast<int32_t>(kHeaderBytes)) {
    return "messageLength " + std::to_string(message_length) +
           " is shorter than the 16-byte header";
  }
  if (message_length > kMaxMessageBytes) {
    return "messageLength " + std::to_string(message_length) + " exceeds maxMessageSizeBytes " +
           std::to_string(kMaxMessageBytes);
  }
  return std::nullopt;
}

std::string frame_message(int32_t request_id, int32_t response_to, int32_t op_code,
                          const std::string& payload) {
  size_t total = kHeaderBytes + payload.size();
  assert(total <= static_cast<size_t>(INT32_MAX));
  std::string out;
  out.reserve(total);
  append_i32_le(out, static_cast<int32_t>(total));
  append_i32_le(out, request_id);
  append_i32_le(out, response_to);
  append_i32_le(out, op_code);
  out += payload;
  return out;
}

}  // namespace mongosim::server
