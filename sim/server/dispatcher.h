// Runs one command from a connection (docs/mongodb-behaviour.md: Reply envelope; Non-primary
// answers; Sessions; Fail points): resolves the command name, records handshake metadata, applies
// failCommand in mongod's order, checks the member state, parses the write concern and session
// fields, runs the handler, waits for the write concern and wraps the result in the reply envelope.
// Counts every command in ServerMetrics.
//
// Thread rules: one Dispatcher is shared by every connection thread; its only state is the
// ServerContext (thread-safe) and the caller's ConnectionState (owned by that thread).
#pragma once

#include <cstdint>
#include <string>

#include "bson/value.h"
#include "server/server_context.h"

namespace mongosim::server {

// What a connection remembers between commands.
struct ConnectionState {
  int64_t id = 0;
  std::string remote;    // "ip:port" of the client
  std::string app_name;  // client.application.name from the first hello
  bool metadata_received = false;
  bool hello_ok = false;  // the client sent helloOk: "not primary" wording instead of "not master"
};

struct DispatchRequest {
  std::string db;
  bson::Document body;  // the command, first key is its name
  bool secondary_ok = false;
};

struct DispatchOutcome {
  bson::Document reply;
  bool close_connection = false;  // drop the connection instead of replying
};

class Dispatcher {
 public:
  explicit Dispatcher(ServerContext& server) : server_(server) {}
  DispatchOutcome run(ConnectionState& connection, DispatchRequest request);

 private:
  struct Prepared;
  DispatchOutcome execute(ConnectionState& connection, Prepared& p);
  void finish(Prepared& p, bson::Document& reply, std::optional<int32_t> error_code,
              std::optional<int32_t> wce_code);

  ServerContext& server_;
};

// The body's command name as sent ("$db"-only or empty bodies have none).
std::string command_name_of(const bson::Document& body);

}  // namespace mongosim::server
