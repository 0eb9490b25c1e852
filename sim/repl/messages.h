// The messages replica-set members exchange, as plain values (docs/mongodb-behaviour.md,
// Elections). On the wire they travel as mongod's commands: HeartbeatRequest/Response as
// `replSetHeartbeat` and its reply, VoteRequest/Response as `replSetRequestVotes` and its reply,
// position reports as `replSetUpdatePosition`. Members are named by their index in the config's
// members array (mongod's candidateIndex), not by their _id.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/optime.h"
#include "bson/value.h"
#include "repl/member_state.h"

namespace mongosim::repl {

struct HeartbeatRequest {
  std::string set_name;
  int from_index = -1;
  int64_t term = 0;  // the sender's term: a receiver with a lower term adopts it
  int64_t config_version = 0;
};

struct HeartbeatResponse {
  std::string set_name;
  int64_t term = 0;
  MemberState state = MemberState::kUnknown;
  OpTime applied;
  OpTime durable;
  OpTime last_committed;  // the sender's majority commit point: secondaries learn it this way
  int64_t config_version = 0;
  int primary_index = -1;  // who the sender believes is primary, -1 if nobody
  int sync_source_index = -1;
  double priority = 0;  // the sender's configured priority, for priority takeover
  // The sender's settings.replicaSetId (none: a config that has none): the set it answers for.
  std::optional<bson::ObjectId> replica_set_id;
};

struct VoteRequest {
  std::string set_name;
  bool dry_run = false;
  int64_t term = 0;  // dry run: the candidate's current term; real: the new term
  int candidate_index = -1;
  int64_t config_version = 0;
  int64_t config_term = -1;
  OpTime last_written;  // candidate's newest oplog entry: the "log up to date" rule
};

struct VoteResponse {
  int64_t term = 0;  // the voter's term after processing the request
  bool vote_granted = false;
  std::string reason;  // why the vote was refused, mongod's wording; empty when granted
};

}  // namespace mongosim::repl
