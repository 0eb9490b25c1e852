// The members the fuzz targets serve their inputs on, wired as the mongosim program wires one
// (sim/main.cpp, server/member_store.h) but never listening for clients: a standalone, and a
// replica-set member (store, replication-state lock, replication coordinator and its threads)
// configured by a replSetInitiate its owner sends ahead of an input. And the one way an input
// reaches a member: serve_connection, one client connection on a socketpair, bounded by
// kServeBudgetMs.
//
// Invariants: a set member's own host is 127.0.0.1:1 (ServerOptions::port 1), a port nothing in
// the fuzzers listens on, so nothing it sends to its own host reaches another process; its cursor
// ids follow kCursorIdSeed.
// Thread rules: a member is built, served and destroyed by one thread; serve_connection runs
// the connection on the calling thread with a writer, a reader and a watchdog thread of its own,
// all joined before it returns.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "base/repl_state_lock.h"
#include "bson/value.h"
#include "data/store.h"
#include "server/replication.h"
#include "server/server.h"

namespace mongosim::fuzz {

// Log lines off and SIGPIPE ignored, once per process.
void silence_once();

// A standalone server with the data layer's commands, as sim/main.cpp builds one without
// --replSet.
struct Standalone {
  Standalone();
  ~Standalone();
  Standalone(const Standalone&) = delete;
  Standalone& operator=(const Standalone&) = delete;
  server::ServerContext& context() { return server.context(); }

  server::Server server;
  ReplStateLock repl_state_lock;
  data::Store store;
};

// A member of replica set "fuzz" at 127.0.0.1:1, not yet initiated.
struct SetMember {
  SetMember();
  ~SetMember();
  SetMember(const SetMember&) = delete;
  SetMember& operator=(const SetMember&) = delete;
  server::ServerContext& context() { return server.context(); }

  server::Server server;
  ReplStateLock repl_state_lock;
  data::Store store;
  server::ReplicationCoordinator replication;
};

// The OP_MSG replSetInitiate of `config` (an empty document: this member alone).
std::string initiate_message(const bson::Document& config);

// Serves `prefix` then `data` as one client connection on `ctx`'s member, until the member has
// read to the end and replied, or kServeBudgetMs passed (then the member is shut down, which must
// end every wait, and the rest is not served). Keeps at most kMaxReplyBytes of the replies in
// `replies` (null: read and dropped).
void serve_connection(server::ServerContext& ctx, const std::string& prefix, const uint8_t* data,
                      size_t size, std::string* replies);

}  // namespace mongosim::fuzz
