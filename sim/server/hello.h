// The hello command and its legacy names isMaster/ismaster (reference §2.1, §2.2): the reply a
// standalone, an uninitiated --replSet member and a replica-set member give. Field names,
// order and BSON types follow mongod, because libmongoc rejects a reply whose limit fields
// are not int32 or whose electionId is not an ObjectId.
//
// topologyVersion is omitted on purpose: mongosim does not stream hello (§2.5), so drivers poll.
//
// Thread rules: the handler reads only thread-safe state.
#pragma once

#include "command/command.h"
#include "server/server_context.h"

namespace mongosim::server {

inline constexpr int32_t kMinWireVersion = 0;
inline constexpr int32_t kMaxWireVersion = 21;  // MongoDB 7.0 (§2.3)
inline constexpr int32_t kLogicalSessionTimeoutMinutes = 30;

bson::Document hello_reply(ServerContext& server, const CommandContext& ctx);

void register_hello(ServerContext& server);

}  // namespace mongosim::server
