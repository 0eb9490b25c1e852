// Legacy OP_QUERY (opcode 2004) for the handshake, and the OP_REPLY (opcode 1) that answers it
// (docs/mongodb-behaviour.md, Legacy OP_QUERY). Drivers of our era send hello/isMaster this way on
// every new connection and, for libmongoc, on every polling monitor check; any other command over
// OP_QUERY is refused with UnsupportedOpQueryCommand (352).
//
// Pure functions; safe from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "bson/value.h"

namespace mongosim::server {

inline constexpr int32_t kOpQuerySecondaryOkFlag = 4;
// What mongod sets on every OP_REPLY to a command: AwaitCapable.
inline constexpr int32_t kOpReplyAwaitCapable = 8;

struct OpQueryRequest {
  int32_t flags = 0;
  std::string full_collection_name;  // "<db>.$cmd" for commands
  std::string db;                    // the part before the first '.'
  bool command_namespace = false;    // collection part is exactly "$cmd"
  bson::Document command;            // the query, with a {$query: ...} wrapper removed
  bool secondary_ok() const { return (flags & kOpQuerySecondaryOkFlag) != 0; }
};

struct OpQueryParse {
  std::optional<OpQueryRequest> request;
  std::string error;  // set when request is empty: what was malformed and where
};

// `message` is the whole message, header included; `size` equals its messageLength.
OpQueryParse parse_op_query(const uint8_t* message, size_t size);

// Commands mongod 7.0 still accepts over OP_QUERY (check_allowed_op_query_cmd.cpp;
// docs/mongodb-behaviour.md, Legacy OP_QUERY).
bool op_query_command_allowed(std::string_view command_name);

// The 352 reply for every other command.
bson::Document unsupported_op_query_reply(std::string_view command_name);

// OP_REPLY{responseFlags 8, cursorID 0, startingFrom 0, numberReturned 1} + doc.
std::string encode_op_reply(int32_t request_id, int32_t response_to, const bson::Document& doc);

// An OP_QUERY command message, for tests and tools.
std::string encode_op_query(int32_t request_id, int32_t flags, const std::string& collection,
                            const bson::Document& query);

}  // namespace mongosim::server
