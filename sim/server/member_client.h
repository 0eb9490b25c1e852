// A small blocking client one member uses to run a command on another member (heartbeats,
// votes, oplog fetches, position reports): one TCP connection per call, OP_MSG framing, every
// step bounded by the caller's timeout, so a partitioned or paused peer costs at most that long.
//
// Thread rules: stateless; call from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "bson/value.h"

namespace mongosim::server {

// Replies larger than this are refused (an oplog batch is bounded well below it).
inline constexpr size_t kMaxMemberReplyBytes = 48 * 1024 * 1024;

struct MemberReply {
  std::optional<bson::Document> body;  // the reply document (ok may be 0)
  std::string error;                   // set when there is no body: what failed, naming the host
};

// Runs `command` (without $db) against database `db` on `host` ("host:port").
MemberReply run_member_command(const std::string& host, const std::string& db,
                               const bson::Document& command, int64_t timeout_ms);

}  // namespace mongosim::server
