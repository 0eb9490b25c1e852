// Read concern (docs/mongodb-behaviour.md, Read concern): parsing and validating the readConcern
// argument, and what the core does for it around a command:
//   - afterClusterTime (sent by drivers in causally consistent sessions): block until this
//     member's applied optime (level local/available) or its majority commit point (majority,
//     snapshot) reaches it, bounded by maxTimeMS or kMaxReadConcernWaitMs;
//   - linearizable: primary only; after the read, a no-op write must become majority-committed
//     while this member is still primary (ReplicationView::linearizable_barrier);
//   - majority / snapshot: the level is passed to the handler in CommandContext::read_concern.
//
// Thread rules: pure parsing; the waits run on the calling connection thread.
#pragma once

#include <cstdint>
#include <string_view>

#include "command/command.h"
#include "server/server_context.h"

namespace mongosim::server {

// The longest an afterClusterTime wait blocks when the command sets no maxTimeMS.
inline constexpr int64_t kMaxReadConcernWaitMs = 60'000;

// Commands that take a read concern other than local (mongod's supportsReadConcern for reads
// outside transactions). Every other command accepts only an empty or local read concern.
bool supports_read_concern(std::string_view command);

// Reads body.readConcern for `command`. Throws CommandError naming the field: 14 wrong type,
// 40415 unknown field, 2 bad level, 72 a level or option this command or deployment refuses.
ReadConcern parse_read_concern(const bson::Document& body, std::string_view command,
                               bool replication_enabled);

// Blocks until `rc.after_cluster_time` is reached (no-op without one). Throws CommandError 50
// when maxTimeMS (or kMaxReadConcernWaitMs) passes first, 91 at shutdown.
void wait_for_read_concern(ServerContext& server, const ReadConcern& rc, int64_t max_time_ms);

// maxTimeMS of the command, or 0 when absent. Throws CommandError 2 for a negative or
// non-integral value.
int64_t parse_max_time_ms(const bson::Document& body);

}  // namespace mongosim::server
