// The administrative and test-only commands the server core owns (docs/mongodb-behaviour.md:
// Routine commands; Status and initiation; Fail points): ping, buildInfo, endSessions,
// killAllSessions, serverStatus, getParameter, setParameter, configureFailPoint, hostInfo,
// getCmdLineOpts, connectionStatus, replSetInitiate, replSetGetStatus, replSetGetConfig, and
// mongosim's test-only mongosimSetClockOffset. Data commands are registered by the data layer.
//
// Thread rules: handlers run on connection threads and read only thread-safe state.
#pragma once

#include "server/server_context.h"

namespace mongosim::server {

// The version this server claims (buildInfo, serverStatus), MongoDB 7.0 (docs/mongodb-behaviour.md,
// Personality and limits).
inline constexpr const char* kVersionString = "7.0.14";
inline constexpr int32_t kVersionArray[4] = {7, 0, 14, 0};

// Registers every command above plus hello; each is allowed in any member state.
void register_admin_commands(ServerContext& server);

}  // namespace mongosim::server
