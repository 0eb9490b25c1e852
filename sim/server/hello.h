// The hello command and its legacy names isMaster/ismaster (docs/mongodb-behaviour.md, Hello): the
// reply a standalone, an uninitiated --replSet member and a replica-set member give. Field names,
// order and BSON types follow mongod, because libmongoc rejects a reply whose limit fields
// are not int32 or whose electionId is not an ObjectId.
//
// topologyVersion is omitted on purpose: mongosim does not stream hello (docs/mongodb-behaviour.md,
// Hello), so drivers poll.
//
// Thread rules: the handler reads only thread-safe state.
#pragma once

#include "command/command.h"
#include "server/server_context.h"

namespace mongosim::server {

inline constexpr int32_t kMinWireVersion = 0;
// MongoDB 7.0 (docs/mongodb-behaviour.md, Personality and limits).
inline constexpr int32_t kMaxWireVersion = 21;
inline constexpr int32_t kLogicalSessionTimeoutMinutes = 30;

bson::Document hello_reply(ServerContext& server, const CommandContext& ctx);

void register_hello(ServerContext& server);

}  // namespace mongosim::server
