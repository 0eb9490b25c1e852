#include "server/hello.h"

#include "server/wire.h"

namespace mongosim::server {

namespace {

void append_limits(bson::Document& reply, ServerContext& server, const CommandContext& ctx) {
  reply.append("maxBsonObjectSize", bson::V(kMaxBsonObjectBytes));
  reply.append("maxMessageSizeBytes", bson::V(kMaxMessageBytes));
  reply.append("maxWriteBatchSize", bson::V(kMaxWriteBatchSize));
  reply.append("localTime", bson::Value::date(server.clock.now_ms()));
  reply.append("logicalSessionTimeoutMinutes", bson::V(kLogicalSessionTimeoutMinutes));
  reply.append("connectionId", bson::V(static_cast<int32_t>(ctx.connection_id)));
  reply.append("minWireVersion", bson::V(kMinWireVersion));
  reply.append("maxWireVersion", bson::V(kMaxWireVersion));
  reply.append("readOnly", bson::V(false));
}

bson::Document last_write(ServerContext& server, const ReplicaSnapshot& replica) {
  OpTime applied = server.effective_last_applied();
  int64_t date_ms = server.last_write_date_ms();
  if (date_ms == 0) date_ms = replica.election_date_ms;
  // One member: everything applied is majority-committed; a larger set has a commit point.
  OpTime majority = replica.majority_optime.value_or(applied);
  return bson::Document{{"opTime", bson::V(applied.to_document())},
                        {"lastWriteDate", bson::Value::date(date_ms)},
                        {"majorityOpTime", bson::V(majority.to_document())},
                        {"majorityWriteDate", bson::Value::date(date_ms)}};
}

void append_set_fields(bson::Document& reply, ServerContext& server, const ReplicaSnapshot& replica,
                       const char* writable_key) {
  const repl::ReplSetConfig& config = *replica.config;
  bson::Array hosts;
  for (const auto& m : config.members) hosts.push_back(bson::V(m.host));
  reply.append("hosts", bson::V(std::move(hosts)));
  reply.append("setName", bson::V(config.set_name));
  reply.append("setVersion", bson::V(static_cast<int32_t>(config.version)));
  bool primary = replica.state == MemberState::kPrimary;
  reply.append(writable_key, bson::V(primary));
  reply.append("secondary", bson::V(replica.state == MemberState::kSecondary));
  if (primary) {
    reply.append("primary", bson::V(replica.self_host));
  } else if (!replica.primary_host.empty()) {
    reply.append("primary", bson::V(replica.primary_host));
  }
  reply.append("me", bson::V(replica.self_host));
  if (primary)
    reply.append("electionId", bson::Value::object_id(election_id_for_term(replica.term)));
  reply.append("lastWrite", bson::V(last_write(server, replica)));
}

}  // namespace

bson::Document hello_reply(ServerContext& server, const CommandContext& ctx) {
  bool legacy = ctx.body.first_key() != "hello";
  const char* writable_key = legacy ? "ismaster" : "isWritablePrimary";
  bson::Document reply;
  if (const bson::Value* ok = ctx.body.get("helloOk"); ok != nullptr && ok->truthy()) {
    reply.append("helloOk", bson::V(true));
  }
  ReplicaSnapshot replica = server.replica.snapshot();
  if (!replica.replication_enabled) {
    reply.append(writable_key, bson::V(true));
  } else if (!replica.config) {
    // An uninitiated member is an RSGhost to drivers (docs/mongodb-behaviour.md, Hello).
    reply.append(writable_key, bson::V(false));
    reply.append("secondary", bson::V(false));
    reply.append("info", bson::V("Does not have a valid replica set config"));
    reply.append("isreplicaset", bson::V(true));
  } else {
    append_set_fields(reply, server, replica, writable_key);
  }
  append_limits(reply, server, ctx);
  return reply;
}

void register_hello(ServerContext& server) {
  CommandSpec spec;
  spec.name = "hello";
  spec.aliases = {"isMaster", "ismaster"};
  spec.handler = [&server](CommandContext& ctx) { return hello_reply(server, ctx); };
  spec.any_member_state = true;
  server.registry.add(std::move(spec));
}

}  // namespace mongosim::server
