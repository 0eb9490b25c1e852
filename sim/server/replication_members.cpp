// Member-to-member protocol messages (docs/mongodb-behaviour.md, Elections): heartbeats and vote
// requests this member sends, and the heartbeats, vote requests and position updates it answers.
#include "base/error_codes.h"
#include "base/log.h"
#include "bson/codec.h"
#include "server/member_client.h"
#include "server/replication.h"
#include "server/replication_fields.h"

namespace mongosim::server {

using namespace replication_fields;

MemberReply ReplicationCoordinator::member_command(const std::string& host, bson::Document command,
                                                   int64_t timeout_ms) {
  {
    std::lock_guard lock(mutex_);
    if (topology_) {
      if (const auto& id = topology_->config().settings.replica_set_id) {
        command.append("replicaSetId", bson::Value::object_id(*id));
      }
    }
  }
  return run_member_command(host, "admin", command, timeout_ms);
}

namespace {

// 93 when `body` carries another replicaSetId than `ours` (none known: nothing to compare), 2 when
// it carries one that is not an ObjectId.
void refuse_other_id(const bson::Document& body, const std::optional<bson::ObjectId>& ours) {
  const bson::Value* v = body.get("replicaSetId");
  if (v == nullptr) return;
  if (v->type() != bson::Type::kObjectId) {
    throw CommandError(code::kBadValue, "replicaSetId must be an ObjectId, not " +
                                            bson::to_json(bson::Document{{"replicaSetId", *v}}));
  }
  if (ours && !(*ours == v->as_object_id())) {
    throw CommandError(code::kInvalidReplicaSetConfig,
                       "replica set IDs do not match, ours: " + ours->hex() +
                           "; remote node's: " + v->as_object_id().hex());
  }
}

}  // namespace

void ReplicationCoordinator::refuse_other_set(const bson::Document& body) const {
  // The installed config's id, not the topology's: the topology is built on the next tick after
  // an initiate, a restore or a config learned by heartbeat, and a command in between is ours
  // to refuse too.
  const ReplicaSnapshot snap = server_.replica.snapshot();
  refuse_other_id(body, snap.config ? snap.config->settings.replica_set_id : std::nullopt);
}

void ReplicationCoordinator::require_topology_of_this_set(const bson::Document& body) {
  if (!ensure_topology()) {
    throw CommandError(code::kNotYetInitialized, "no replset config has been received");
  }
  std::lock_guard lock(mutex_);
  refuse_other_id(body, topology_->config().settings.replica_set_id);
}

void ReplicationCoordinator::send_heartbeat(int target) {
  bson::Document cmd;
  std::string host;
  {
    std::lock_guard lock(mutex_);
    repl::HeartbeatRequest req = topology_->make_heartbeat_request();
    host = topology_->config().members[static_cast<size_t>(target)].host;
    cmd = bson::Document{{"replSetHeartbeat", bson::V(req.set_name)},
                         {"fromIndex", bson::V(int32_t{req.from_index})},
                         {"term", bson::V(req.term)},
                         {"configVersion", bson::V(req.config_version)},
                         {"config", bson::V(topology_->config().to_document())}};
  }
  MemberReply reply = member_command(host, std::move(cmd), kMemberCommandTimeoutMs);
  if (!reply_ok(reply)) return;
  const bson::Document& b = *reply.body;
  repl::HeartbeatResponse resp;
  resp.set_name = string_field(b, "setName");
  resp.term = term_field(b, "term", 0);
  resp.state = static_cast<MemberState>(int32_field(b, "state", 6));
  resp.applied = optime_field(b, "appliedOpTime");
  resp.durable = optime_field(b, "durableOpTime");
  resp.last_committed = optime_field(b, "lastCommittedOpTime");
  resp.config_version = int_field(b, "configVersion", 0);
  resp.primary_index = int32_field(b, "primaryIndex", -1);
  resp.sync_source_index = int32_field(b, "syncSourceIndex", -1);
  const bson::Value* priority = b.get("priority");
  resp.priority = priority != nullptr && priority->is_number() ? priority->number_as_double() : 0;
  if (const bson::Value* id = b.get("replicaSetId");
      id != nullptr && id->type() == bson::Type::kObjectId) {
    resp.replica_set_id = id->as_object_id();
  }
  Actions actions;
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    if (topology_->is_other_set(resp.replica_set_id)) {
      // The topology ignores it (silence): mongod marks such a member down with this message.
      log_event(
          Severity::kWarning, "REPL", 4615620, "ReplCoord-heartbeat",
          "replica set IDs do not match",
          bson::Document{{"target", bson::V(host)},
                         {"ours", bson::V(topology_->config().settings.replica_set_id->hex())},
                         {"remote", bson::V(resp.replica_set_id->hex())}});
    }
    topology_->on_heartbeat_response(now_ms(), target, resp);
    actions = drain_locked();
  }
  perform(std::move(actions));
}

void ReplicationCoordinator::send_vote_request(int target, const repl::VoteRequest& request) {
  std::string host;
  {
    std::lock_guard lock(mutex_);
    host = topology_->config().members[static_cast<size_t>(target)].host;
  }
  bson::Document cmd{{"replSetRequestVotes", bson::V(int32_t{1})},
                     {"setName", bson::V(request.set_name)},
                     {"dryRun", bson::V(request.dry_run)},
                     {"term", bson::V(request.term)},
                     {"candidateIndex", bson::V(int32_t{request.candidate_index})},
                     {"configVersion", bson::V(request.config_version)},
                     {"configTerm", bson::V(request.config_term)},
                     {"lastWrittenOpTime", bson::V(request.last_written.to_document())}};
  MemberReply reply = member_command(host, std::move(cmd), kMemberCommandTimeoutMs);
  if (!reply_ok(reply)) {
    // Silence to the topology (the election waits for its deadline); the log says which voter
    // and why (no answer within kMemberCommandTimeoutMs, or an error reply), so a set that
    // fails to elect can be read afterwards. It may come after the election has ended.
    std::string error = reply.body ? string_field(*reply.body, "errmsg") : reply.error;
    log_event(Severity::kInfo, "ELECTION", log_id::kVoteRequestFailed, "replication",
              "Vote request failed",
              bson::Document{{"host", bson::V(host)},
                             {"dryRun", bson::V(request.dry_run)},
                             {"term", bson::V(request.term)},
                             {"error", bson::V(error)}});
    return;
  }
  repl::VoteResponse resp;
  resp.term = term_field(*reply.body, "term", 0);
  resp.vote_granted = bool_field(*reply.body, "voteGranted");
  resp.reason = string_field(*reply.body, "reason");
  Actions actions;
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    topology_->on_vote_response(now_ms(), target, request, resp);
    actions = drain_locked();
  }
  perform(std::move(actions));
}

bson::Document ReplicationCoordinator::handle_heartbeat(const bson::Document& body) {
  ReplicaSnapshot snap = server_.replica.snapshot();
  if (!snap.replication_enabled) {
    throw CommandError(code::kNoReplicationEnabled, "not running with --replSet");
  }
  if (!snap.config) {
    if (const bson::Value* config = body.get("config");
        config != nullptr && config->is_document()) {
      repl::ReplSetConfig learned = repl::parse_repl_set_config(config->as_document());
      // Only the config of the set the heartbeat names: one whose id is not the sender's own
      // would be joined by a command then refused (93) for that very id.
      refuse_other_id(body, learned.settings.replica_set_id);
      server_.replica.install_config(std::move(learned));
    }
  }
  require_topology_of_this_set(body);
  repl::HeartbeatRequest req;
  req.set_name = string_field(body, "replSetHeartbeat");
  req.from_index = int32_field(body, "fromIndex", -1);
  req.term = term_field(body, "term", 0);
  req.config_version = int_field(body, "configVersion", 0);
  repl::HeartbeatResponse resp;
  Actions actions;
  double priority = 0;
  {
    std::lock_guard lock(mutex_);
    if (req.from_index < 0 || req.from_index >= topology_->config().member_count() ||
        req.set_name != topology_->config().set_name) {
      throw CommandError(code::kBadValue, "replSetHeartbeat: unknown sender or set name");
    }
    resp = topology_->on_heartbeat_request(now_ms(), req);
    priority = resp.priority;
    actions = drain_locked();
  }
  perform(std::move(actions));
  bson::Document reply{{"setName", bson::V(resp.set_name)},
                       {"term", bson::V(resp.term)},
                       {"state", bson::V(static_cast<int32_t>(resp.state))},
                       {"appliedOpTime", bson::V(resp.applied.to_document())},
                       {"durableOpTime", bson::V(resp.durable.to_document())},
                       {"lastCommittedOpTime", bson::V(resp.last_committed.to_document())},
                       {"configVersion", bson::V(resp.config_version)},
                       {"primaryIndex", bson::V(int32_t{resp.primary_index})},
                       {"syncSourceIndex", bson::V(int32_t{resp.sync_source_index})},
                       {"priority", bson::V(priority)}};
  // mongod sends it in the reply's $replData; the sender ignores an answer for another set.
  if (resp.replica_set_id) {
    reply.append("replicaSetId", bson::Value::object_id(*resp.replica_set_id));
  }
  return reply;
}

bson::Document ReplicationCoordinator::handle_request_votes(const bson::Document& body) {
  require_topology_of_this_set(body);
  repl::VoteRequest req;
  req.set_name = string_field(body, "setName");
  req.dry_run = bool_field(body, "dryRun");
  req.term = term_field(body, "term", 0);
  req.candidate_index = int32_field(body, "candidateIndex", -1);
  req.config_version = int_field(body, "configVersion", 0);
  req.config_term = term_field(body, "configTerm", -1);
  req.last_written = optime_field(body, "lastWrittenOpTime");
  repl::VoteResponse resp;
  Actions actions;
  {
    std::lock_guard lock(mutex_);
    if (req.candidate_index < 0 || req.candidate_index >= topology_->config().member_count()) {
      throw CommandError(code::kBadValue, "replSetRequestVotes: candidateIndex out of range");
    }
    resp = topology_->on_vote_request(now_ms(), req);
    actions = drain_locked();
  }
  perform(std::move(actions));
  return bson::Document{{"term", bson::V(resp.term)},
                        {"voteGranted", bson::V(resp.vote_granted)},
                        {"reason", bson::V(resp.reason)}};
}

bson::Document ReplicationCoordinator::handle_update_position(const bson::Document& body) {
  require_topology_of_this_set(body);
  int from = int32_field(body, "fromIndex", -1);
  Actions actions;
  {
    std::lock_guard lock(mutex_);
    if (from < 0 || from >= topology_->config().member_count()) {
      throw CommandError(code::kBadValue, "replSetUpdatePosition: fromIndex out of range");
    }
    // The reporter's term: a report from a member already in a newer term must not count
    // toward this (stale) primary's commit point; it steps the primary down instead.
    topology_->on_position_update(now_ms(), from, term_field(body, "term", 0),
                                  optime_field(body, "appliedOpTime"),
                                  optime_field(body, "durableOpTime"));
    actions = drain_locked();
  }
  perform(std::move(actions));
  return bson::Document{};
}

}  // namespace mongosim::server
