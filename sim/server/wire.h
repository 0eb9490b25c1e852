// The MongoDB wire framing shared by every opcode (docs/mongodb-behaviour.md, Framing): the 16-byte
// message header, little-endian integer helpers and the size limits a server enforces before it
// allocates.
//
// Pure functions; safe from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace mongosim::server {

namespace opcode {
inline constexpr int32_t kReply = 1;
inline constexpr int32_t kQuery = 2004;
inline constexpr int32_t kCompressed = 2012;
inline constexpr int32_t kMsg = 2013;
}  // namespace opcode

inline constexpr size_t kHeaderBytes = 16;
// The limits every hello advertises (docs/mongodb-behaviour.md, Personality and limits); also the
// frame-size bound the reader uses.
inline constexpr int32_t kMaxMessageBytes = 48000000;
inline constexpr int32_t kMaxBsonObjectBytes = 16 * 1024 * 1024;
inline constexpr int32_t kMaxWriteBatchSize = 100000;

struct MessageHeader {
  int32_t message_length = 0;  // total bytes, header included
  int32_t request_id = 0;
  int32_t response_to = 0;
  int32_t op_code = 0;
};

int32_t read_i32_le(const uint8_t* p);
uint32_t read_u32_le(const uint8_t* p);
void append_i32_le(std::string& out, int32_t v);
void append_u32_le(std::string& out, uint32_t v);
void append_i64_le(std::string& out, int64_t v);

// Decodes the header at p (kHeaderBytes readable).
MessageHeader decode_header(const uint8_t* p);

// Why a declared messageLength cannot be accepted, or nullopt if it can (< 16 or
// > maxMessageSizeBytes closes the connection; docs/mongodb-behaviour.md, Framing).
std::optional<std::string> check_message_length(int32_t message_length);

// Builds a complete message: header (with the final length) followed by payload.
std::string frame_message(int32_t request_id, int32_t response_to, int32_t op_code,
                          const std::string& payload);

}  // namespace mongosim::server
